// The simulators' vocabulary: a wire request linearized into segments (the provider's prompt order),
// the counts a simulation produces, and the trace the reports read to explain them.

import type { AssistantMessage } from '../../harness/types.ts'
import type { ModelEntry } from '../catalog.ts'
import type { TokenCounter } from './tokens.ts'

/** Which top-level part of a wire body a segment renders. */
export type WirePart = 'tools' | 'system' | 'messages' | 'input' | 'response_format' | 'contents'

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

/** A breakpoint as a simulator applied it: the segment it sits on and its marker. */
export interface PlacedBreakpoint {
  index: number
  breakpoint: Breakpoint
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
  /**
   * The breakpoints the simulator applied, in prompt order: explicit markers and the ones the provider
   * places itself (Anthropic's automatic, OpenAI's implicit). Set on a simulated request's prompt.
   */
  placed?: readonly PlacedBreakpoint[]
}

/**
 * Why a request read less than an unchanged extension of the previous one could have. `evicted`: the
 * simulator dropped a still-live entry to keep within serve's memory budget (see `CacheSimulators`).
 */
export type Shortfall = 'below-minimum' | 'ttl-expired' | 'lookback-miss' | 'routing-miss' | 'evicted'

/** The disjoint counts of one simulated request. */
export interface SimCounts {
  input: number
  read: number
  write: number
  write5m: number
  write1h: number
  uncached: number
  /** Output tokens, reasoning included. */
  output: number
  /** Part of `output` spent reasoning, when the answer reasoned (set by the mock that decided the answer). */
  reasoning?: number
}

/**
 * What the request would have read had it extended the previous request of its session unchanged: the
 * simulator's own read of that counterfactual request, from the same cache state at the same time.
 */
export interface Counterfactual {
  /** The read under every rule (granularity, minimum, lookback, routing, TTL); never below the actual read. */
  ideal: number
  /**
   * The read with the cache as warm as the previous request left it: nothing expired, no lookback or read
   * horizon, the previous request's machine. `warm − ideal` is what the provider side cost this request.
   */
  warm: number
  /** Why `warm` exceeds `ideal`; undefined when they are equal. */
  cause?: Shortfall
}

/** What a request left cached: the tokens an unchanged extension of it could read next, and until when. */
export interface Carry {
  tokens: number
  /** The virtual time (seconds) from which those tokens are no longer readable. */
  liveUntil: number
}

/** What a simulation of one request says beyond its counts. */
export interface SimTrace {
  /** Tokens an unchanged extension of this request could read next, and the virtual time it stays readable. */
  carry: Carry
  /** Set when the simulation was given the previous request of the session. */
  counterfactual?: Counterfactual
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

/** The previous request of a session, against which a simulation computes its counterfactual. */
export interface PreviousRequest {
  prompt: Prompt
  /** Machine it was routed to (OpenAI). */
  machine?: number
  /**
   * The model the previous request ran on, as its body named it; absent means the same model as the
   * request simulated. On another model the counterfactual reads that model's cache, with its rules.
   */
  model?: string
  /**
   * What the previous request left cached (its `SimTrace.carry`). When pruning under a memory budget has
   * removed those entries, the counterfactual still knows what a warm cache would have read, and whether
   * they expired (`ttl-expired`) or were evicted while live (`evicted`).
   */
  carry?: Carry
}

/** One request to simulate. */
export interface SimulationRequest {
  body: Record<string, unknown>
  /** Virtual time of the request start, in seconds. */
  at: number
  /** What the model answers (scripted), for output tokens and output-end cache units. */
  output: AssistantMessage
  /**
   * Output tokens of the answer before the model's token scale, when the caller decided them: reasoning
   * included, cut at the request's output cap. Otherwise counted from `output`.
   */
  outputTokens?: number
  /** The answer's reasoning text: DeepSeek renders it into the next request when the answer calls tools. */
  reasoning?: string
  /** The previous request of the same session: the simulation then also computes the counterfactual. */
  previous?: PreviousRequest
  /** A compatible provider's routing key sent as a header (xAI's `x-grok-conv-id`), which the body lacks. */
  routingKey?: string
}

/** Options shared by every simulator. */
export interface SimulatorOptions {
  counter?: TokenCounter
  /** Seed for the provider's best-effort behaviour; randomness is off when absent. */
  seed?: number
  /** OpenAI: route traffic above the per-prefix rate to extra machines (needs `seed`). */
  overflow?: boolean
  /** Replace catalog entries (tests and what-if runs change rules this way). */
  models?: readonly ModelEntry[]
  /** Where the simulator's tries count their estimated bytes (`CacheSimulators` shares one meter). */
  meter?: TrieMeter
  /**
   * `CacheSimulators`: the estimated bytes its tries may hold before it prunes what no later request can
   * read (expired entries). Unbounded when absent, as in `run`, whose numbers must never depend on it.
   */
  memoryBytes?: number
}

/**
 * How a read is bounded when a simulator probes a counterfactual request: a token budget (the request
 * that is really sent holds no more), and the rules a warm cache would lift.
 */
export interface ReadBounds {
  /** Entries and units deeper than this many tokens are not readable. */
  limit: number
  /** Read entries whatever their age (a warm cache). */
  ignoreExpiry: boolean
  /** Read without a lookback window or read horizon (a warm cache). */
  unbounded: boolean
}

/** What eviction asks of a trie on a meter (trie.ts's `PrefixTrie`): its estimated bytes by last use. */
export interface MeteredTrie {
  /** Add each node's estimated bytes to `into` under the tick it was last used at. */
  bytesByUse(into: Map<number, number>): void
}

/**
 * The estimated bytes the tries of one simulator family hold, shared by its tries so that one budget
 * covers them all. Estimates, not measurements: they are deterministic, so pruning happens at the same
 * request on every run. `CacheSimulators` also keeps here what evicting the least recently used needs.
 */
export interface TrieMeter {
  bytes: number
  /** The current request's number: walks and inserts mark their nodes with it (0 when nobody counts). */
  tick?: number
  /** Set while evicting: nodes last used before this tick are removed by `prune` whatever `dead` says. */
  evictBefore?: number
  /** Nodes `prune` removed only because `evictBefore` said so (still live for their simulator). */
  evicted?: number
  /**
   * The latest time pruning removed what had expired by (`CacheSimulators`): an entry that stopped being
   * readable by then may be gone from the tries. Unset while nothing was ever pruned.
   */
  expiredBy?: number
  /** The tries that hold nodes on this meter, for eviction to survey (a trie joins on its first node). */
  tries?: Set<MeteredTrie>
}
