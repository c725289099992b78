// The vocabulary of the agent loop under test: content, messages, session events, request headers,
// the provider-neutral derived request, and normalized usage. Every other harness file imports these.

/** A JSON value as it appears in a session log line or a wire body. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue }

/** The position of an event in its session log; strictly increasing, starting at 0. */
export type Seq = number

/** Provider identifiers of the CLI contract: the built-in ones and the catalog's OpenAI-compatible ones. */
export type ProviderId = BuiltInProviderId | CompatibleProviderId

/** The providers with an adapter of their own. */
export type BuiltInProviderId =
  | 'anthropic'
  | 'openai-chat'
  | 'openai-responses'
  | 'deepseek'
  | 'bedrock'
  | 'gemini'

/**
 * An OpenAI-compatible provider the model catalog describes (`xai`, `kimi`, or one a user's catalog file
 * adds): known only at run time, so a branded string; `providers/compatible.ts` knows which exist.
 */
export type CompatibleProviderId = string & { readonly compatibleProvider: true }

/** The form of a compatible provider's id (also its `serve` path prefix): lower case, digits and dashes. */
export const COMPATIBLE_ID_PATTERN = /^[a-z][a-z0-9-]{0,31}$/

/**
 * The built-in provider ids, in the order reports list them: the default (`all`) matrix. The compatible
 * providers run when named (notes/2026-11-30-compatible-providers.md).
 */
export const PROVIDER_IDS: readonly BuiltInProviderId[] = [
  'anthropic',
  'openai-chat',
  'openai-responses',
  'deepseek',
  'bedrock',
  'gemini',
]

// ─── Content ──────────────────────────────────────────────────────────────────────────────────────

/** Plain text. */
export interface TextBlock {
  type: 'text'
  text: string
}

/** An image carried inline; `id` names it across offload decisions. */
export interface ImageBlock {
  type: 'image'
  /** Stable identity of the image within the session (offload targets refer to it). */
  id: string
  /** MIME type of `data`. */
  mediaType: 'image/png' | 'image/jpeg'
  /** Base64 payload. */
  data: string
  /** Pixel width; providers price images by their size. */
  width: number
  /** Pixel height. */
  height: number
}

/** A tool call the model made. */
export interface ToolCallBlock {
  type: 'tool-call'
  /** Provider-facing call id, stable across the session. */
  callId: string
  name: string
  /** Arguments as the exact JSON text the model produced (key order is part of the prompt bytes). */
  arguments: string
}

// ─── Messages ─────────────────────────────────────────────────────────────────────────────────────

/** A system prompt version. Node 0 of the surface under the `surface` policy. */
export interface SystemMessage {
  role: 'system'
  text: string
}

/** A developer-role update (tool additions and removals on an in-history tool route). */
export interface DeveloperMessage {
  role: 'developer'
  text: string
}

/** User input, or context a plugin injected at the user position. */
export interface UserMessage {
  role: 'user'
  content: Array<TextBlock | ImageBlock>
}

/** Model output. An assistant message whose content is empty is never sent. */
export interface AssistantMessage {
  role: 'assistant'
  content: Array<TextBlock | ToolCallBlock>
}

/** The result of one tool call. */
export interface ToolResultMessage {
  role: 'tool'
  callId: string
  name: string
  text: string
  /** Set when the tool failed. */
  isError?: true
}

/** Any message of the derived history. */
export type Message = SystemMessage | DeveloperMessage | UserMessage | AssistantMessage | ToolResultMessage

// ─── Tools and configuration ──────────────────────────────────────────────────────────────────────

/** A tool definition as the model sees it. */
export interface ToolSchema {
  name: string
  description: string
  /** JSON Schema of the arguments. */
  parameters: JsonObject
  /** Added mid-session on a route with tool updates: the model learns it from a developer message, not the tools prefix. */
  deferLoading?: true
}

/** Call configuration of a request (everything but history, system and tools). */
export interface CallConfig {
  provider: ProviderId
  model: string
  /** Output cap sent to the provider. */
  maxTokens?: number
  temperature?: number
}

