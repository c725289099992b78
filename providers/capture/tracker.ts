// Captured traffic as exchanges: each request a client sent, told into its session, placed in the
// session (turn, step, attempt), with the usage the client received, the simulator's view of it (the
// counts it served, or live its prediction), and the request's digest. The tracker also hands a
// simulation the previous request of the session, so every captured step has its counterfactual.

import type { AssistantMessage, ProviderId, Usage } from '../../harness/types.ts'
import type {
  Counterfactual,
  PreviousRequest,
  Prompt,
  Shortfall,
  SimCounts,
  Simulation,
} from '../sim/types.ts'
import { type BuiltInWireApi, compatibleProviderOfApi, isBuiltInApi, type WireApi } from '../types.ts'
import {
  contentHash,
  digestRequest,
  type ItemDigest,
  itemDigest,
  itemsOf,
  type RequestDigest,
} from './digest.ts'
import { type IdentitySource, type Resolution, SessionResolver } from './identity.ts'

/** The simulator's view of one captured request. */
export interface SimulatedView {
  counts: SimCounts
  /** The read had it extended the previous request unchanged (absent on a session's first request). */
  counterfactual?: Counterfactual
  shortfall?: Shortfall
  /** True when the usage came from the real provider and these counts are the simulator's prediction. */
  predicted: boolean
}

/** One request of a capture, as `cachelab report` and the recorder read it. */
export interface CapturedExchange {
  /** Order of the request in the capture, from 1. */
  seq: number
  session: string
  /** How the session was told: the header, the body's conversation key, or continuation of a conversation. */
  identity: IdentitySource
  /** Wall-clock time of the request, ISO 8601. */
  time: string
  /** Seconds since the capture began (or the request's virtual time). */
  at: number
  api: WireApi
  provider: ProviderId
  model: string
  stream: boolean
  status: number
  latencyMs: number
  turn: number
  step: number
  /** 0 for a first attempt; a request identical to a failed one before it is its next attempt. */
  attempt: number
  /** The usage the client received, normalized (`raw`: the provider's object as sent); absent for a failed attempt. */
  usage?: Usage
  simulation?: SimulatedView
  digest: RequestDigest
  /** Why a failed attempt failed (status and the provider's error type, never a key). */
  error?: string
  /** The request body (`--record-bodies` only). */
  request?: Record<string, unknown>
  /** The response text as sent (`--record-bodies` only). */
  response?: string
  /** The model's answer (text and tool calls), kept from a live provider so `serve --replay` can serve it again. */
  answer?: AssistantMessage
}

/** What the server knows about one request once it has answered. */
export interface ExchangeInput {
  resolution: Resolution
  api: WireApi
  body: Record<string, unknown>
  at: number
  time?: string
  status: number
  latencyMs: number
  stream: boolean
  usage?: Usage
  /** The simulation that served the request, or live the prediction. */
  simulation?: Simulation
  predicted: boolean
  error?: string
  /** The response text, kept only when bodies are. */
  response?: string
  /** The model's answer, kept only when answers are. */
  answer?: AssistantMessage
}

interface SessionState {
  /** The latest successful request's prompt and machine: the next simulation's previous request. */
  previous?: PreviousRequest
  /** The latest request: a retry repeats it after it failed. */
  last?: { fingerprint: string; ok: boolean }
  /** The latest user turn's item: a request with another one opens a new turn. */
  turnKey?: string
  turn: number
  step: number
  attempt: number
}

export interface TrackerOptions {
  /** The simulator's linearization of a body (for a request that failed before simulation). */
  linearize: (api: WireApi, body: Record<string, unknown>) => Prompt
  /** Keep request bodies and response texts in the exchanges. */
  keepBodies?: boolean
  /** Keep the model's answers (a live capture, for replay). */
  keepAnswers?: boolean
  /** Called with every exchange, in order. */
  sink?: (exchange: CapturedExchange) => void
  /**
   * Estimated bytes of previous requests kept for counterfactuals (serve's memory budget): past it, the
   * least recently active sessions forget theirs, and their next request has no counterfactual.
   * Unbounded when absent.
   */
  memoryBytes?: number
  /** Sessions whose turn and step are remembered; the least recently active are forgotten first (default 100,000). */
  sessionLimit?: number
}

