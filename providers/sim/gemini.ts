// Gemini's caches. Implicit: every request's prompt is kept as a prefix, free of charge, and a later
// request reads the longest live prefix it repeats, from the model's minimum on; with no published
// lifetime, a prefix is assumed live for a few minutes after it was last sent. Explicit: `cachedContents`
// the account creates with a TTL; a request naming one reads all of it. Writes are never billed apart.

import { type Random, seededRandom } from '../../harness/random.ts'
import { type GeminiCacheRules, type ModelEntry, simulationModel } from '../catalog.ts'
import { counterfactualTrace, type Probe, previousModel, UNBOUNDED_READ } from './counterfactual.ts'
import { linearizeCachedContent, linearizeGemini } from './linearize-gemini.ts'
import { floorToIncrement } from './openai-prefix.ts'
import { billedOutputTokens } from './output.ts'
import { scaleTokens, tokensThrough, unwrittenCounts } from './prompt.ts'
import { sharedTokenCounter, type TokenCounter } from './tokens.ts'
import { childrenOf, PrefixTrie, type TrieNode } from './trie.ts'
import {
  type Prompt,
  type ReadBounds,
  type Shortfall,
  type Simulation,
  type SimulationRequest,
  type SimulatorOptions,
  SimulatorRejection,
  type TrieMeter,
} from './types.ts'

/** When an implicit prefix node was last sent. */
interface NodeState {
  lastUsed: number
}

/** An explicit cache of the account (`cachedContents/<id>`). */
export interface ExplicitCache {
  /** `cachedContents/<id>`. */
  name: string
  /** The model without its `models/` prefix. */
  model: string
  displayName?: string
  /** Virtual times (seconds) of creation, last update and expiry. */
  createdAt: number
  updatedAt: number
  expiresAt: number
  /** The prompt it holds. */
  prompt: Prompt
  /** Tokens it holds (`usageMetadata.totalTokenCount`). */
  tokens: number
}

/** What a prompt read from the implicit cache. */
interface ImplicitRead {
  read: number
  matched: number
  /** Tokens of the prompt through the deepest node stored on its path, live or not. */
  stored: number
  shortfall?: Shortfall
}

/** The status names of Google's error envelope, by HTTP status. */
const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  // Google's front end reports a payload over its limit as an invalid argument.
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
}

/** A refusal in Google's error envelope: `{error: {code, message, status}}`. */
export function geminiRejection(status: number, message: string): SimulatorRejection {
  return new SimulatorRejection(status, message, {
    error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN' },
  })
}

/** A model name without the `models/` prefix the REST resources carry. */
export function bareModel(name: string): string {
  return name.startsWith('models/') ? name.slice('models/'.length) : name
}

/** Seconds of a protobuf Duration in JSON (`"300s"`, `"1.5s"`), or undefined when malformed. */
export function durationSeconds(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined
  const match = /^(\d+(?:\.\d{1,9})?)s$/.exec(value)
  return match === null ? undefined : Number(match[1])
}

export class GeminiCacheSimulator {
  private readonly counter: TokenCounter
  private readonly models: readonly ModelEntry[] | undefined
  private readonly random: Random | undefined
  /** One implicit prefix store per model. */
  private readonly tries = new Map<string, PrefixTrie<NodeState>>()
  /**
   * Per implicit store, the latest time it was renewed at and whether renewals came in time order. While
   * they did, `lastUsed` never grows from a node to its child (an insert renews a whole path from the root
   * to the latest time, and nothing else writes it), so the live part of a path is found by bisection.
   */
  private readonly renewals = new WeakMap<PrefixTrie<NodeState>, { latest: number; ordered: boolean }>()
  /**
   * Per implicit store, the path the latest insert renewed and the one state its nodes share. Renewing a
   * path that extends it is then one write, not one per node: a growing session's requests stay flat.
   */
  private readonly renewed = new WeakMap<
    PrefixTrie<NodeState>,
    { last: TrieNode<NodeState>; length: number; state: NodeState }
  >()
  /** The account's explicit caches by name. */
  private readonly caches = new Map<string, ExplicitCache>()
  private serial = 0
  /** Where the implicit tries count their estimated bytes (`CacheSimulators` shares one meter). */
  private readonly meter: TrieMeter

  constructor(options: SimulatorOptions = {}) {
    this.meter = options.meter ?? { bytes: 0 }
    this.counter = options.counter ?? sharedTokenCounter
    this.models = options.models
    this.random = options.seed === undefined ? undefined : seededRandom(options.seed)
  }

