// Anthropic's prompt cache: entries are written only at breakpoints (explicit `cache_control` blocks
// and the automatic one), and each breakpoint reads by walking back a bounded window of positions for
// an entry an earlier request wrote. Lifetimes run from request start and a read refreshes the entry.

import { CachelabError } from '../../harness/errors.ts'
import { type AnthropicCacheRules, type ModelEntry, simulationModel } from '../catalog.ts'
import { counterfactualTrace, type Probe, previousModel, UNBOUNDED_READ } from './counterfactual.ts'
import { type AnthropicLayout, invalidRequest, linearizeAnthropic } from './linearize-anthropic.ts'
import { billedOutputTokens } from './output.ts'
import { tokensThrough } from './prompt.ts'
import { sharedTokenCounter, type TokenCounter } from './tokens.ts'
import { PrefixTrie, type TrieNode } from './trie.ts'
import type {
  PlacedBreakpoint,
  Prompt,
  ReadBounds,
  Shortfall,
  Simulation,
  SimulationRequest,
  SimulatorOptions,
  TrieMeter,
} from './types.ts'

/** A cache entry: the prefix through its trie node, written at an earlier request's breakpoint. */
interface CacheEntry {
  /** Virtual time (seconds) from which the entry is no longer readable. */
  expiresAt: number
  /** The lifetime a read renews, from the reading request's start. */
  ttlSeconds: number
}

/** A trie node's state: an entry where some request wrote one, nothing on the nodes in between. */
type Slot = CacheEntry | undefined

/** Models one workspace's Anthropic prompt cache, one prefix trie per model. */
export class AnthropicCacheSimulator {
  private readonly counter: TokenCounter
  private readonly models: readonly ModelEntry[] | undefined
  private readonly tries = new Map<string, PrefixTrie<Slot>>()
  private readonly meter: TrieMeter

  constructor(options: SimulatorOptions = {}) {
    this.counter = options.counter ?? sharedTokenCounter
    this.models = options.models
    this.meter = options.meter ?? { bytes: 0 }
  }

  /** Remove the entries expired by `at` and the prefixes without an entry that lead only to them. */
  prune(at: number): number {
    let removed = 0
    for (const [model, trie] of this.tries) {
      removed += trie.prune((slot) => slot === undefined || at >= slot.expiresAt)
      if (trie.root.children.size === 0) this.tries.delete(model)
    }
    return removed
  }

  /** The linearized prompt of a body, the automatic breakpoint placed, without touching cache state. */
  linearize(body: Record<string, unknown>): Prompt {
    const { rules, entry } = this.rules(body)
    return linearizeAnthropic(
      body,
      this.counter,
      entry.tokenScale,
      rules.ttlSeconds,
      undefined,
      rules.thinkingHistory,
      rules.billingBlock,
    ).prompt
  }

  simulate(request: SimulationRequest): Simulation {
    const { body, at } = request
    const { rules, entry } = this.rules(body)
    const layout = linearizeAnthropic(
      body,
      this.counter,
      entry.tokenScale,
      rules.ttlSeconds,
      entry.route,
      rules.thinkingHistory,
      rules.billingBlock,
    )
    const placed = validBreakpoints(layout, automaticBreakpoint(layout), rules)
    const prompt: Prompt = { ...layout.prompt, placed }
    const output = billedOutputTokens(request, this.counter, entry.tokenScale)
    const trie = this.trie(entry.model)
    const found = readEntries(trie, prompt, at, rules, UNBOUNDED_READ)
    const readDepth = found.depth
    const read = tokensThrough(prompt, readDepth)
    const matched = tokensThrough(prompt, deepestEntry(found.path))
    // Staying on the model the previous request ran on would have read that model's cache.
    const stayed = previousModel(request.previous, entry, (model) => this.entryOf(model))
    const measured = counterfactualTrace({
      previous: request.previous,
      current: prompt,
      actual: { read, shortfall: found.missed },
      probe: this.probe(entry, at),
      otherwise: 'lookback-miss',
      switched: stayed === undefined ? undefined : this.probe(stayed, at),
      at,
      meter: this.meter,
    })
    const readNode = found.path[readDepth - 1]
    if (readNode?.data !== undefined) {
      readNode.data.expiresAt = Math.max(readNode.data.expiresAt, at + readNode.data.ttlSeconds)
    }

    // Write: every breakpoint past the read whose prefix reaches the minimum writes or renews an entry.
    let longWriteDepth = readDepth
    let lastWriteDepth = readDepth
    let belowMinimum = false
    for (const { index, breakpoint } of placed) {
      const depth = index + 1
      if (depth <= readDepth) continue
      if (tokensThrough(prompt, depth) < rules.minTokens) {
        belowMinimum = true
        continue
      }
      const node = trie.insert(prompt, depth, () => undefined)[depth - 1]
      if (node === undefined) continue
      node.data = { expiresAt: at + breakpoint.ttlSeconds, ttlSeconds: breakpoint.ttlSeconds }
      if (breakpoint.ttl === '1h') longWriteDepth = depth
      lastWriteDepth = depth
    }

    // The documented split: read through A, 1h writes A→B, 5m writes B→C, the rest uncached.
    const write1h = tokensThrough(prompt, longWriteDepth) - read
    const write5m = tokensThrough(prompt, lastWriteDepth) - tokensThrough(prompt, longWriteDepth)
    const cached = Math.max(read, tokensThrough(prompt, lastWriteDepth))

    const carryDepth = Math.max(readDepth, lastWriteDepth)
    const carryEntry = carryDepth > 0 ? trie.walk(prompt, carryDepth)[carryDepth - 1]?.data : undefined
    return {
      prompt,
      counts: {
        input: prompt.total,
        read,
        write: write1h + write5m,
        write5m,
        write1h,
        uncached: prompt.total - cached,
        output,
      },
      trace: {
        carry: {
          tokens: carryEntry === undefined ? 0 : tokensThrough(prompt, carryDepth),
          liveUntil: carryEntry?.expiresAt ?? at,
        },
        matched,
        ...shortfallOf(found.missed, lastWriteDepth > readDepth, belowMinimum),
        ...measured,
      },
    }
  }

