// The counterfactual request behind a step's ideal read: the previous request of the session kept
// unchanged, extended by what the current request added, on the model the previous request ran on.
// Simulators read it with their own rules, so the ideal is never a second formula of granularity,
// minimums, lookback or TTL.

import type { ModelEntry } from '../catalog.ts'
import { sameSegment } from './trie.ts'
import type {
  Counterfactual,
  PlacedBreakpoint,
  PreviousRequest,
  Prompt,
  ReadBounds,
  Segment,
  Shortfall,
  TrieMeter,
} from './types.ts'

/** Index of the first segment where `current` stops extending `previous`; undefined when it extends it. */
export function firstDivergence(previous: Prompt, current: Prompt): number | undefined {
  const limit = previous.segments.length
  const start = current.base?.segments === previous.segments ? Math.min(current.base.count, limit) : 0
  for (let index = start; index < limit; index += 1) {
    const before = previous.segments[index]
    const now = current.segments[index]
    if (before !== now && !sameSegment(before, now)) return index
  }
  return undefined
}

/**
 * Where the segments the current request added begin: after the last segment equal to the previous
 * request's last one (history was rewritten before it), else after the previous request's length.
 */
function tailStart(previous: Prompt, current: Prompt, divergence: number): number {
  const last = previous.segments.at(-1)
  for (let index = current.segments.length - 1; index >= divergence; index -= 1) {
    const segment = current.segments[index]
    if (segment === last || sameSegment(segment, last)) return index + 1
  }
  return Math.min(previous.segments.length, current.segments.length)
}

/**
 * The request an unchanged extension of `previous` would have been: its segments, then the segments
 * `current` added after them, cut to what `current` can hold (a request that shrank cannot read more
 * than it sends). Breakpoints follow `current` where the two agree (before the divergence) and on the
 * added segments, and the previous request's own on the part it kept; a cut keeps `current`'s last one
 * at the cut. Returns `current` itself when it extends `previous`.
 */
export function counterfactualPrompt(previous: Prompt, current: Prompt): Prompt {
  const divergence = firstDivergence(previous, current)
  if (divergence === undefined) return current
  const start = tailStart(previous, current, divergence)
  const offset = previous.segments.length - start
  const shared = (current.placed ?? []).filter((placed) => placed.index < divergence)
  // The previous request's own breakpoints over the part it keeps: the rewritten part carried them (a
  // marker on a system prompt that was then rewritten), and an unchanged request would have too.
  const kept = (previous.placed ?? []).filter((placed) => placed.index >= divergence)
  const added: PlacedBreakpoint[] =
    start >= current.segments.length
      ? kept
      : [
          ...kept,
          ...(current.placed ?? [])
            .filter((placed) => placed.index >= start)
            .map((placed) => ({ index: placed.index + offset, breakpoint: placed.breakpoint })),
        ]
  const segments: Segment[] = previous.segments.slice()
  const cumulative = previous.cumulative.slice()
  let total = previous.cumulative.at(-1) ?? 0
  for (const segment of current.segments.slice(start)) {
    total += segment.tokens
    segments.push(segment)
    cumulative.push(total)
  }
  let placed = shared.concat(added)
  const limit = cacheableTokens(current)
  if (total > limit) {
    let count = cumulative.findIndex((tokens) => tokens > limit)
    if (count < 0) count = cumulative.length
    segments.length = count
    cumulative.length = count
    total = cumulative.at(-1) ?? 0
    const last = current.placed?.at(-1)
    placed = placed.filter((entry) => entry.index < count)
    if (last !== undefined && count > 0 && placed.at(-1)?.index !== count - 1)
      placed.push({ index: count - 1, breakpoint: last.breakpoint })
  }
  return {
    segments,
    cumulative,
    trailing: current.trailing,
    total: total + current.trailing,
    base: { segments: previous.segments, count: Math.min(previous.segments.length, segments.length) },
    placed,
  }
}

/** Tokens of `prompt` a cache may hold at most: everything but the never-cached trailing tokens. */
export function cacheableTokens(prompt: Prompt): number {
  return prompt.total - prompt.trailing
}

/** What a read of one prompt found: its tokens, and why an entry deeper than it went unread. */
export interface ProbeResult {
  read: number
  shortfall: Shortfall | undefined
  /**
   * Tokens of the prompt through the deepest node the cache still holds on its path, live or not; absent
   * where the read does not come from stored prefixes (a request that uses no caching, an explicit cache).
   */
  stored?: number
}

/** A simulator's read of a prompt under some bounds, from its current cache state, without changing it. */
export type Probe = (prompt: Prompt, bounds: ReadBounds) => ProbeResult

