// The loopback server's HTTP plumbing, apart from what it serves: reading a body within its limit,
// writing a frame and waiting for the client to take it (or to leave, or to stop reading), errors in the
// vendor's envelope, and the live proxy's fetch that never follows a redirect off the provider's origin.

import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Vendor } from '../catalog.ts'
import { apiError } from './exchange.ts'
import type { MockHttpRequest } from './request.ts'
import { redactText } from './serve-safety.ts'

/** Whether the client's connection closed before its answer was done, and who to tell when it does. */
export interface Departure {
  gone: boolean
  /** Called once, when the connection closes (set by whoever waits on it). */
  onGone: (() => void) | undefined
}

/** Watch a response for its connection closing before the response finished. */
export function watchDeparture(outgoing: ServerResponse): Departure {
  const departure: Departure = { gone: false, onGone: undefined }
  outgoing.once('close', () => {
    if (outgoing.writableFinished) return
    departure.gone = true
    departure.onGone?.()
  })
  return departure
}

/**
 * Write one frame and wait until the client's connection took it: `sent`, or `closed` when the connection
 * closed or failed first, or `stalled` when the client took nothing for `timeoutMs` (it stopped reading).
 */
export function deliver(
  outgoing: ServerResponse,
  frame: Uint8Array,
  departure: Departure,
  timeoutMs: number,
): Promise<'sent' | 'closed' | 'stalled'> {
  if (departure.gone) return Promise.resolve('closed')
  return new Promise((resolve) => {
    let settled = false
    const settle = (outcome: 'sent' | 'closed' | 'stalled') => {
      // A late callback of a write already given up on changes nothing.
      if (settled) return
      settled = true
      clearTimeout(timer)
      departure.onGone = undefined
      resolve(outcome)
    }
    const timer = setTimeout(() => settle('stalled'), timeoutMs)
    departure.onGone = () => settle('closed')
    outgoing.write(frame, (error) => settle(error ? 'closed' : 'sent'))
  })
}

/**
 * A POST as its endpoint reads it when the server hands its parsed body over: the URL as a fetch `Request`
 * would serialize it (dispatch matches on it), the server's headers, and the body text should anything
 * ask for it again, read as a `Request` reads it.
 */
export function handedRequest(url: string, headers: Headers, body: Buffer): MockHttpRequest {
  return { method: 'POST', url: new URL(url).href, headers, json: () => new Response(body).json() }
}

/** A text body's frames as a reader: one frame, none when the text is empty (as a `Response`'s stream). */
export function textReader(text: string): Pick<ReadableStreamDefaultReader<Uint8Array>, 'read' | 'cancel'> {
  let frame: Uint8Array | undefined = text === '' ? undefined : Buffer.from(text, 'utf8')
  return {
    read: async () => {
      const value = frame
      frame = undefined
      return value === undefined ? { done: true, value: undefined } : { done: false, value }
    },
    cancel: async () => {
      frame = undefined
    },
  }
}

/** A refusal with every one of `secrets` in its body redacted; its status and headers as they were. */
export async function withoutEchoedKeys(response: Response, secrets: readonly string[]): Promise<Response> {
  const text = await response.text()
  return new Response(redactText(text, secrets), { status: response.status, headers: response.headers })
}

export const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'content-encoding',
])

/**
 * The request body, or `too-large` past `limit` bytes (by its declared length, or as it arrives). A
 * refused body is read to its end and dropped, not kept: the client then reads its 413 rather than a
 * connection reset in the middle of its upload.
 */
export function readBody(incoming: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const declared = Number(incoming.headers['content-length'])
  let over = Number.isFinite(declared) && declared > limit
  const parts: Buffer[] = []
  let size = 0
  return new Promise((resolve, reject) => {
    incoming.on('data', (part: Buffer) => {
      if (over) return
      size += part.length
      if (size <= limit) parts.push(part)
      else {
        over = true
        parts.length = 0
      }
    })
    incoming.once('end', () => resolve(over ? 'too-large' : Buffer.concat(parts)))
    incoming.once('error', reject)
  })
}

