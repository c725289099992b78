// Captured traffic as exchanges: each request a client sent, placed in its session and conversation
// (turn, step, attempt: `conversations.ts`), with the usage the client received, the simulator's view of
// it (the counts it served, or live its prediction), and the request's digest. The tracker also hands a
// simulation the previous request of the conversation, so every captured step has its counterfactual, and
// while it holds that request's text it keeps what changed at a request that broke the cache (masked).

import type { AssistantMessage } from '../../../harness/types.ts'
import { simulationModel, vendorOf } from '../../../providers/catalog.ts'
import { redactText } from '../../../providers/mock/serve-safety.ts'
import { stringBytes } from '../../../providers/sim/bytes.ts'
import type { CacheSimulators } from '../../../providers/sim/index.ts'
import {
  type PreviousRequest,
  type Prompt,
  type Segment,
  type SimCounts,
  SimulatorRejection,
} from '../../../providers/sim/types.ts'
import { bodyModel, type WireApi } from '../../../providers/types.ts'
import { parseJsonBody } from '../../../providers/wire/body-prefix.ts'
import { cachesOnlyMarked, withCacheMark } from '../../../providers/wire/cache-marks.ts'
import {
  digestRequest,
  type ItemDigest,
  itemDigest,
  itemsOf,
  type RequestDigest,
} from '../../../providers/wire/digest.ts'
import {
  type CapturedExchange,
  type ExchangeInput,
  type ExchangeRecorder,
  type Placement,
  providerOfApi,
} from '../../../providers/wire/exchange.ts'
import { ItemReuse } from '../../../providers/wire/item-reuse.ts'
import type { BreakChange } from '../../types.ts'
import { wireBreak } from '../../wire-attribution.ts'
import { ConversationTracker } from './conversations.ts'

/** What the tracker keeps of a conversation between its requests. */
interface ConversationState {
  /** The latest successful request's prompt and machine: the next simulation's previous request. */
  previous?: PreviousRequest
  /**
   * The latest answered request's digest and prompt, which the next request's break is found against
   * and its change read from (`keepChanges`); its prompt is `previous`'s when it was simulated.
   */
  answered?: { digest: RequestDigest; prompt: Prompt }
  /** Estimated bytes of `previous` and `answered`, counted once when they were kept. */
  previousBytes?: number
}

export interface TrackerOptions {
  /** The simulator's linearization of a body (for a request that failed before simulation). */
  linearize: (api: WireApi, body: Record<string, unknown>) => Prompt
  /** Keep request bodies and response texts in the exchanges. */
  keepBodies?: boolean
  /** Keep the model's answers (a live capture, for replay). */
  keepAnswers?: boolean
  /**
   * Keep what changed at each break (default true): the few words around it, keys masked, found while
   * serving, where the previous request's text is still at hand. False keeps no text at all
   * (`--record-no-text`).
   */
  keepChanges?: boolean
  /** Called with every exchange, in order. */
  sink?: (exchange: CapturedExchange) => void
  /**
   * Estimated bytes of previous requests kept for counterfactuals (serve's memory budget): past it, the
   * least recently active sessions forget theirs, and their next request has no counterfactual.
   * Unbounded when absent.
   */
  memoryBytes?: number
  /** Conversations whose previous request is remembered; the least recently active are forgotten first (default 100,000). */
  sessionLimit?: number
  /**
   * Let `reuseItems` replace a body's items with equal ones of earlier requests (default true): the
   * simulators and digests then skip the history a session sends again. Off, every request is read anew;
   * the numbers are the same either way.
   */
  reuseItems?: boolean
  /**
   * A simulator of its own, for what a request that marked nothing where its provider caches only what is
   * marked would have counted had it marked its prompt (`SimulatedView.marked`). None: not computed.
   */
  shadow?: CacheSimulators
}

/** The model a body names (`model`, Converse `modelId`), as a previous request's field. */
function modelField(body: Record<string, unknown>): { model?: string } {
  const model = bodyModel(body)
  return model === undefined ? {} : { model }
}

/**
 * Estimated bytes a previous request holds: its segments' objects (segment, wire node, array slot and
 * cumulative count) and their strings, counted even while a trie holds the same segment, since the
 * session keeps it after the trie let it go.
 */
function promptBytes(prompt: Prompt): number {
  let bytes = 160
  for (const segment of prompt.segments) {
    // A session's history is the same segments request after request (never changed once built):
    // their strings are measured once.
    let counted = segmentBytes.get(segment)
    if (counted === undefined) {
      counted = SEGMENT_BYTES + stringBytes(segment.text) + stringBytes(segment.frame)
      segmentBytes.set(segment, counted)
    }
    bytes += counted
  }
  return bytes
}

