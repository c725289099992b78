// The simulators' vocabulary: a wire request linearized into segments (the provider's prompt order),
// the counts a simulation produces, and the trace the reports read to explain them.

/** Which top-level part of a wire body a segment renders. */
export type WirePart = 'tools' | 'system' | 'messages' | 'input' | 'response_format'

/** A wire node: `messages[3]` block 1, `tools[0]`, `system`. */
export interface WireNode {
  part: WirePart
  /** Index within the part (tool, system block, message or input item). */
  index: number
  /** Content block within a message, when the message has blocks. */
  block?: number
}

/** A cache breakpoint set on a segment (Anthropic `cache_control`, OpenAI `prompt_cache_breakpoint`). */
export interface Breakpoint {
  /** Lifetime in seconds. */
  ttlSeconds: number
  /** The TTL option as the request named it (`5m`, `1h`, `30m`). */
  ttl: string
  /** False for a breakpoint the provider placed itself (automatic or implicit). */
  explicit: boolean
}

/**
 * One unit of the provider's prompt: a content block, a tool definition, a message. Caches match on
 * frame and text together; a partial match inside a segment needs the same frame and compares tokens.
 */
export interface Segment {
  /** Role and structure around the text (role markers, tool ids, level context). */
  frame: string
  /** The text whose tokens make up the segment beyond its framing. */
  text: string
  /** Tokens of the framing, already scaled. */
  framing: number
  /** Tokens of the whole segment, already scaled. */
  tokens: number
  node: WireNode
  /** Set when a cache breakpoint sits on this segment. */
  breakpoint?: Breakpoint
  /** Consecutive tool_use or tool_result blocks share a run id (Anthropic lookback counts a run once). */
  run?: number
}

/** A linearized wire request. */
export interface Prompt {
  segments: Segment[]
  /** Cumulative tokens through each segment: `cumulative[i]` = tokens of segments 0..i. */
  cumulative: number[]
  /** Tokens appended after the last segment that are never cached (assistant priming). */
  trailing: number
  /** Every input token of the request. */
  total: number
  /**
   * Set when the first `count` segments are the very segment objects of an earlier prompt's `segments`
   * array: consumers comparing with that prompt can skip them.
   */
  base?: { segments: readonly Segment[]; count: number }
}

/** Why a request read less than an unchanged extension of the previous one could have. */
export type Shortfall = 'below-minimum' | 'ttl-expired' | 'lookback-miss' | 'routing-miss'

/** The disjoint counts of one simulated request. */
export interface SimCounts {
  input: number
  read: number
  write: number
  write5m: number
  write1h: number
  uncached: number
  output: number
}

/** What a simulation of one request says beyond its counts. */
export interface SimTrace {
  /** Tokens an unchanged extension of this request could read next, and the virtual time it stays readable. */
  carry: { tokens: number; liveUntil: number }
  /** Set when the cache held a matching prefix that this request could not read, and why. */
  shortfall?: Shortfall
  /** Machine the request was routed to (OpenAI). */
  machine?: number
  /** Longest prefix (tokens) found in the cache before minimums, granularity and liveness. */
  matched: number
}

/** One simulated request. */
export interface Simulation {
  counts: SimCounts
  trace: SimTrace
  prompt: Prompt
}

/** A request the real provider would refuse: status and the provider's own error body. */
export class SimulatorRejection extends Error {
  readonly status: number
  readonly body: Record<string, unknown>
  constructor(status: number, message: string, body: Record<string, unknown>) {
    super(message)
    this.name = 'SimulatorRejection'
    this.status = status
    this.body = body
  }
}