  /** The prompt of a body; a `cachedContent` the account holds leads it (expired or not). */
  linearize(body: Record<string, unknown>): Prompt {
    const entry = this.model(body)
    const cached = typeof body.cachedContent === 'string' ? this.caches.get(body.cachedContent) : undefined
    return linearizeGemini(body, this.counter, entry.tokenScale, cached?.prompt)
  }

  simulate(request: SimulationRequest): Simulation {
    const { body, at } = request
    const entry = this.model(body)
    const rules = entry.cache as GeminiCacheRules
    const explicit = this.explicitOf(body, entry.model, at)
    const prompt = linearizeGemini(body, this.counter, entry.tokenScale, explicit?.prompt)
    const output = billedOutputTokens(request, this.counter, entry.tokenScale)
    const trie = this.trieOf(entry.model)
    const found = this.readImplicit(trie, prompt, at, rules, entry.tokenScale, UNBOUNDED_READ)
    // No guarantee: with a seed, a share of the implicit hits miss (a server without the prefix).
    const missed = found.read > 0 && this.random !== undefined && this.random.next() < rules.implicitMissRate
    const implicit: ImplicitRead = missed ? { ...found, read: 0, shortfall: 'routing-miss' } : found
    // Assumed: a request that names an explicit cache reads exactly that cache (its usage reports the
    // cache's size), and implicit caching does not add to it.
    const readOf = (probed: ImplicitRead, limit: number) =>
      explicit === undefined ? probed.read : Math.min(explicit.tokens, limit)
    const read = readOf(implicit, Number.POSITIVE_INFINITY)
    // Staying on the model the previous request ran on would have read that model's implicit store (an
    // explicit cache belongs to one model: the other model's request could not have named this one).
    const stayed = previousModel(request.previous, entry, (model) => this.model({ model }))
    const measured = counterfactualTrace({
      previous: request.previous,
      current: prompt,
      actual: { read, shortfall: explicit === undefined ? implicit.shortfall : undefined },
      probe: (candidate, bounds) => {
        const probed = this.readImplicit(trie, candidate, at, rules, entry.tokenScale, bounds)
        // A request naming an explicit cache reads exactly it: the implicit store has no say.
        if (explicit !== undefined) return { read: readOf(probed, bounds.limit), shortfall: undefined }
        return { read: probed.read, shortfall: probed.shortfall, stored: probed.stored }
      },
      otherwise: 'routing-miss',
      switched: stayed === undefined ? undefined : this.implicitProbe(stayed, at),
      at,
      meter: this.meter,
    })
    // The whole prompt is kept (free), and every node it passes is renewed.
    const renewal = this.renewals.get(trie)
    if (renewal === undefined) this.renewals.set(trie, { latest: at, ordered: true })
    else {
      if (at < renewal.latest) renewal.ordered = false
      renewal.latest = Math.max(renewal.latest, at)
    }
    this.renew(
      trie,
      trie.insert(prompt, prompt.segments.length, () => ({ lastUsed: at })),
      at,
    )
    return {
      prompt,
      counts: unwrittenCounts(prompt, read, output),
      trace: {
        carry: {
          tokens: floorToIncrement(
            tokensThrough(prompt, prompt.segments.length),
            rules.minTokens,
            rules.increment,
          ),
          liveUntil: at + rules.implicitRetentionSeconds,
        },
        matched: implicit.matched,
        ...(implicit.shortfall !== undefined ? { shortfall: implicit.shortfall } : {}),
        ...measured,
      },
    }
  }

  /**
   * Renew every node of `path` to `at`. The nodes of the path renewed last share one state (nothing else
   * holds it), so when `path` extends that path, writing the shared state renews its part at once and only
   * the nodes past it are given the state; any other path gets a state of its own, node by node.
   */
  private renew(trie: PrefixTrie<NodeState>, path: Array<TrieNode<NodeState>>, at: number): void {
    const last = path.at(-1)
    if (last === undefined) return
    const previous = this.renewed.get(trie)
    let state: NodeState
    let from = 0
    if (
      previous !== undefined &&
      previous.length <= path.length &&
      path[previous.length - 1] === previous.last
    ) {
      state = previous.state
      state.lastUsed = at
      from = previous.length
    } else state = { lastUsed: at }
    for (let index = from; index < path.length; index += 1) (path[index] as TrieNode<NodeState>).data = state
    this.renewed.set(trie, { last, length: path.length, state })
  }

