// Anthropic's prompt cache: entries are written only at breakpoints (explicit `cache_control` blocks
// and the automatic one), and each breakpoint reads by walking back a bounded window of positions for
// an entry an earlier request wrote. Lifetimes run from request start and a read refreshes the entry.

import { CachelabError } from '../../harness/errors.ts'
import { type AnthropicCacheRules, type ModelEntry, simulationModel } from '../catalog.ts'
import { type AnthropicLayout, invalidRequest, linearizeAnthropic } from './linearize-anthropic.ts'
import type { SimulationRequest, SimulatorOptions } from './openai.ts'
import { outputTokens } from './output.ts'
import { scaleTokens, tokensThrough } from './prompt.ts'
import { sharedTokenCounter, type TokenCounter } from './tokens.ts'
import { PrefixTrie, type TrieNode } from './trie.ts'
import type { Breakpoint, Prompt, Shortfall, Simulation } from './types.ts'

/** A cache entry: the prefix through its trie node, written at an earlier request's breakpoint. */
interface CacheEntry {
  /** Virtual time (seconds) from which the entry is no longer readable. */
  expiresAt: number
  /** The lifetime a read renews, from the reading request's start. */
  ttlSeconds: number
}

/** A trie node's state: an entry where some request wrote one, nothing on the nodes in between. */
type Slot = CacheEntry | undefined

/** A breakpoint of one request: the segment it sits on and its marker. */
interface Placed {
  index: number
  breakpoint: Breakpoint
}

/** Models one workspace's Anthropic prompt cache, one prefix trie per model. */
export class AnthropicCacheSimulator {
  private readonly counter: TokenCounter
  private readonly models: readonly ModelEntry[] | undefined
  private readonly tries = new Map<string, PrefixTrie<Slot>>()

  constructor(options: SimulatorOptions = {}) {
    this.counter = options.counter ?? sharedTokenCounter
    this.models = options.models
  }

  /** The linearized prompt of a body, the automatic breakpoint placed, without touching cache state. */
  linearize(body: Record<string, unknown>): Prompt {
    const { rules, entry } = this.rules(body)
    return linearizeAnthropic(body, this.counter, entry.tokenScale, rules.ttlSeconds).prompt
  }

  simulate(request: SimulationRequest): Simulation {
    const { body, at } = request
    const { rules, entry } = this.rules(body)
    const layout = linearizeAnthropic(body, this.counter, entry.tokenScale, rules.ttlSeconds, entry.route)
    const prompt = layout.prompt
    const output = scaleTokens(outputTokens(request.output, this.counter), entry.tokenScale)
    const placed = validBreakpoints(layout, automaticBreakpoint(layout), rules)
    const trie = this.trie(entry.model)
    const path = trie.walk(prompt)
    const live = (node: TrieNode<Slot> | undefined) => node?.data !== undefined && at < node.data.expiresAt

    // Read: each breakpoint walks back through its window; the deepest hit over all of them is read.
    const segments = prompt.segments
    const inWindow: boolean[] = []
    let readDepth = 0
    for (const { index } of placed) {
      let found = false
      let distance = 0
      for (let cursor = index; cursor >= 0; cursor -= 1) {
        // One position more per block, except within a run of tool_use (or tool_result) blocks.
        const next = segments[cursor + 1]
        const run = segments[cursor]?.run
        if (cursor < index && !(rules.collapseToolRuns && run !== undefined && next?.run === run))
          distance += 1
        if (distance >= rules.lookback) break
        inWindow[cursor] = true
        if (!found && live(path[cursor])) {
          found = true
          readDepth = Math.max(readDepth, cursor + 1)
        }
      }
    }
    // What the cache held before this request changes it: the deepest entry, and why it went unread.
    const matched = tokensThrough(prompt, deepestEntry(path))
    const missed = missedEntry(path, readDepth, inWindow, at)
    const readNode = path[readDepth - 1]
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
    const read = tokensThrough(prompt, readDepth)
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
        ...shortfallOf(missed, lastWriteDepth > readDepth, belowMinimum),
      },
    }
  }

  private rules(body: Record<string, unknown>): { rules: AnthropicCacheRules; entry: ModelEntry } {
    const name = typeof body.model === 'string' ? body.model : ''
    const entry = this.models?.find((model) => model.model === name) ?? simulationModel('anthropic', name)
    if (entry.cache.kind !== 'anthropic') {
      throw new CachelabError('invariant', `model ${name} has ${entry.cache.kind} cache rules, not anthropic`)
    }
    return { rules: entry.cache, entry }
  }

  private trie(model: string): PrefixTrie<Slot> {
    let trie = this.tries.get(model)
    if (trie === undefined) {
      trie = new PrefixTrie<Slot>()
      this.tries.set(model, trie)
    }
    return trie
  }
}

/**
 * The automatic breakpoint: top-level `cache_control` on the last block that may carry one, walking back
 * over thinking and empty text. A same-TTL marker already there makes it a no-op; a different TTL is a 400.
 */
export function automaticBreakpoint(layout: AnthropicLayout): Placed | undefined {
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
  automatic: Placed | undefined,
  rules: AnthropicCacheRules,
): Placed[] {
  const placed: Placed[] = []
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

/**
 * Why an entry deeper than the read went unread, judged by the deepest such entry: it had expired, or it
 * was live but outside every lookback window.
 */
function missedEntry(
  path: readonly TrieNode<Slot>[],
  readDepth: number,
  inWindow: readonly boolean[],
  at: number,
): Shortfall | undefined {
  for (let depth = path.length; depth > readDepth; depth -= 1) {
    const data = path[depth - 1]?.data
    if (data === undefined) continue
    if (at >= data.expiresAt) return 'ttl-expired'
    if (inWindow[depth - 1] !== true) return 'lookback-miss'
  }
  return undefined
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
