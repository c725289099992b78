// cachelab's own endpoints on the loopback server, under `/cachelab/` (outside every vendor prefix): the
// virtual clock, read with `GET /cachelab/clock` and moved with `POST /cachelab/clock {"advance": s}`, and
// the server's health, `GET /cachelab/health`.

import type { MockContext } from './context.ts'

/** The path prefix of the control endpoints. */
export const CONTROL_PREFIX = '/cachelab'

/** The clock endpoint's path. */
export const CLOCK_PATH = `${CONTROL_PREFIX}/clock`

/** The health endpoint's path. */
export const HEALTH_PATH = `${CONTROL_PREFIX}/health`

/** What the health endpoint answers: whether the server takes requests, its load and its memory. */
export interface HealthState {
  /** `ok` while serving; `draining` once shutdown began (in-flight requests finish, new ones are refused). */
  status: 'ok' | 'draining'
  upstream: 'sim' | 'live'
  uptimeSeconds: number
  /** Requests answered since start, and the ones being answered now. */
  requests: { served: number; inFlight: number }
  memory: {
    rssBytes: number
    heapUsedBytes: number
    /** `serve --memory-budget`, when the server has one. */
    budgetBytes?: number
    /**
     * Estimated bytes of the simulators' tries, how often they were pruned, the nodes removed, and of
     * those the entries evicted while still live (the budget was passed with nothing left expired).
     */
    simulator?: { bytes: number; prunes: number; removed: number; evicted: number; overBudget: boolean }
    /** Estimated bytes of the token-count memo. */
    tokenMemoBytes?: number
    /** Requests whose fingerprints the cache diagnostics can name, and their estimated bytes. */
    fingerprints?: { requests: number; bytes: number }
    /** Captured sessions remembered and the estimated bytes of their previous requests. */
    capture?: { sessions: number; bytes: number }
  }
}

/** What the clock endpoint answers: the virtual time now and all the time added by advances. */
export interface ClockState {
  /** Virtual time, seconds since the server started (plus every advance). */
  now: number
  /** Seconds added by advances in all. */
  advanced: number
}

/** A control endpoint's answer, for the server to write. */
export interface ControlAnswer {
  status: number
  body: unknown
  headers?: Record<string, string>
}

/** Whether a request path is a control endpoint's (it is then never a provider API's). */
export function isControlPath(path: string): boolean {
  const route = path.split('?')[0] ?? ''
  return route === CONTROL_PREFIX || route.startsWith(`${CONTROL_PREFIX}/`)
}

/**
 * Answer a control request. `context` is the simulated providers' state; without it (a live upstream)
 * there is no virtual clock. `body` is the request body as sent, if any.
 */
export function handleControl(
  method: string,
  path: string,
  body: string | undefined,
  context: MockContext | undefined,
  health?: () => HealthState,
): ControlAnswer {
  const route = (path.split('?')[0] ?? '').replace(/\/$/, '')
  if (route === HEALTH_PATH) {
    if (method !== 'GET' && method !== 'HEAD')
      return {
        ...problem(405, 'invalid_request_error', `${HEALTH_PATH} takes GET, not ${method}`),
        headers: { allow: 'GET' },
      }
    const state = health?.()
    if (state === undefined) return problem(404, 'not_found_error', 'this server reports no health')
    // A draining server answers 503, so a load balancer or a wait loop stops sending to it.
    return { status: state.status === 'ok' ? 200 : 503, body: state }
  }
  if (route !== CLOCK_PATH)
    return problem(
      404,
      'not_found_error',
      `no cachelab endpoint at ${method} ${path}; try GET or POST ${CLOCK_PATH}, or GET ${HEALTH_PATH}`,
    )
  if (context === undefined)
    return problem(
      404,
      'not_found_error',
      'there is no virtual clock with --upstream live: the real providers keep real time',
    )
  if (method === 'GET' || method === 'HEAD') return { status: 200, body: clockState(context) }
  if (method !== 'POST')
    return {
      ...problem(405, 'invalid_request_error', `${CLOCK_PATH} takes GET or POST, not ${method}`),
      headers: { allow: 'GET, POST' },
    }
  const seconds = advanceOf(body)
  if (typeof seconds === 'string') return problem(400, 'invalid_request_error', seconds)
  context.advance(seconds)
  return { status: 200, body: clockState(context) }
}

/** The seconds a POST asks to advance by, or what is wrong with it. */
function advanceOf(body: string | undefined): number | string {
  const usage = `POST ${CLOCK_PATH} takes {"advance": seconds}, a number of zero or more`
  let value: unknown
  try {
    value = JSON.parse(body ?? '')
  } catch {
    return `${usage}; the body is not JSON`
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return usage
  const fields = Object.keys(value)
  const advance = (value as { advance?: unknown }).advance
  if (fields.some((field) => field !== 'advance')) return `${usage}, and no other field`
  if (typeof advance !== 'number' || !Number.isFinite(advance) || advance < 0)
    return `${usage} (the clock never runs backwards), not ${JSON.stringify(advance)}`
  return advance
}

function clockState(context: MockContext): ClockState {
  return { now: context.now(), advanced: context.advanced }
}

function problem(status: number, type: string, message: string): ControlAnswer {
  return { status, body: { type: 'error', error: { type, message } } }
}