/** Call-config values a provider's adapter supplies when the call configuration leaves them out. */
export interface AdapterConfigDefaults {
  /** The output cap the adapter sends when none is configured (Anthropic requires one). */
  maxTokens?: number
}

/**
 * Which header config fields the adapter supplied rather than the caller (DSH's `adapterDefaults`, a
 * flag per field, present only when true): the value is in `config`, the flag says whose it is.
 */
export interface AdapterDefaults {
  maxTokens?: true
}

/**
 * Request state that lives outside the derived history. Written to the log as `request/header` only
 * when it changes, so every request can be rebuilt from the log.
 */
export interface RequestHeader {
  config: CallConfig
  /** Config fields the adapter supplied (DSH B/C `EpochHeader.adapterDefaults`); absent when none. */
  adapterDefaults?: AdapterDefaults
  /** System prompt in the provider's system slot (the `header` system-prompt policy only). */
  system?: string
  /** Tool definitions the request carries, in order. */
  tools?: ToolSchema[]
  /**
   * The session prefix: request-only messages sent right after the system slot (the `frozen`
   * session-prefix policy). DSH generation A's name; logs of format 1 called it `sessionPrefix`.
   */
  messagePrefix?: Message[]
  /** Request-only messages sent after the whole history, recomputed each step (the `after-slot` policy). */
  afterSlot?: Message[]
  /** Tools still declared only to keep the tools prefix stable (removed on an `in-history` tool route). */
  retiredTools?: string[]
}

/**
 * Why a header was written: `initial` for a new log, `resume` for a loop instance's first request over a
 * log with headers, `change` for a different header, `series` for an unchanged header that begins a new
 * message series (after a surface replacement or an explicit series start).
 */
export type HeaderReason = 'initial' | 'resume' | 'change' | 'series'

/**
 * How a model applies a system prompt that changes mid-conversation: `in-history` reads the latest
 * system message anywhere in the messages; `unsupported` reads only the leading one, so node 0 is
 * rewritten.
 */
export type Route = 'in-history' | 'unsupported'

/**
 * A route's system-prompt capability as DSH logs it (`request/context.systemPromptUpdate`): present
 * only on an in-history route; absence means only a leading system message is read.
 */
export type SystemPromptUpdate = 'in-history'

/** The logged capability of a route. */
export function systemPromptUpdateOf(route: Route): SystemPromptUpdate | undefined {
  return route === 'in-history' ? 'in-history' : undefined
}

/** The route a logged capability describes. */
export function routeOf(update: SystemPromptUpdate | undefined): Route {
  return update === 'in-history' ? 'in-history' : 'unsupported'
}

// ─── Usage ────────────────────────────────────────────────────────────────────────────────────────

/**
 * Token usage of one request, normalized into disjoint buckets. `input = uncached + cacheRead +
 * cacheWrite`. A bucket the provider does not report is `undefined`, never 0. The provider's own usage
 * object is kept in `raw`.
 */
export interface Usage {
  /** Every input token of the request: the sum of the three input buckets. */
  input: number
  /** Input tokens billed at the base input price. */
  uncached: number
  /** Input tokens read from the provider's prompt cache. */
  cacheRead?: number
  /** Input tokens written to the prompt cache and billed at a write price. */
  cacheWrite?: number
  /** Part of `cacheWrite` written with a 5-minute lifetime (Anthropic). */
  cacheWrite5m?: number
  /** Part of `cacheWrite` written with a 1-hour lifetime (Anthropic). */
  cacheWrite1h?: number
  /** Output tokens, reasoning included. */
  output: number
  /** Part of `output` spent on reasoning, when reported. */
  reasoning?: number
  /** The provider's usage object as it arrived. */
  raw: JsonValue
}

/**
 * The provider's own explanation of a request's cache reuse against an earlier response it was asked to
 * compare with: Anthropic's `diagnostics` (request `diagnostics.previous_message_id`), OpenAI Responses'
 * `prompt_cache_diagnostics` (request `prompt_cache_options.comparison_response_id`).
 */
