// OpenAI's cache before GPT-5.6: automatic prefix caching from 1024 tokens in 128-token steps on the
// machine a request is routed to, free writes of the whole prompt, and idle eviction.

import type { Random } from '../../harness/random.ts'
import type { OpenAIPrefixRules } from '../catalog.ts'
import { counterfactualTrace, type Probe, UNBOUNDED_READ } from './counterfactual.ts'
import { invalidRequest } from './openai-cache-fields.ts'
import { machine, type OpenAIRouter, type Route } from './openai-routing.ts'
import { scaleTokens, tokensThrough, unwrittenCounts } from './prompt.ts'
import type { TokenCounter } from './tokens.ts'
import type { PrefixTrie, TrieNode } from './trie.ts'
import type {
  Prompt,
  ReadBounds,
  Segment,
  Shortfall,
  Simulation,
  SimulationRequest,
  TrieMeter,
} from './types.ts'

/**
 * When a group of cached prefix nodes was last used and how long it stays idle before eviction. The
 * nodes of one session's path share one: the session's next request, which extends that path, renews
 * them all by renewing it.
 */
interface Touch {
  lastUsed: number
  /** Idle lifetime in seconds. */
  retention: number
}

interface PrefixEntry {
  touch: Touch
}

/** What a prompt read from a machine's prefix store, and the machine's last path it shares. */
interface PrefixRead {
  read: number
  /** Tokens matched before the minimum and increments. */
  matched: number
  /** Leading segments shared with the machine's last path. */
  shared: number
  /** Tokens of the prompt through the deepest node stored on its path, live or not. */
  stored: number
  last: LastPath | undefined
  shortfall?: Shortfall
}

/** The last request a machine served: its prompt's segments, its path, and the touch its nodes share. */
interface LastPath {
  segments: readonly Segment[]
  path: Array<TrieNode<PrefixEntry>>
  touch: Touch
  /** Every node of the path shares `touch` (none kept a longer lifetime of its own). */
  uniform: boolean
}

/** The prefix stores of every machine, by model, and the last path each served. */
export class OpenAIPrefixCache {
  private readonly counter: TokenCounter
  private readonly random: Random | undefined
  private readonly router: OpenAIRouter
  /** Prefix stores by model and machine: a cached prefix is one model's KV state, never another's. */
  private readonly machines = new Map<string, PrefixTrie<PrefixEntry>>()
  private readonly lastPaths = new WeakMap<PrefixTrie<PrefixEntry>, LastPath>()
  private readonly meter: TrieMeter

  /** `random` is the simulator's one seeded stream, shared with the router's overflow picks. */
  constructor(counter: TokenCounter, random: Random | undefined, router: OpenAIRouter, meter: TrieMeter) {
    this.counter = counter
    this.random = random
    this.router = router
    this.meter = meter
  }

  /** Remove the prefixes evicted for idleness by `at` (a later request can read none of them). */
  prune(at: number): number {
    let removed = 0
    for (const [key, trie] of this.machines) {
      const pruned = trie.prune(
        (entry) => entry === undefined || at - entry.touch.lastUsed >= entry.touch.retention,
      )
      // The machine's last path may hold removed nodes: the next request walks the trie afresh.
      if (pruned > 0) this.lastPaths.delete(trie)
      removed += pruned
      if (trie.root.children.size === 0) this.machines.delete(key)
    }
    return removed
  }

  /**
   * Simulate one request of a model before GPT-5.6; `scale` is the model's token scale. `switched` reads
   * the cache of the model the previous request ran on, when that was another model.
   */
  simulate(
    rules: OpenAIPrefixRules,
    request: SimulationRequest,
    prompt: Prompt,
    output: number,
    scale: number,
    switched?: Probe,
  ): Simulation {
    const { body, at } = request
    const retention = this.retentionSeconds(rules, body)
    const route = this.router.route(rules.routingTokens, rules.machines, rules.overflowRpm, body, prompt, at)
    const model = String(body.model)
    const trie = machine(this.machines, model, route.machine, this.meter)
    const cacheable = prompt.segments.length
    const found = this.readPrefix(trie, prompt, at, rules, scale, UNBOUNDED_READ)
    const { read, matched, shared, last } = found
    const alive = (touch: Touch) => at - touch.lastUsed < touch.retention
    const measured = counterfactualTrace({
      previous: request.previous,
      current: prompt,
      actual: { read, shortfall: found.shortfall },
      probe: this.probe(rules, body, at, scale, route, request.previous?.machine),
      otherwise: 'routing-miss',
      switched,
      at,
      meter: this.meter,
    })

    // The whole prompt is cached on the machine after the request (writes are free before GPT-5.6).
    const extendsLast = last?.uniform === true && shared === last.path.length && shared === prompt.base?.count
    const touch: Touch = extendsLast ? last.touch : { lastUsed: at, retention }
    if (extendsLast) {
      // Renewing the shared touch renews every node of the last path at once.
      touch.retention = alive(touch) ? Math.max(touch.retention, retention) : retention
      touch.lastUsed = at
    }
    const nodes = trie.insert(prompt, cacheable, () => ({ touch }))
    let uniform = true
    for (let index = extendsLast ? shared : 0; index < nodes.length; index += 1) {
      const data = (nodes[index] as TrieNode<PrefixEntry>).data
      if (data === undefined || data.touch === touch) continue
      if (alive(data.touch) && data.touch.retention > touch.retention) {
        // A node still alive keeps the longer lifetime an earlier request promised it, on a touch of its own.
        data.touch = { lastUsed: at, retention: data.touch.retention }
        uniform = false
      } else {
        data.touch = touch
      }
    }
    this.lastPaths.set(trie, { segments: prompt.segments, path: nodes, touch, uniform })
    const cacheableTokens = tokensThrough(prompt, cacheable)
    return {
      prompt,
      counts: unwrittenCounts(prompt, read, output),
      trace: {
        carry: {
          tokens: floorToIncrement(cacheableTokens, rules.minTokens, rules.increment),
          liveUntil: at + retention,
        },
        machine: route.machine,
        matched,
        ...(found.shortfall !== undefined ? { shortfall: found.shortfall } : {}),
        ...measured,
      },
    }
  }