/** Estimated bytes a previous request holds: its segments' objects and texts. */
function promptBytes(prompt: Prompt): number {
  let bytes = 64 + 16 * prompt.segments.length
  for (const segment of prompt.segments) bytes += 96 + 2 * (segment.text.length + segment.frame.length)
  return bytes
}

const PROVIDER_OF_API: Readonly<Record<BuiltInWireApi, ProviderId>> = {
  'anthropic-messages': 'anthropic',
  'openai-chat': 'openai-chat',
  'openai-responses': 'openai-responses',
  'deepseek-chat': 'deepseek',
  'bedrock-converse': 'bedrock',
  'gemini-generate': 'gemini',
}

/** The provider id of a wire API. */
export function providerOfApi(api: WireApi): ProviderId {
  return isBuiltInApi(api) ? PROVIDER_OF_API[api] : compatibleProviderOfApi(api)
}

/** Sessions whose position (turn, step, attempt) is remembered by default. */
const SESSIONS_KEPT = 100_000

/** Response ids remembered for `previous_response_id` chaining (as many as the mock stores). */
const RESPONSE_IDS_KEPT = 10_000

const EMPTY_PROMPT: Prompt = { segments: [], cumulative: [], trailing: 0, total: 0 }

/** The key of a request's turn: its user turns counted and the latest one's hash. */
function turnKeyOf(items: readonly ItemDigest[]): string {
  const turns = items.filter((item) => item.userTurn)
  return `${turns.length}:${turns.at(-1)?.hash ?? ''}`
}

export class CaptureTracker {
  readonly resolver = new SessionResolver()
  private readonly sessions = new Map<string, SessionState>()
  private readonly options: TrackerOptions
  /** Resolutions by body object, so a request resolved before its simulation keeps its session. */
  private readonly resolutions = new WeakMap<object, Resolution>()
  /** The item digests `resolve` made of a body, reused when it is added (megabytes are hashed once). */
  private readonly itemDigests = new WeakMap<object, readonly ItemDigest[]>()
  private serial = 0
  /** Session by Responses response id, the most recent ones. */
  private readonly responseSessions = new Map<string, string>()
  /** Estimated bytes of the previous requests the sessions hold. */
  private previousBytes = 0
  /** The sessions that hold a previous request, least recently active first. */
  private readonly holders = new Map<string, SessionState>()

  constructor(options: TrackerOptions) {
    this.options = options
  }

  /** The session of a request; the same body object always resolves to the same session. */
  resolve(api: WireApi, declared: string | undefined, body: Record<string, unknown>): Resolution {
    const known = this.resolutions.get(body)
    if (known !== undefined) return known
    // A Responses request that continues a stored response belongs to that response's session.
    const chained =
      declared === undefined && typeof body.previous_response_id === 'string'
        ? this.responseSessions.get(body.previous_response_id)
        : undefined
    const resolution =
      chained !== undefined
        ? ({ session: chained, source: 'conversation-key' } satisfies Resolution)
        : this.resolver.resolve(api, declared, body, this.itemsDigested(body))
    this.resolutions.set(body, resolution)
    return resolution
  }

  /** The digests of a body's items, made once per body object. */
  private itemsDigested(body: Record<string, unknown>): readonly ItemDigest[] {
    let items = this.itemDigests.get(body)
    if (items === undefined) {
      items = itemsOf(body).map(itemDigest)
      this.itemDigests.set(body, items)
    }
    return items
  }

  /** Remember the session a response id was answered in, for requests that chain on it. */
  noteResponse(id: string, session: string): void {
    this.responseSessions.delete(id)
    this.responseSessions.set(id, session)
    if (this.responseSessions.size > RESPONSE_IDS_KEPT) {
      const oldest = this.responseSessions.keys().next().value
      if (oldest !== undefined) this.responseSessions.delete(oldest)
    }
  }

  /** The previous successful request of a session, for its next simulation's counterfactual. */
  previous(session: string): PreviousRequest | undefined {
    return this.sessions.get(session)?.previous
  }

  /** Sessions remembered, and the estimated bytes of the previous requests they hold. */
  get memory(): { sessions: number; bytes: number } {
    return { sessions: this.sessions.size, bytes: this.previousBytes }
  }