  /** A read of a model's cache at `at` under its rules, changing nothing: a counterfactual's probe. */
  private probe(entry: ModelEntry, at: number): Probe {
    const rules = anthropicRules(entry)
    const trie = this.tries.get(entry.model)
    return (candidate, bounds) => {
      if (trie === undefined) return { read: 0, shortfall: undefined, stored: 0 }
      const probed = readEntries(trie, candidate, at, rules, bounds)
      return {
        read: tokensThrough(candidate, probed.depth),
        shortfall: probed.missed,
        stored: tokensThrough(candidate, probed.path.length),
      }
    }
  }

  private rules(body: Record<string, unknown>): { rules: AnthropicCacheRules; entry: ModelEntry } {
    const entry = this.entryOf(typeof body.model === 'string' ? body.model : '')
    return { rules: anthropicRules(entry), entry }
  }

  private entryOf(name: string): ModelEntry {
    return this.models?.find((model) => model.model === name) ?? simulationModel('anthropic', name)
  }

  private trie(model: string): PrefixTrie<Slot> {
    let trie = this.tries.get(model)
    if (trie === undefined) {
      trie = new PrefixTrie<Slot>(this.meter)
      this.tries.set(model, trie)
    }
    return trie
  }
}

/** A model's Anthropic cache rules; a model with another vendor's rules is a broken catalog. */
function anthropicRules(entry: ModelEntry): AnthropicCacheRules {
  if (entry.cache.kind !== 'anthropic') {
    throw new CachelabError(
      'invariant',
      `model ${entry.model} has ${entry.cache.kind} cache rules, not anthropic`,
    )
  }
  return entry.cache
}

/**
 * The automatic breakpoint: top-level `cache_control` on the last block that may carry one, walking back
 * over thinking and empty text. A same-TTL marker already there makes it a no-op; a different TTL is a 400.
 */
export function automaticBreakpoint(layout: AnthropicLayout): PlacedBreakpoint | undefined {
  const marker = layout.automatic
  if (marker === undefined) return undefined
  const segments = layout.prompt.segments
  for (let index = segments.length - 1; index >= 0; index -= 1) {
    const segment = segments[index]
    if (segment === undefined || layout.eligible[index] !== true) continue
    if (segment.breakpoint === undefined) return { index, breakpoint: marker }
    if (segment.breakpoint.ttl !== marker.ttl) {
      // The documented outcome is a 400; this message is ours (the real wording is unconfirmed).
      throw invalidRequest(
        `The top-level cache_control ttl '${marker.ttl}' conflicts with the cache_control ttl '${segment.breakpoint.ttl}' already on the last cacheable block.`,
      )
    }
    return undefined
  }
  return undefined
}