export interface ProviderDiagnosis {
  /**
   * The provider's word for it, as it sent it: Anthropic's `cache_miss_reason.type` (`system_changed`,
   * `previous_message_not_found`, …), `none` when it found no divergence (`diagnostics: null`) and
   * `pending` when the comparison was still running (`cache_miss_reason: null`); OpenAI's `reason` on a
   * `cache_miss` (`input_changed`, …), else its `type` (`cache_hit`, `comparison_response_not_found`,
   * `unavailable`).
   */
  reason: string
  /**
   * Tokens the provider says the request could not reuse of the compared one (Anthropic
   * `cache_missed_input_tokens`, OpenAI `cache_missed_tokens`); undefined when it gave none.
   */
  missedTokens?: number
}

// ─── Session events ───────────────────────────────────────────────────────────────────────────────

/**
 * Version of the session log format this code writes. Format 2 took DSH's field names (`messagePrefix`,
 * `systemPromptUpdate`, shadowed ranges); format 1 logs are still read, upgraded line by line.
 */
export const SESSION_FORMAT_VERSION = 2

/** Every format version this code reads. */
export const READABLE_FORMAT_VERSIONS: readonly number[] = [1, 2]

/** Where a user message came from. */
export type MessageSource = { kind: 'user' } | { kind: 'plugin'; plugin: string }

/** How a turn ended; `aborted` when the user cancelled a step (DSH C's `{ kind: 'aborted' }`). */
export type TurnEndReason = 'completed' | 'error' | 'max-steps' | 'aborted'

/** The error type of an attempt the user cancelled and the loop discarded. */
export const CANCELLED_ATTEMPT = 'cancelled'

/** A failure of one provider attempt, as the loop recorded it. */
export interface AttemptError {
  /** HTTP status, when the failure had one. */
  status?: number
  /** Provider error type (`rate_limit_error`, `overloaded_error`, …) or `network` / `stream`. */
  type: string
  message: string
  /** Whether the SDK's rules retry this failure. */
  retryable: boolean
}

/** Data of every durable event type. */
export interface SessionEventMap {
  /** First event of every log. */
  'session/start': { formatVersion: number; sessionId: string }
  'turn/start': { turn: number }
  'turn/end': { turn: number; reason: TurnEndReason }
  'step/start': { turn: number; step: number }
  'step/end': { turn: number; step: number }
  'user/message': { turn: number; message: UserMessage; source: MessageSource }
  'system/message': { turn: number; step: number; message: SystemMessage }
  'developer/message': { turn: number; step: number; message: DeveloperMessage; headerSeq?: Seq }
  'assistant/message': {
    turn: number
    step: number
    attempt: number
    message: AssistantMessage
    usage?: Usage
    latencyMs?: number
  }
  'assistant/attempt': {
    turn: number
    step: number
    attempt: number
    error: AttemptError
    latencyMs?: number
  }
  'tool/call': { turn: number; step: number; callId: string; name: string; arguments: string }
  'tool/result': { turn: number; step: number; message: ToolResultMessage }
  'request/header': { header: RequestHeader; reason: HeaderReason; startsSeries?: true }
  'request/context': {
    provider: ProviderId
    model: string
    /** DSH's name and values: `in-history`, or absent on a route that reads only a leading system message. */
    systemPromptUpdate?: SystemPromptUpdate
  }
  'compaction/start': { compactionId: string; kind: 'summary' | 'prune'; replayPrefix?: boolean }
  'compaction/summary': {
    compactionId: string
    /** First and last shadowed surface node (DSH B's `shadowedRange`). */
    shadowedRange: SeqRange
    /** Every shadowed surface node, in surface order. */
    shadowedSeqs: Seq[]
    /** The loop meter's estimate of the shadowed nodes' tokens; absent in format-1 logs. */
    shadowedTokenCount?: number
    usage?: Usage
  }
  /** The shadow price of one pruned tool result; the replacing `tool/result` follows it directly. */
  'compaction/prune': {
    compactionId: string
    shadowedRange: SeqRange
    shadowedSeqs: Seq[]
    /** The loop meter's estimate of the pruned result's tokens before the cut; absent in format-1 logs. */
    shadowedTokenCount?: number
    keep: PruneKeep
  }
  'compaction/end': { compactionId: string }
  'image/offload': { mode: ImageOffloadMode; targets: Array<{ seq: Seq; imageIds: string[] }> }
  'session/end-seed': { inherited?: true }
}