  /** Record one answered request. */
  add(input: ExchangeInput): CapturedExchange {
    const { resolution, api, body } = input
    const prompt = input.simulation?.prompt ?? this.linearized(api, body)
    const digest = digestRequest(body, prompt, this.itemsDigested(body))
    this.itemDigests.delete(body)
    const ok = input.status >= 200 && input.status < 300 && input.usage !== undefined
    const state = this.sessions.get(resolution.session) ?? { turn: 0, step: 0, attempt: 0 }
    const fingerprint = contentHash(
      JSON.stringify([
        digest.segments.map((segment) => segment[1]),
        digest.items.map((item) => item.hash),
        digest.config,
      ]),
    )
    const turnKey = turnKeyOf(digest.items)
    if (state.last !== undefined && !state.last.ok && state.last.fingerprint === fingerprint) {
      state.attempt += 1
    } else if (turnKey !== state.turnKey || state.turn === 0) {
      state.turn += 1
      state.step = 1
      state.attempt = 0
    } else {
      state.step += 1
      state.attempt = 0
    }
    state.turnKey = turnKey
    state.last = { fingerprint, ok }
    if (ok && input.simulation !== undefined) {
      const machine = input.simulation.trace.machine
      if (state.previous !== undefined) this.previousBytes -= promptBytes(state.previous.prompt)
      state.previous = {
        prompt: input.simulation.prompt,
        ...(machine !== undefined ? { machine } : {}),
        ...(typeof body.model === 'string'
          ? { model: body.model }
          : typeof body.modelId === 'string'
            ? { model: body.modelId }
            : {}),
      }
      this.previousBytes += promptBytes(state.previous.prompt)
    }
    // Most recently active last: the sessions to forget first come first.
    this.sessions.delete(resolution.session)
    this.sessions.set(resolution.session, state)
    this.holders.delete(resolution.session)
    if (state.previous !== undefined) this.holders.set(resolution.session, state)
    this.bound()
    this.resolver.update(resolution, api, digest.items)
    this.serial += 1
    const simulation = input.simulation
    const model = typeof body.model === 'string' ? body.model : ''
    const exchange: CapturedExchange = {
      seq: this.serial,
      session: resolution.session,
      identity: resolution.source,
      time: input.time ?? new Date().toISOString(),
      at: input.at,
      api,
      provider: providerOfApi(api),
      model,
      stream: input.stream,
      status: input.status,
      latencyMs: input.latencyMs,
      turn: state.turn,
      step: state.step,
      attempt: state.attempt,
      ...(input.usage !== undefined ? { usage: input.usage } : {}),
      ...(simulation !== undefined
        ? {
            simulation: {
              counts: simulation.counts,
              ...(simulation.trace.counterfactual !== undefined
                ? { counterfactual: simulation.trace.counterfactual }
                : {}),
              ...(simulation.trace.shortfall !== undefined ? { shortfall: simulation.trace.shortfall } : {}),
              predicted: input.predicted,
            },
          }
        : {}),
      digest,
      ...(input.error !== undefined ? { error: input.error } : {}),
      ...(this.options.keepBodies === true ? { request: body } : {}),
      ...(this.options.keepBodies === true && input.response !== undefined
        ? { response: input.response }
        : {}),
      ...(this.options.keepAnswers === true && input.answer !== undefined ? { answer: input.answer } : {}),
    }
    this.options.sink?.(exchange)
    return exchange
  }

  /** Forget the least recently active sessions' previous requests, then sessions, past the limits. */
  private bound(): void {
    const limit = this.options.sessionLimit ?? SESSIONS_KEPT
    for (const [session, state] of this.sessions) {
      if (this.sessions.size <= limit) break
      if (state.previous !== undefined) this.previousBytes -= promptBytes(state.previous.prompt)
      this.sessions.delete(session)
      this.holders.delete(session)
    }
    const budget = this.options.memoryBytes ?? Number.POSITIVE_INFINITY
    for (const [session, state] of this.holders) {
      if (this.previousBytes <= budget) break
      if (state.previous !== undefined) this.previousBytes -= promptBytes(state.previous.prompt)
      delete state.previous
      this.holders.delete(session)
    }
  }

  /** A body the simulator never saw, linearized without touching any cache; empty when it cannot be. */
  private linearized(api: WireApi, body: Record<string, unknown>): Prompt {
    try {
      return this.options.linearize(api, body)
    } catch {
      return EMPTY_PROMPT
    }
  }
}