  /**
   * Create an explicit cache from a `cachedContents` body (`model`, `contents`, `systemInstruction`,
   * `tools`, `toolConfig`, `ttl` or `expireTime`, `displayName`); refused as the API refuses it.
   */
  createCache(resource: Record<string, unknown>, at: number, epochSeconds: number): ExplicitCache {
    if (typeof resource.model !== 'string' || resource.model === '')
      throw geminiRejection(400, 'cachedContent.model is required.')
    const model = bareModel(resource.model)
    const entry = this.entryOf(model)
    const rules = entry.cache as GeminiCacheRules
    const expiresAt = this.expiryOf(resource, at, epochSeconds, rules.explicitDefaultTtlSeconds)
    const prompt = linearizeCachedContent(resource, this.counter, entry.tokenScale)
    const tokens = prompt.total
    if (tokens < rules.minTokens) {
      throw geminiRejection(
        400,
        `Cached content is too small. total_token_count=${tokens}, min_total_token_count=${rules.minTokens}`,
      )
    }
    this.serial += 1
    const cache: ExplicitCache = {
      name: `cachedContents/sim${String(this.serial).padStart(6, '0')}`,
      model,
      ...(typeof resource.displayName === 'string' ? { displayName: resource.displayName } : {}),
      createdAt: at,
      updatedAt: at,
      expiresAt,
      prompt,
      tokens,
    }
    this.caches.set(cache.name, cache)
    return cache
  }

  /** A live explicit cache by name; an unknown or expired one is the API's 403. */
  getCache(name: string, at: number): ExplicitCache {
    const cache = this.caches.get(name)
    if (cache === undefined || cache.expiresAt <= at) {
      if (cache !== undefined) this.caches.delete(name)
      throw geminiRejection(403, 'CachedContent not found (or permission denied)')
    }
    return cache
  }

  /** Change a live cache's expiry (`ttl` or `expireTime`, the only fields an update may change). */
  updateCache(
    name: string,
    update: Record<string, unknown>,
    at: number,
    epochSeconds: number,
  ): ExplicitCache {
    const cache = this.getCache(name, at)
    const entry = this.entryOf(cache.model)
    const rules = entry.cache as GeminiCacheRules
    cache.expiresAt = this.expiryOf(update, at, epochSeconds, rules.explicitDefaultTtlSeconds)
    cache.updatedAt = at
    return cache
  }

  /** Delete a cache; an unknown one is the API's 403. */
  deleteCache(name: string, at: number): void {
    this.getCache(name, at)
    this.caches.delete(name)
  }

  /** The live caches, oldest first. */
  listCaches(at: number): ExplicitCache[] {
    return [...this.caches.values()].filter((cache) => cache.expiresAt > at)
  }

  /** The explicit cache a request names, checked as the API checks it; undefined when it names none. */
  private explicitOf(body: Record<string, unknown>, model: string, at: number): ExplicitCache | undefined {
    if (body.cachedContent === undefined) return undefined
    if (typeof body.cachedContent !== 'string')
      throw geminiRejection(400, "Invalid value at 'cached_content'")
    if (body.systemInstruction !== undefined || body.tools !== undefined || body.toolConfig !== undefined) {
      throw geminiRejection(
        400,
        'CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.\n\nProposed fix: move those values to CachedContent from GenerateContent request.',
      )
    }
    const cache = this.getCache(body.cachedContent, at)
    if (cache.model !== model) {
      throw geminiRejection(
        400,
        `Model used by GenerateContent request (models/${model}) and CachedContent (models/${cache.model}) has to be the same.`,
      )
    }
    return cache
  }

  /** The expiry a create or update asks for: `ttl`, else `expireTime`, else the default lifetime. */
  private expiryOf(
    resource: Record<string, unknown>,
    at: number,
    epochSeconds: number,
    defaultTtl: number,
  ): number {
    if (resource.ttl !== undefined) {
      const seconds = durationSeconds(resource.ttl)
      if (seconds === undefined)
        throw geminiRejection(
          400,
          `Invalid value at 'cached_content.ttl' (type.googleapis.com/google.protobuf.Duration), ${JSON.stringify(resource.ttl)}`,
        )
      return at + seconds
    }
    if (resource.expireTime !== undefined) {
      const time = typeof resource.expireTime === 'string' ? Date.parse(resource.expireTime) : Number.NaN
      if (Number.isNaN(time))
        throw geminiRejection(
          400,
          `Invalid value at 'cached_content.expire_time' (type.googleapis.com/google.protobuf.Timestamp), ${JSON.stringify(resource.expireTime)}`,
        )
      return time / 1000 - epochSeconds
    }
    return at + defaultTtl
  }