/** What a 413 for a body past the limit says (in the vendor's envelope: Anthropic's `request_too_large`). */
export function tooLarge(limit: number): string {
  return `Request exceeds the maximum allowed number of bytes (${limit}; cachelab serve --max-body).`
}

/**
 * An error the server answers itself, in the envelope of the vendor whose prefix the path is under. A path
 * under no vendor's prefix (or a control path) has no vendor; it gets Anthropic's envelope, which names the
 * error's type and message as every other client reads them.
 */
export function writeError(
  outgoing: ServerResponse,
  vendor: Vendor | undefined,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const error = apiError(vendor ?? 'anthropic', status, message)
  writeJson(outgoing, status, error.body, { ...error.headers, ...headers })
}

/** The same error as a `Response`, for answers that go through the exchange's recording. */
export function errorResponse(vendor: Vendor, status: number, message: string, type?: string): Response {
  const error = apiError(vendor, status, message, type)
  return new Response(JSON.stringify(error.body), {
    status,
    headers: { 'content-type': 'application/json', ...error.headers },
  })
}

export function writeJson(
  outgoing: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  outgoing.writeHead(status, { 'content-type': 'application/json', ...headers })
  outgoing.end(JSON.stringify(body))
}

/** A redirect status: the answer points elsewhere (with a `location`). */
const REDIRECTS = new Set([301, 302, 303, 307, 308])

/**
 * Why a live upstream's answer is not passed on, when it is a redirect fetchSameOrigin did not follow:
 * to another origin, one that would drop the method and body, or past the hop limit. The words name the
 * origins only (a URL's path or query may hold a key).
 */
export function redirectOf(response: Response, url: string): string | undefined {
  if (!REDIRECTS.has(response.status)) return undefined
  const location = response.headers.get('location')
  const from = new URL(url)
  let to: string
  try {
    to = location === null ? 'nowhere (no location)' : new URL(location, from).origin
  } catch {
    to = 'an unreadable location'
  }
  return `the upstream ${from.origin} answered ${response.status}, a redirect to ${to === from.origin ? 'its own origin that the proxy does not follow' : to}; a redirect is never passed on, so a client's key never follows it`
}

/**
 * Why a live upstream gave no answer: the failure's code (refused, no such host, a TLS or timeout error)
 * and the upstream's origin, never its path or query.
 */
export function unreachable(url: string, error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause
  const code = typeof cause?.code === 'string' ? cause.code : undefined
  const message =
    typeof cause?.message === 'string'
      ? cause.message
      : error instanceof Error
        ? error.message
        : String(error)
  // A message may quote the URL whole (credentials, a key in the query): only its origin is kept.
  const reason = code ?? message.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, originOf)
  return `the upstream ${originOf(url)} could not be reached (${reason})`
}

/** A URL's origin (no credentials, path or query), or a placeholder for text that is not one. */
function originOf(url: string): string {
  try {
    const origin = new URL(url).origin
    return origin === 'null' ? '[url]' : origin
  } catch {
    return '[url]'
  }
}

/** Redirects the live proxy follows itself, within the upstream's origin. */
const MAX_REDIRECTS = 5

/**
 * A provider request that follows a redirect only within the upstream's origin, and only one that keeps
 * the method and body (307, 308): the caller's key never travels to another host. Any other redirect is
 * returned as it came, for the caller to refuse (redirectOf).
 */
export async function fetchSameOrigin(url: string, init: RequestInit): Promise<Response> {
  let target = new URL(url)
  for (let hop = 0; ; hop += 1) {
    const response = await fetch(target, { ...init, redirect: 'manual' })
    const location = response.headers.get('location')
    if ((response.status !== 307 && response.status !== 308) || location === null || hop === MAX_REDIRECTS)
      return response
    const next = new URL(location, target)
    if (next.origin !== target.origin) return response
    await response.body?.cancel()
    target = next
  }
}