/** The request's breakpoints in prompt order, after the documented limits: count, then TTL order. */
function validBreakpoints(
  layout: AnthropicLayout,
  automatic: PlacedBreakpoint | undefined,
  rules: AnthropicCacheRules,
): PlacedBreakpoint[] {
  const placed: PlacedBreakpoint[] = []
  for (const index of layout.marked) {
    const breakpoint = layout.prompt.segments[index]?.breakpoint
    if (breakpoint !== undefined) placed.push({ index, breakpoint })
  }
  if (automatic !== undefined) placed.push(automatic)
  placed.sort((left, right) => left.index - right.index)
  if (placed.length > rules.maxBreakpoints) {
    // Verbatim from many client repositories.
    throw invalidRequest(
      `A maximum of ${rules.maxBreakpoints} blocks with cache_control may be provided. Found ${placed.length}.`,
    )
  }
  let shortSeen = false
  for (const { breakpoint } of placed) {
    if (breakpoint.ttl === '5m') shortSeen = true
    else if (shortSeen) {
      // "Cache entries with longer TTL must appear before shorter TTLs"; the 400's wording is unconfirmed.
      throw invalidRequest(
        "A cache_control block with ttl '1h' must not come after a cache_control block with ttl '5m'.",
      )
    }
  }
  return placed
}

/** Depth of the deepest node on the path that holds an entry, live or not. */
function deepestEntry(path: readonly TrieNode<Slot>[]): number {
  for (let depth = path.length; depth > 0; depth -= 1) {
    if (path[depth - 1]?.data !== undefined) return depth
  }
  return 0
}

/** What a request's breakpoints read from the cache. */
interface EntryRead {
  /** Segments read: the deepest live entry any breakpoint's window reached. */
  depth: number
  /** The request's stored path. */
  path: TrieNode<Slot>[]
  /** Why an entry deeper than the read went unread, judged by the deepest such entry. */
  missed: Shortfall | undefined
}

/**
 * Each breakpoint walks back through its window (a run of tool_use or tool_result blocks counts once
 * under the current rule) for a live entry; the deepest hit over all breakpoints is read. `bounds` caps the
 * readable depth in tokens and lifts expiry or the window for a counterfactual probe.
 *
 * A walk stops at its first hit or at the end of its window, so a read costs the distance back to the
 * entry, not the length of the prompt. Without a window (an unbounded probe) every breakpoint's window
 * reaches the start and the deepest breakpoint's hit is the deepest of all: only it walks.
 */
function readEntries(
  trie: PrefixTrie<Slot>,
  prompt: Prompt,
  at: number,
  rules: AnthropicCacheRules,
  bounds: ReadBounds,
): EntryRead {
  const path = trie.walk(prompt)
  const segments = prompt.segments
  const readable = (depth: number) => {
    const data = path[depth - 1]?.data
    return (
      data !== undefined &&
      (bounds.ignoreExpiry || at < data.expiresAt) &&
      tokensThrough(prompt, depth) <= bounds.limit
    )
  }
  const placed = prompt.placed ?? []
  /** Each breakpoint's window: the positions `low..high` it reached. */
  const windows: Array<{ low: number; high: number }> = []
  let depth = 0
  if (bounds.unbounded) {
    const deepest = placed.reduce((high, { index }) => Math.max(high, index), -1)
    if (deepest >= 0) windows.push({ low: 0, high: deepest })
    for (let cursor = deepest; cursor >= 0; cursor -= 1) {
      if (readable(cursor + 1)) {
        depth = cursor + 1
        break
      }
    }
  } else {
    for (const { index } of placed) {
      let found = false
      let distance = 0
      let low = index + 1
      for (let cursor = index; cursor >= 0; cursor -= 1) {
        // One position more per block, except within a run of tool_use (or tool_result) blocks.
        const next = segments[cursor + 1]
        const run = segments[cursor]?.run
        if (cursor < index && !(rules.collapseToolRuns && run !== undefined && next?.run === run))
          distance += 1
        if (distance >= rules.lookback) break
        low = cursor
        if (!found && readable(cursor + 1)) {
          found = true
          depth = Math.max(depth, cursor + 1)
        }
      }
      if (low <= index) windows.push({ low, high: index })
    }
  }
  const inWindow = (position: number) =>
    windows.some((window) => window.low <= position && position <= window.high)
  // Why an entry deeper than the read (and within the bounds) went unread: expired, or outside every window.
  let missed: Shortfall | undefined
  for (let deeper = path.length; deeper > depth && missed === undefined; deeper -= 1) {
    const data = path[deeper - 1]?.data
    if (data === undefined || tokensThrough(prompt, deeper) > bounds.limit) continue
    if (at >= data.expiresAt) missed = 'ttl-expired'
    else if (!inWindow(deeper - 1)) missed = 'lookback-miss'
  }
  return { depth, path, missed }
}

/** The trace's shortfall: a missed entry, else a request that could write nothing below the minimum. */
function shortfallOf(
  missed: Shortfall | undefined,
  wrote: boolean,
  belowMinimum: boolean,
): { shortfall?: Shortfall } {
  if (missed !== undefined) return { shortfall: missed }
  return !wrote && belowMinimum ? { shortfall: 'below-minimum' } : {}
}