/** `promptBytes`' count of each segment, by segment. */
const segmentBytes = new WeakMap<Segment, number>()

/** A segment's object, its wire node, and its slots in the prompt's arrays. */
const SEGMENT_BYTES = 200

/** A kept digest's object and arrays, and each item digest it holds (its object and hash strings). */
const DIGEST_BYTES = 120
const ITEM_DIGEST_BYTES = 120

/** Conversations whose previous request is remembered by default. */
const SESSIONS_KEPT = 100_000

/** Bytes of items kept for reuse when the tracker has no memory budget. */
const REUSE_BYTES_UNBOUNDED = 64 * 1024 * 1024

/** Response ids remembered for `previous_response_id` chaining (as many as the mock stores). */
const RESPONSE_IDS_KEPT = 10_000

const EMPTY_PROMPT: Prompt = { segments: [], cumulative: [], trailing: 0, total: 0 }

/** The answer a shadow simulation is given: only its input buckets are read. */
const NO_ANSWER: AssistantMessage = { role: 'assistant', content: [] }

function optionalMarked(marked: SimCounts | undefined): { marked?: SimCounts } {
  return marked === undefined ? {} : { marked }
}

export class CaptureTracker implements ExchangeRecorder {
  readonly conversations = new ConversationTracker()
  private readonly states = new Map<string, ConversationState>()
  private readonly options: TrackerOptions
  /** Placements by body object, so a request placed before its simulation keeps its place. */
  private readonly placements = new WeakMap<object, Placement>()
  /** The item digests `place` made of a body, reused when it is added (megabytes are hashed once). */
  private readonly itemDigests = new WeakMap<object, readonly ItemDigest[]>()
  /** The digest of each item `reuse` owns: an item reused from an earlier request is not hashed again. */
  private readonly digestOfItem = new WeakMap<object, ItemDigest>()
  /** Earlier requests' items, for `reuseItems`; held in the room the previous requests leave in the budget. */
  private readonly reuse = new ItemReuse()
  private serial = 0
  /** Conversation by Responses response id, the most recent ones. */
  private readonly responseConversations = new Map<string, string>()
  /** Estimated bytes of the previous requests the conversations hold. */
  private previousBytes = 0
  /** The conversations that hold a previous request, least recently active first. */
  private readonly holders = new Map<string, ConversationState>()

  constructor(options: TrackerOptions) {
    this.options = options
  }

  /**
   * The place of a request (session, conversation, turn, step, attempt); the same body object always has
   * the same place. `headers`: the request's `WIRE_HEADERS`, for the agent that sent it; `secrets`: the
   * keys it carries, which no session name may show.
   */
  place(
    api: WireApi,
    declared: string | undefined,
    body: Record<string, unknown>,
    headers: Readonly<Record<string, string>> = {},
    secrets: readonly string[] = [],
  ): Placement {
    const known = this.placements.get(body)
    if (known !== undefined) return known
    // A Responses request that continues a stored response belongs to that response's conversation.
    const chained =
      declared === undefined && typeof body.previous_response_id === 'string'
        ? this.responseConversations.get(body.previous_response_id)
        : undefined
    const placement = this.conversations.place({ api, body, headers }, this.itemsDigested(body), {
      ...(declared !== undefined ? { declared } : {}),
      ...(chained !== undefined ? { chained } : {}),
      ...(secrets.length > 0 ? { secrets } : {}),
    })
    this.placements.set(body, placement)
    return placement
  }

  /**
   * Replace, in place, the items of a freshly parsed body that equal (as JSON text) an earlier request's
   * items at the same index with those earlier objects, so the simulators' and the digests' memos keyed by
   * item apply to them. Nothing may write to a body's items afterwards: they are shared.
   */
  reuseItems(body: Record<string, unknown>): void {
    if (this.options.reuseItems === false) return
    this.reuse.reuse(body)
    this.reuse.trim(this.reuseRoom())
  }

  /**
   * A request body read off the wire, parsed as `JSON.parse` reads its UTF-8 text (undefined when it is
   * not an object), its items then reused as `reuseItems` does. The items whose bytes repeat a body
   * parsed lately are that body's objects, not parsed again (wire/body-prefix.ts).
   */
  parseBody(bytes: Buffer): Record<string, unknown> | undefined {
    if (this.options.reuseItems === false) return parseJsonBody(bytes)
    const body = this.reuse.parse(bytes)
    this.reuse.trim(this.reuseRoom())
    return body
  }