/** An inclusive range of seqs. */
export interface SeqRange {
  start: Seq
  end: Seq
}

/** Which part of a pruned tool result survives. */
export type PruneKeep = 'head' | 'middle' | 'tail'

/** How offloaded images are chosen: in stable quanta, or one by one as each request crosses a limit. */
export type ImageOffloadMode = 'quantized' | 'per-request'

/** Event types whose events place nodes on the surface (the derived history). */
export type SurfaceEventType =
  | 'user/message'
  | 'system/message'
  | 'developer/message'
  | 'assistant/message'
  | 'tool/result'

/** Every durable event type. */
export type SessionEventType = keyof SessionEventMap

/** How a surface event changes the surface: appended, or replacing the live nodes from `startSeq` to `endSeq`. */
export type SurfaceOp = 'append' | { op: 'replace'; startSeq: Seq; endSeq: Seq }

/** One line of the session log. */
export type SessionEvent<T extends SessionEventType = SessionEventType> = {
  [K in T]: {
    seq: Seq
    /** Virtual time in seconds since the session began. */
    time: number
    type: K
    data: SessionEventMap[K]
    /** Surface events only: append or replace. */
    surfaceOp?: SurfaceOp
    /** Surface replacements: the events whose nodes this one shadows. */
    sourceEventSeqs?: Seq[]
    /** Set by writers of event types a reader may not know; such events are kept but fold to nothing. */
    ignorable?: true
  }
}[T]

/** An event before the log assigns its seq and time. */
export type EventDraft<T extends SessionEventType = SessionEventType> = {
  [K in T]: {
    type: K
    data: SessionEventMap[K]
    surfaceOp?: SurfaceOp
    sourceEventSeqs?: Seq[]
  }
}[T]

// ─── The derived request ──────────────────────────────────────────────────────────────────────────

/** Where a derived message came from. */
export type MessageOrigin = 'surface' | 'session-prefix' | 'after-slot'

/** A message of the derived request with its provenance. */
export interface DerivedMessage {
  message: Message
  /** The session events that produced this message (a surface node, or the header that holds a prefix). */
  sourceSeqs: Seq[]
  origin: MessageOrigin
}

/**
 * The provider-neutral request: a pure function of the session log. Adapters turn it into a wire body.
 */
export interface DerivedRequest {
  sessionId: string
  config: CallConfig
  route: Route
  /** The header-slot system prompt and the header event that holds it (`header` policy). */
  system?: { text: string; sourceSeq: Seq }
  /** Tool definitions and the header event that holds them. */
  tools: ToolSchema[]
  toolsSeq?: Seq
  /** The seq of the header this request was built under. */
  headerSeq: Seq
  messages: DerivedMessage[]
}

// ─── Wire provenance ──────────────────────────────────────────────────────────────────────────────

/** Where each top-level wire node came from: the session events behind it, for attribution. */
export interface WireSources {
  /** The provider's system slot (Anthropic `system`, Responses `instructions`); empty when unused. */
  system: Seq[]
  /** Tool definitions: the header that holds them. */
  tools: Seq[]
  /** One entry per wire message (Chat `messages[i]`, Anthropic `messages[i]`, Responses `input[i]`). */
  messages: Seq[][]
}

// ─── Scripted provider failures ───────────────────────────────────────────────────────────────────

/** A provider failure a scenario asks the mock provider to produce on a request. */
export type Fault =
  /**
   * 429. Each retry header is sent only when given: `retry-after-ms` (milliseconds, the header both
   * official SDKs read first) and `retry-after` (whole seconds, the standard header).
   */
  | { kind: 'rate-limit'; retryAfterMs?: number; retryAfterSeconds?: number }
  /** Overloaded: 529 on Anthropic, 503 on OpenAI and DeepSeek. */
  | { kind: 'overloaded' }
  /** 500. */
  | { kind: 'server-error' }
  /** A streamed response that stops after `afterFrames` frames (non-streamed: a 500 instead of the body). */
  | { kind: 'stream-cut'; afterFrames: number }
  /** An error event inside a streamed 200 response. */
  | { kind: 'stream-error' }