  /**
   * A read of one model's prefix stores (the model `body` names) at `at`, changing nothing: a
   * counterfactual's probe. An unchanged extension is routed as the request was (`route`, none after a
   * model switch); a warm cache is the previous request's machine (`home`).
   */
  probe(
    rules: OpenAIPrefixRules,
    body: Record<string, unknown>,
    at: number,
    scale: number,
    route: Route | undefined,
    home: number | undefined,
  ): Probe {
    const model = String(body.model)
    return (candidate, bounds) => {
      const index =
        bounds.unbounded && home !== undefined
          ? home
          : this.router.candidateRoute(rules.routingTokens, rules.machines, body, candidate, route).machine
      const probed = this.readPrefix(
        machine(this.machines, model, index, this.meter),
        candidate,
        at,
        rules,
        scale,
        bounds,
      )
      return { read: probed.read, shortfall: probed.shortfall, stored: probed.stored }
    }
  }

  /**
   * What a prompt reads from one machine's prefix store: the longest live stored prefix, into the first
   * segment not stored whole, in whole increments past the minimum. `bounds` caps the matched tokens and
   * lifts idle eviction for a counterfactual probe.
   */
  private readPrefix(
    trie: PrefixTrie<PrefixEntry>,
    prompt: Prompt,
    at: number,
    rules: OpenAIPrefixRules,
    scale: number,
    bounds: ReadBounds,
  ): PrefixRead {
    const path = trie.walk(prompt, prompt.segments.length)
    const alive = (touch: Touch) => bounds.ignoreExpiry || at - touch.lastUsed < touch.retention
    const live = (data: PrefixEntry | undefined) => data !== undefined && alive(data.touch)
    // The part of the path the machine's last request shared (the same segments) shares its touch.
    const last = this.lastPaths.get(trie)
    const shared =
      last !== undefined && prompt.base?.segments === last.segments
        ? Math.min(prompt.base.count, last.path.length, path.length)
        : 0
    // While the shared touch lives, every shared node does (a node that kept a longer lifetime of its own
    // outlives it); once it has expired, nodes that kept their own may still live, so each is checked.
    let liveDepth = shared > 0 && last !== undefined && alive(last.touch) ? shared : 0
    let checked: Touch | undefined
    for (; liveDepth < path.length; liveDepth += 1) {
      const touch = (path[liveDepth] as TrieNode<PrefixEntry>).data?.touch
      if (touch === undefined) break
      if (touch !== checked && !alive(touch)) break
      checked = touch
    }
    const partial =
      liveDepth === path.length ? this.partialMatch(trie, path, prompt, liveDepth, live, scale) : 0
    const matched = Math.min(tokensThrough(prompt, liveDepth) + partial, bounds.limit)
    const read = floorToIncrement(matched, rules.minTokens, rules.increment)
    const stored = tokensThrough(prompt, path.length)
    let shortfall: Shortfall | undefined
    if (floorToIncrement(Math.min(stored, bounds.limit), rules.minTokens, rules.increment) > read)
      shortfall = 'ttl-expired'
    else if (read === 0 && matched > 0) shortfall = 'below-minimum'
    return { read, matched, shared, last, stored, ...(shortfall !== undefined ? { shortfall } : {}) }
  }

  /** The idle lifetime the request asks for (400 for a retention the model refuses); sampled with a seed. */
  private retentionSeconds(rules: OpenAIPrefixRules, body: Record<string, unknown>): number {
    const asked = body.prompt_cache_retention ?? rules.defaultRetention
    if (asked === '24h' || asked === 'in-memory-24h') {
      if (!rules.extendedRetention) {
        throw invalidRequest(
          `prompt_cache_retention '24h' is not supported with this model`,
          'prompt_cache_retention',
        )
      }
      return rules.extendedRetentionSeconds
    }
    if (asked !== 'in_memory' && asked !== null) {
      throw invalidRequest(
        `Invalid value for 'prompt_cache_retention': ${JSON.stringify(asked)}`,
        'prompt_cache_retention',
      )
    }
    if (this.random === undefined) return rules.idleEvictionSeconds
    return (
      rules.idleEvictionSeconds +
      this.random.next() * (rules.idleEvictionMaxSeconds - rules.idleEvictionSeconds)
    )
  }

  /** Tokens matched inside the first segment that is not stored whole: same framing, common token prefix. */
  private partialMatch<T>(
    trie: PrefixTrie<T>,
    path: TrieNode<T>[],
    prompt: Prompt,
    depth: number,
    live: (data: T | undefined) => boolean,
    scale: number,
  ): number {
    const segment = prompt.segments[depth]
    if (segment === undefined) return 0
    const parent = path[depth - 1] ?? trie.root
    const common = trie.longestShared(
      parent,
      segment,
      (child) => live(child.data),
      (stored) => this.counter.tokensOf(stored),
    )
    if (common === undefined) return 0
    return Math.min(segment.framing + scaleTokens(common, scale), segment.tokens)
  }
}

/** The cacheable part of `matched` tokens: 0 below the minimum, then whole increments past it. */
export function floorToIncrement(matched: number, minimum: number, increment: number): number {
  if (matched < minimum) return 0
  return minimum + Math.floor((matched - minimum) / increment) * increment
}
