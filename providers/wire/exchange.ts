// The vocabulary of an observed exchange on the wire: the place of a request in its session and
// conversation, what a capture keeps of it, and the two ports the mock server takes from above, a
// recorder (captures) and a replay (a recorded capture answering again). The mocks name these types; the
// captures in reports/observed/capture/ implement them.

import type { AssistantMessage, Fault, ProviderId, Usage } from '../../harness/types.ts'
import type { Counterfactual, PreviousRequest, Shortfall, SimCounts, Simulation } from '../sim/types.ts'
import { type BuiltInWireApi, compatibleProviderOfApi, isBuiltInApi, type WireApi } from '../types.ts'
import type { RequestDigest } from './digest.ts'

/** The kinds of conversation a session holds. */
export type ConversationKind = 'main' | 'subagent' | 'side' | 'compaction'

export const CONVERSATION_KINDS: readonly ConversationKind[] = ['main', 'subagent', 'side', 'compaction']

/**
 * The request headers the capture reads (agent identity and session ids): never a key, a cookie or a
 * forwarded address.
 */
export const WIRE_HEADERS: readonly string[] = [
  'user-agent',
  'originator',
  // Claude Code
  'x-claude-code-session-id',
  'x-claude-code-agent-id',
  // Codex (its turn metadata also holds an installation id: read here, never recorded)
  'session-id',
  'thread-id',
  'x-openai-subagent',
  'x-codex-turn-metadata',
  // opencode
  'x-session-id',
  'x-parent-session-id',
  // pi on the Responses API
  'session_id',
  // Copilot CLI
  'x-initiator',
  'x-interaction-type',
]

/**
 * What changed at a break, from the two requests' content at the first divergent node: a short window of
 * text shared before it, then what the previous request had there and what this one has (each clipped,
 * key-shaped strings masked), or the field that changed (a model, a tool's schema key, a setting). Every
 * surface renders this one value: the gate's lines, report.html, breaks.csv, JUnit, GitHub annotations.
 */
export interface BreakChange {
  /** The node, as `break_node` names it (`system[0]`, `messages[3].1`, `tools[2]`, `model`). */
  node: string
  /**
   * `inserted`: this request has text the previous one had not, at the same place; `removed`: the
   * reverse; `replaced`: both have text there, different; `field`: a setting, the model or a tool's
   * declaration changed (see `field`).
   */
  kind: 'inserted' | 'removed' | 'replaced' | 'field'
  /** The field that changed, for `field`: `model`, `temperature`, `tools[2].input_schema.properties.path`. */
  field?: string
  /** Text both requests share just before the change, clipped from its start. */
  context?: string
  /** What the previous request had at the change (clipped); absent for `inserted`. */
  before?: string
  /** What this request has at the change (clipped); absent for `removed`. */
  after?: string
}

/** How a request's session was told. */
export type IdentitySource = 'header' | 'agent' | 'conversation-key' | 'continuation' | 'new'

/** Where a request belongs and where it stands: the same numbers for the capture and for the replies. */
export interface Placement {
  /** The session: the declared or agent's session id, or a conversation's own name when nothing groups it. */
  session: string
  /** The conversation's name: also its file name under a capture's `sessions/` and its rows' variant. */
  conversation: string
  kind: ConversationKind
  /** What a side or compaction conversation is for, where known (`title`, `router`, `structured`). */
  purpose?: string
  /** How the session was told. */
  identity: IdentitySource
  /** The agent that sent the request and its version, where the request says (`claude-code/2.1.328`). */
  agent?: string
  /** The user turn (from 1) within the conversation: a request with another latest user message opens one. */
  turn: number
  /** The request within the turn, from 1. */
  step: number
  /**
   * 0 for a first attempt; a request identical to the previous one of its conversation is its next
   * attempt (a retry after a failure, or the same request sent again): the same turn and step.
   */
  attempt: number
  /**
   * The compaction conversation of the session that summarized this conversation just before this
   * request rewrote its history: the rewrite is that compaction's.
   */
  compactedBy?: string
}