  /**
   * Items replaced by `reuseItems` so far, items `parseBody` took from an earlier body's bytes, and the
   * estimated bytes of the items and bodies it keeps.
   */
  get reuseStats(): { reused: number; repeated: number; items: number; bytes: number } {
    return {
      reused: this.reuse.reused,
      repeated: this.reuse.repeated,
      items: this.reuse.size,
      bytes: this.reuse.bytes,
    }
  }

  /** Bytes the reused items may hold: what the previous requests leave of the budget. */
  private reuseRoom(): number {
    const budget = this.options.memoryBytes
    return budget === undefined ? REUSE_BYTES_UNBOUNDED : Math.max(0, budget - this.previousBytes)
  }

  /** The digests of a body's items, made once per body object and once per item object. */
  private itemsDigested(body: Record<string, unknown>): readonly ItemDigest[] {
    let items = this.itemDigests.get(body)
    if (items === undefined) {
      items = itemsOf(body).map((item) => {
        if (typeof item !== 'object' || item === null || !this.reuse.owns(item)) return itemDigest(item)
        let digest = this.digestOfItem.get(item)
        if (digest === undefined) {
          digest = itemDigest(item)
          this.digestOfItem.set(item, digest)
        }
        return digest
      })
      this.itemDigests.set(body, items)
    }
    return items
  }

  /** Remember the conversation a response id was answered in, for requests that chain on it. */
  noteResponse(id: string, conversation: string): void {
    this.responseConversations.delete(id)
    this.responseConversations.set(id, conversation)
    if (this.responseConversations.size > RESPONSE_IDS_KEPT) {
      const oldest = this.responseConversations.keys().next().value
      if (oldest !== undefined) this.responseConversations.delete(oldest)
    }
  }

  /** The previous successful request of a conversation, for its next simulation's counterfactual. */
  previous(conversation: string): PreviousRequest | undefined {
    return this.states.get(conversation)?.previous
  }

  /** Conversations remembered, and the estimated bytes of the previous requests they hold. */
  get memory(): { sessions: number; bytes: number } {
    return { sessions: this.states.size, bytes: this.previousBytes }
  }