/** The bounds of a request's own read. */
export const UNBOUNDED_READ: ReadBounds = {
  limit: Number.POSITIVE_INFINITY,
  ignoreExpiry: false,
  unbounded: false,
}

/**
 * The catalog entry of the model the previous request ran on, when it is another model than the current
 * request's: staying would have read that model's cache. `resolve` is the simulator's own lookup, and
 * entries are compared by the model id its stores are keyed by, not by the names the bodies gave (two
 * names of one model, such as Gemini's `models/…` and its bare id, are no switch).
 */
export function previousModel(
  previous: PreviousRequest | undefined,
  current: ModelEntry,
  resolve: (model: string) => ModelEntry,
): ModelEntry | undefined {
  if (previous?.model === undefined) return undefined
  const entry = resolve(previous.model)
  return entry.model === current.model ? undefined : entry
}

/** What a simulator gives the counterfactual of one request, between its read and write phases. */
export interface CounterfactualInput {
  /** The previous request of the session; without one there is no counterfactual. */
  previous: PreviousRequest | undefined
  current: Prompt
  /** The request's own read. */
  actual: ProbeResult
  /** Reads the current model's cache. */
  probe: Probe
  /** The cause when the strict read reports none (a request routed to another machine than the previous one). */
  otherwise: Shortfall
  /**
   * Given when the previous request ran on another model (`previousModel`): reads that model's cache with
   * its rules, and is the one the counterfactual reads.
   */
  switched?: Probe | undefined
  /** The request's virtual time. */
  at: number
  /** The meter of the simulator's tries: what pruning under a memory budget may have removed. */
  meter: TrieMeter
}

/** The trace field of a simulation given the previous request of its session (none without one). */
export function counterfactualTrace(input: CounterfactualInput): { counterfactual?: Counterfactual } {
  if (input.previous === undefined) return {}
  return { counterfactual: counterfactual(input, input.previous) }
}

/**
 * The counterfactual of the current request against `previous`: its ideal (the strict read of an
 * unchanged extension, capped at what the current request holds, never below the actual read) and its
 * warm read (the same with expiry and lookback lifted, or what the previous request left cached where
 * pruning removed it: `removedCarry`). After a model switch the actual read came from another cache than
 * the counterfactual's, so even an extension is probed.
 */
function counterfactual(input: CounterfactualInput, previous: PreviousRequest): Counterfactual {
  const { current, actual, otherwise, switched } = input
  const candidate = counterfactualPrompt(previous.prompt, current)
  const limit = cacheableTokens(current)
  const probe = switched ?? input.probe
  const strict =
    candidate === current && switched === undefined
      ? actual
      : probe(candidate, { limit, ignoreExpiry: false, unbounded: false })
  const ideal = Math.max(actual.read, strict.read)
  const lifted = probe(candidate, { limit, ignoreExpiry: true, unbounded: true })
  const removed = removedCarry(previous, lifted.stored, limit, input.at, input.meter)
  const warm = Math.max(ideal, lifted.read, removed?.tokens ?? 0)
  if (warm === ideal) return { ideal, warm }
  if (removed !== undefined && removed.tokens > lifted.read) return { ideal, warm, cause: removed.cause }
  const blocked = strict.shortfall === 'below-minimum' ? undefined : strict.shortfall
  return { ideal, warm, cause: blocked ?? otherwise }
}

/**
 * What the previous request left cached (`carry`) when the cache no longer holds the path to it although
 * it once did: pruning under a memory budget removed it, expired (`ttl-expired`, the request came after
 * `liveUntil`) or evicted while live (`evicted`). A warm cache would have read those tokens. Undefined
 * when the path is still there (the probe's own read says it all), when nothing was ever pruned (a fresh
 * cache never held it), or when the request holds fewer tokens than the carry (which shorter entry it
 * would have read is not kept).
 */
function removedCarry(
  previous: PreviousRequest,
  stored: number | undefined,
  limit: number,
  at: number,
  meter: TrieMeter,
): { tokens: number; cause: Shortfall } | undefined {
  const carry = previous.carry
  if (carry === undefined || stored === undefined || carry.tokens === 0 || carry.tokens > limit)
    return undefined
  // The previous request's own path must be missing: an answer rendered otherwise than the next request
  // resent it (DeepSeek's carry reaches past the prompt) leaves a shorter path with nothing removed.
  if (stored >= Math.min(carry.tokens, cacheableTokens(previous.prompt))) return undefined
  const pruned = carry.liveUntil <= (meter.expiredBy ?? Number.NEGATIVE_INFINITY)
  if (!pruned && (meter.evicted ?? 0) === 0) return undefined
  return { tokens: carry.tokens, cause: at >= carry.liveUntil ? 'ttl-expired' : 'evicted' }
}