/** The simulator's view of one captured request. */
export interface SimulatedView {
  counts: SimCounts
  /** The read had it extended the previous request unchanged (absent on a session's first request). */
  counterfactual?: Counterfactual
  shortfall?: Shortfall
  /** True when the usage came from the real provider and these counts are the simulator's prediction. */
  predicted: boolean
  /**
   * What the request would have counted had it marked its prompt for caching (the one mark a client that
   * asks sends), on a cache of its own: set only on a request that marked nothing where the provider
   * caches only what is marked (Anthropic, Bedrock).
   */
  marked?: SimCounts
}

/** One request of a capture, as `cachelab report` and the recorder read it. */
export interface CapturedExchange {
  /** Order of the request in the capture, from 1. */
  seq: number
  /** The session its conversation belongs to (the declared or agent's session id, else the conversation). */
  session: string
  /** The conversation: its file under `sessions/`, and its rows' variant. */
  conversation: string
  kind: ConversationKind
  /** What a side or compaction conversation is for, where known. */
  purpose?: string
  /** The agent and version that sent the request, where it says (`claude-code/2.1.328`). */
  agent?: string
  /** How the session was told: the header, the agent's session id, a conversation key, or continuation. */
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
  /** The compaction conversation whose summary this request's rewritten history holds (`Placement`). */
  compactedBy?: string
  /** The usage the client received, normalized (`raw`: the provider's object as sent); absent for a failed attempt. */
  usage?: Usage
  simulation?: SimulatedView
  digest: RequestDigest
  /**
   * What changed at the request's break against the previous request of its conversation, where it broke:
   * the few words around the change, key-shaped strings masked (absent under `--record-no-text`).
   */
  change?: BreakChange
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
  placement: Placement
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
  /**
   * The credentials the request came with (its key headers' values): a kept body or response that
   * echoes one holds `[redacted]` in its place.
   */
  secrets?: readonly string[]
}

/** What a replayed request gets. */
export type ReplayStep =
  | {
      kind: 'answer'
      exchange: CapturedExchange
      answer: AssistantMessage | undefined
      /** The recording's answer failed after its 200 (a cut stream, an error event): it fails so again. */
      fault?: Fault
    }
  | { kind: 'failure'; exchange: CapturedExchange }
  | { kind: 'mismatch'; message: string }

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

/** Whether the provider answered a request: a 2xx status and no failure after it (a cut stream, an error event). */
export function answered(exchange: CapturedExchange): boolean {
  return exchange.status >= 200 && exchange.status < 300 && exchange.error === undefined
}

/**
 * The usage an answered request reported to the client: none when it sent none, and none when every count
 * it sent is 0 (a gateway that fills the usage it was not given with zeros) — an answered request always
 * has input tokens, so those zeros are no measurement.
 */
export function reportedUsage(exchange: CapturedExchange): Usage | undefined {
  const usage = exchange.usage
  if (usage === undefined || (usage.input === 0 && usage.output === 0)) return undefined
  return usage
}

/** What the loopback server asks of the capture it records to (`CaptureTracker`). */
export interface ExchangeRecorder {
  /** The place of a request; `headers` its `WIRE_HEADERS`, `secrets` the keys no session name may show. */
  place(
    api: WireApi,
    declared: string | undefined,
    body: Record<string, unknown>,
    headers?: Readonly<Record<string, string>>,
    secrets?: readonly string[],
  ): Placement
  /**
   * A request body read off the wire, parsed as `JSON.parse` reads its UTF-8 text (undefined when it is
   * not an object), its items shared with equal earlier ones for the memos keyed by item.
   */
  parseBody(bytes: Buffer): Record<string, unknown> | undefined
  /** Remember the conversation a response id was answered in. */
  noteResponse(id: string, conversation: string): void
  /** The previous successful request of a conversation, for its next simulation's counterfactual. */
  previous(conversation: string): PreviousRequest | undefined
  /** Conversations remembered and the estimated bytes they hold. */
  readonly memory: { sessions: number; bytes: number }
  /** Record one answered request. */
  add(input: ExchangeInput): CapturedExchange
}

/** What the loopback server asks of a recording that answers again (`ReplaySource`). */
export interface ReplayAnswers {
  /** The next recorded step of a session for a request with this digest. */
  next(session: string, digest: RequestDigest): ReplayStep
}