  /** Record one answered request. */
  add(input: ExchangeInput): CapturedExchange {
    const { placement, api, body } = input
    const prompt = input.simulation?.prompt ?? this.linearized(api, body)
    const digest = digestRequest(body, prompt, this.itemsDigested(body))
    this.itemDigests.delete(body)
    // An answered request is the conversation's previous one, whether or not the client got its usage:
    // the provider cached it all the same.
    const ok = input.status >= 200 && input.status < 300 && input.error === undefined
    const name = placement.conversation
    const state = this.states.get(name) ?? {}
    const change = ok ? this.changeOf(state, input, digest, prompt) : undefined
    if (ok) this.keep(state, input, digest, prompt)
    // Most recently active last: the conversations to forget first come first.
    this.states.delete(name)
    this.states.set(name, state)
    this.holders.delete(name)
    if (state.previous !== undefined || state.answered !== undefined) this.holders.set(name, state)
    this.bound()
    this.serial += 1
    const simulation = input.simulation
    const model = bodyModel(body) ?? ''
    const exchange: CapturedExchange = {
      seq: this.serial,
      session: placement.session,
      conversation: name,
      kind: placement.kind,
      ...(placement.purpose !== undefined ? { purpose: placement.purpose } : {}),
      ...(placement.agent !== undefined ? { agent: placement.agent } : {}),
      identity: placement.identity,
      time: input.time ?? new Date().toISOString(),
      at: input.at,
      api,
      provider: providerOfApi(api),
      model,
      stream: input.stream,
      status: input.status,
      latencyMs: input.latencyMs,
      turn: placement.turn,
      step: placement.step,
      attempt: placement.attempt,
      ...(placement.compactedBy !== undefined ? { compactedBy: placement.compactedBy } : {}),
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
              ...optionalMarked(this.markedCounts(input)),
            },
          }
        : {}),
      digest,
      ...(change !== undefined ? { change } : {}),
      ...(input.error !== undefined ? { error: input.error } : {}),
      ...(this.options.keepBodies === true ? { request: withoutSecrets(body, input.secrets) } : {}),
      ...(this.options.keepBodies === true && input.response !== undefined
        ? { response: redactText(input.response, input.secrets) }
        : {}),
      ...(this.options.keepAnswers === true && input.answer !== undefined ? { answer: input.answer } : {}),
    }
    this.options.sink?.(exchange)
    return exchange
  }

  /**
   * What changed at an answered request's break against the conversation's previous answered request: the
   * break found as the report will find it (`wireBreak` on the two digests, which compares hashes), and
   * only when there is one the words around it read from the two prompts, the request's keys masked.
   */
  private changeOf(
    state: ConversationState,
    input: ExchangeInput,
    digest: RequestDigest,
    prompt: Prompt,
  ): BreakChange | undefined {
    const answered = state.answered
    if (this.options.keepChanges === false || answered === undefined) return undefined
    return wireBreak(answered.digest, digest, input.placement.compactedBy !== undefined, {
      previous: answered.prompt,
      current: prompt,
      ...(input.secrets !== undefined ? { secrets: input.secrets } : {}),
    })?.change
  }

  /** Keep an answered request as its conversation's previous one, and count what that holds. */
  private keep(state: ConversationState, input: ExchangeInput, digest: RequestDigest, prompt: Prompt): void {
    this.previousBytes -= state.previousBytes ?? 0
    const simulation = input.simulation
    if (simulation !== undefined) {
      const machine = simulation.trace.machine
      state.previous = {
        prompt: simulation.prompt,
        ...(machine !== undefined ? { machine } : {}),
        ...modelField(input.body),
        carry: simulation.trace.carry,
      }
    }
    if (this.options.keepChanges !== false) state.answered = { digest, prompt }
    let bytes = state.previous === undefined ? 0 : promptBytes(state.previous.prompt)
    if (state.answered !== undefined) {
      // The digest's slots and item digests; its segment digests are the prompt's segments' own.
      bytes += DIGEST_BYTES + 8 * digest.segments.length + ITEM_DIGEST_BYTES * digest.items.length
      if (state.answered.prompt !== state.previous?.prompt) bytes += promptBytes(state.answered.prompt)
    }
    state.previousBytes = bytes
    this.previousBytes += bytes
  }

  /** Forget the least recently active conversations' previous requests, then conversations, past the limits. */
  private bound(): void {
    const limit = this.options.sessionLimit ?? SESSIONS_KEPT
    for (const [name, state] of this.states) {
      if (this.states.size <= limit) break
      this.previousBytes -= state.previousBytes ?? 0
      this.states.delete(name)
      this.holders.delete(name)
    }
    const budget = this.options.memoryBytes ?? Number.POSITIVE_INFINITY
    for (const [name, state] of this.holders) {
      if (this.previousBytes <= budget) break
      this.previousBytes -= state.previousBytes ?? 0
      delete state.previous
      delete state.answered
      delete state.previousBytes
      this.holders.delete(name)
    }
    // The previous requests come first: the items kept for reuse only make requests cheaper.
    this.reuse.trim(this.reuseRoom())
  }

  /**
   * What an answered request that marked nothing, on a provider that caches only what is marked, would
   * have counted with the mark a client that asks for caching sends, on the shadow simulator's caches.
   */
  private markedCounts(input: ExchangeInput): SimCounts | undefined {
    const { shadow } = this.options
    const { simulation, api, body } = input
    if (shadow === undefined || simulation === undefined || input.status < 200 || input.status >= 300)
      return undefined
    if ((simulation.prompt.placed?.length ?? 0) > 0) return undefined
    const model = bodyModel(body)
    if (model === undefined || !cachesOnlyMarked(simulationModel(vendorOf(providerOfApi(api)), model).cache))
      return undefined
    const marked = withCacheMark(api, body)
    if (marked === undefined) return undefined
    try {
      return shadow.simulate(api, { body: marked, at: input.at, output: NO_ANSWER }).counts
    } catch (error) {
      if (error instanceof SimulatorRejection) return undefined
      throw error
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

/**
 * A kept request body with every credential replaced: the request's own keys verbatim (a client that put
 * its key in a field), and any key-shaped value (`sk-…`, `AIza…`, a bearer token, a URL's credentials or
 * secret-named query value) in any string of it — `prompt_cache_key`, `user`, `metadata.user_id` and the
 * text alike — so nothing kept or printed from it (a gateway's changes.csv) holds one.
 */
function withoutSecrets(
  body: Record<string, unknown>,
  secrets: readonly string[] | undefined,
): Record<string, unknown> {
  const known = (secrets ?? []).filter((secret) => secret.length >= 8)
  const clean = (value: unknown): unknown => {
    if (typeof value === 'string') return redactText(value, known)
    if (Array.isArray(value)) {
      const items = value.map(clean)
      return items.every((item, index) => item === value[index]) ? value : items
    }
    if (value === null || typeof value !== 'object') return value
    let changed = false
    const entries = Object.entries(value).map(([name, item]) => {
      const kept = clean(item)
      if (kept !== item) changed = true
      return [name, kept] as const
    })
    return changed ? Object.fromEntries(entries) : value
  }
  return clean(body) as Record<string, unknown>
}