  /**
   * The implicit read of a prompt: the longest prefix of live stored nodes, into the first segment not
   * stored whole, floored to the minimum. `bounds` caps it and lifts expiry for a counterfactual probe.
   */
  private readImplicit(
    trie: PrefixTrie<NodeState>,
    prompt: Prompt,
    at: number,
    rules: GeminiCacheRules,
    scale: number,
    bounds: ReadBounds,
  ): ImplicitRead {
    const path = trie.walk(prompt, prompt.segments.length)
    const live = (state: NodeState | undefined) =>
      state !== undefined && (bounds.ignoreExpiry || at - state.lastUsed < rules.implicitRetentionSeconds)
    let depth = 0
    if (this.renewals.get(trie)?.ordered !== false) {
      // Liveness only falls along the path (see `renewals`): the first node not live, by bisection.
      let high = path.length
      while (depth < high) {
        const middle = (depth + high) >>> 1
        if (live(path[middle]?.data)) depth = middle + 1
        else high = middle
      }
    } else while (depth < path.length && live(path[depth]?.data)) depth += 1
    const partial = depth === path.length ? this.partialMatch(trie, path, prompt, depth, live, scale) : 0
    const matched = Math.min(tokensThrough(prompt, depth) + partial, bounds.limit)
    const read = floorToIncrement(matched, rules.minTokens, rules.increment)
    const stored = tokensThrough(prompt, path.length)
    let shortfall: Shortfall | undefined
    if (floorToIncrement(Math.min(stored, bounds.limit), rules.minTokens, rules.increment) > read)
      shortfall = 'ttl-expired'
    else if (read === 0 && matched > 0) shortfall = 'below-minimum'
    return { read, matched, stored, ...(shortfall !== undefined ? { shortfall } : {}) }
  }

  /** A read of a model's implicit store at `at` under its rules, changing nothing: a counterfactual's probe. */
  private implicitProbe(entry: ModelEntry, at: number): Probe {
    const rules = entry.cache as GeminiCacheRules
    const trie = this.tries.get(entry.model)
    return (candidate, bounds) => {
      if (trie === undefined) return { read: 0, shortfall: undefined, stored: 0 }
      const probed = this.readImplicit(trie, candidate, at, rules, entry.tokenScale, bounds)
      return { read: probed.read, shortfall: probed.shortfall, stored: probed.stored }
    }
  }

  /** Tokens matched inside the first segment not stored whole: the same frame, a common token prefix. */
  private partialMatch(
    trie: PrefixTrie<NodeState>,
    path: Array<TrieNode<NodeState>>,
    prompt: Prompt,
    depth: number,
    live: (state: NodeState | undefined) => boolean,
    scale: number,
  ): number {
    const segment = prompt.segments[depth]
    if (segment === undefined) return 0
    let best = 0
    for (const child of childrenOf(path[depth - 1] ?? trie.root)) {
      const stored = child.segment
      if (stored === undefined || stored.frame !== segment.frame || !live(child.data)) continue
      const common = this.counter.commonPrefixOf(stored, segment)
      best = Math.max(best, segment.framing + scaleTokens(common, scale))
    }
    return Math.min(best, segment.tokens)
  }

  /**
   * Remove the implicit prefixes no request at `at` or later can read (idle past the model's assumed
   * retention) and the prefixes that lead only to them; explicit caches live until deleted or expired.
   */
  prune(at: number): number {
    let removed = 0
    for (const [model, trie] of this.tries) {
      const retention = this.retentionOf(model)
      removed += trie.prune((state) => state === undefined || at - state.lastUsed >= retention)
      if (trie.root.children.size === 0) this.tries.delete(model)
    }
    return removed
  }

  private retentionOf(model: string): number {
    const { cache } = this.entryOf(model)
    return cache.kind === 'gemini' ? cache.implicitRetentionSeconds : Number.POSITIVE_INFINITY
  }

  private trieOf(model: string): PrefixTrie<NodeState> {
    let trie = this.tries.get(model)
    if (trie === undefined) {
      trie = new PrefixTrie<NodeState>(this.meter)
      this.tries.set(model, trie)
    }
    return trie
  }

  private model(body: Record<string, unknown>): ModelEntry {
    return this.entryOf(bareModel(typeof body.model === 'string' ? body.model : ''))
  }

  private entryOf(name: string): ModelEntry {
    return this.models?.find((entry) => entry.model === name) ?? simulationModel('gemini', name)
  }
}
