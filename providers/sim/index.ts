// The cache simulators of every vendor behind one call: simulate a wire body of a given API. One
// instance models one account's caches; reset by making a new one. Under a memory budget (serve), the
// tries are pruned of expired entries whenever their estimated bytes pass it, and if that is not enough,
// the least recently used entries are evicted too (a later request then reads less than the provider's
// cache would give it; the health endpoint counts them).

import type { CompatibleProviderId } from '../../harness/types.ts'
import { compatibleProviderOfApi, type WireApi } from '../types.ts'
import { AnthropicCacheSimulator } from './anthropic.ts'
import { BedrockCacheSimulator } from './bedrock.ts'
import { CompatibleCacheSimulator } from './compatible.ts'
import { DeepSeekCacheSimulator } from './deepseek.ts'
import { GeminiCacheSimulator } from './gemini.ts'
import { OpenAICacheSimulator } from './openai.ts'
import type { Prompt, Simulation, SimulationRequest, SimulatorOptions, TrieMeter } from './types.ts'

export type { SimulationRequest, SimulatorOptions }

/** What pruning under the memory budget has done so far (serve's health endpoint reports it). */
export interface PruneStats {
  /** Estimated bytes the tries hold now. */
  bytes: number
  /** The budget, when there is one. */
  budget: number | undefined
  /** Times the tries were pruned. */
  prunes: number
  /** Trie nodes removed in all (expired and evicted). */
  removed: number
  /**
   * Entries evicted while still live, least recently used first, because expired ones were not enough
   * to bring the tries under the budget: a later request that would have read them reads less.
   */
  evicted: number
  /** True when the latest pruning left more than the budget (one request alone holds more than it). */
  overBudget: boolean
}

/** Eviction brings the tries down to this part of the budget, so that it runs again only much later. */
const EVICTION_TARGET = 3 / 4

export class CacheSimulators {
  readonly anthropic: AnthropicCacheSimulator
  readonly openai: OpenAICacheSimulator
  readonly deepseek: DeepSeekCacheSimulator
  readonly bedrock: BedrockCacheSimulator
  readonly gemini: GeminiCacheSimulator
  private readonly options: SimulatorOptions
  /** One cache per compatible provider, made on its first request. */
  private readonly compatibles = new Map<CompatibleProviderId, CompatibleCacheSimulator>()
  /** The estimated bytes of every trie of the simulators. */
  private readonly meter: TrieMeter = { bytes: 0, tick: 0, evicted: 0, tries: new Set() }
  private readonly budget: number | undefined
  /** Bytes past which the next pruning runs: the budget, or twice what the last pruning left. */
  private threshold: number
  /** The latest request time seen: entries expired then are expired for every later request too. */
  private latest = Number.NEGATIVE_INFINITY
  private prunes = 0
  private removed = 0
  private overBudget = false

  constructor(options: SimulatorOptions = {}) {
    const shared = { ...options, meter: this.meter }
    this.anthropic = new AnthropicCacheSimulator(shared)
    this.openai = new OpenAICacheSimulator(shared)
    this.deepseek = new DeepSeekCacheSimulator(shared)
    this.bedrock = new BedrockCacheSimulator(shared)
    this.gemini = new GeminiCacheSimulator(shared)
    this.options = shared
    this.budget = options.memoryBytes
    this.threshold = options.memoryBytes ?? Number.POSITIVE_INFINITY
  }

  /** The cache of a compatible provider, made on its first request. */
  compatible(provider: CompatibleProviderId): CompatibleCacheSimulator {
    let simulator = this.compatibles.get(provider)
    if (simulator === undefined) {
      simulator = new CompatibleCacheSimulator(provider, this.options)
      this.compatibles.set(provider, simulator)
    }
    return simulator
  }

  /** Simulate one request of `api`; throws SimulatorRejection for a request the provider refuses. */
  simulate(api: WireApi, request: SimulationRequest): Simulation {
    this.meter.tick = (this.meter.tick ?? 0) + 1
    const simulation = this.dispatch(api, request)
    this.latest = Math.max(this.latest, request.at)
    if (this.meter.bytes > this.threshold) this.prune(this.latest)
    return simulation
  }

  /**
   * The clock moved on to `at` (serve's clock endpoint): under a budget, remove what expired by then at
   * once rather than at the next request past the budget. Nothing live is touched.
   */
  advanceTo(at: number): void {
    if (this.budget === undefined || at <= this.latest) return
    this.latest = at
    this.pruneExpired(at)
  }

  /**
   * Remove every entry that no request at `at` or later can read, and the prefixes that lead only to
   * such entries; then, if the tries still pass the budget, the least recently used entries until they
   * hold three quarters of it. Pruning walks every trie, so it runs again only once the tries have
   * passed the budget again: its cost per request stays constant however much is live.
   */
  prune(at: number): number {
    let removed = this.pruneExpired(at)
    const budget = this.budget ?? Number.POSITIVE_INFINITY
    if (this.meter.bytes > budget) removed += this.evict(budget * EVICTION_TARGET)
    this.overBudget = this.meter.bytes > budget
    this.threshold = Math.max(budget, 2 * this.meter.bytes)
    return removed
  }

  private pruneExpired(at: number): number {
    let removed =
      this.anthropic.prune(at) +
      this.openai.prune(at) +
      this.deepseek.prune(at) +
      this.bedrock.prune(at) +
      this.gemini.prune(at)
    for (const simulator of this.compatibles.values()) removed += simulator.prune(at)
    // A counterfactual then knows that what a session's previous request left may be gone (see `Carry`).
    this.meter.expiredBy = Math.max(this.meter.expiredBy ?? Number.NEGATIVE_INFINITY, at)
    this.prunes += 1
    this.removed += removed
    return removed
  }

  /**
   * Evict the least recently used nodes until the tries hold at most `target` bytes: the nodes used
   * before a cutoff tick, the cutoff found from every node's bytes by the tick it was last used at. The
   * current request's nodes are never evicted (its tick is the latest). Expired entries go on the way.
   */
  private evict(target: number): number {
    const byUse = new Map<number, number>()
    for (const trie of this.meter.tries ?? []) trie.bytesByUse(byUse)
    const ticks = [...byUse.keys()].sort((left, right) => left - right)
    const current = this.meter.tick ?? 0
    let excess = this.meter.bytes - target
    let cutoff = Number.NEGATIVE_INFINITY
    for (const tick of ticks) {
      if (excess <= 0 || tick >= current) break
      excess -= byUse.get(tick) ?? 0
      cutoff = tick + 1
    }
    if (cutoff === Number.NEGATIVE_INFINITY) return 0
    this.meter.evictBefore = cutoff
    try {
      return this.pruneExpired(this.latest)
    } finally {
      delete this.meter.evictBefore
    }
  }

  /** The tries' estimated bytes and what pruning has done. */
  get pruneStats(): PruneStats {
    return {
      bytes: this.meter.bytes,
      budget: this.budget,
      prunes: this.prunes,
      removed: this.removed,
      evicted: this.meter.evicted ?? 0,
      overBudget: this.overBudget,
    }
  }

  private dispatch(api: WireApi, request: SimulationRequest): Simulation {
    switch (api) {
      case 'openai-chat':
        return this.openai.simulate('chat', request)
      case 'openai-responses':
        return this.openai.simulate('responses', request)
      case 'deepseek-chat':
        return this.deepseek.simulate('chat', request)
      case 'anthropic-messages':
        return this.anthropic.simulate(request)
      case 'bedrock-converse':
        return this.bedrock.simulate(request)
      case 'gemini-generate':
        return this.gemini.simulate(request)
      default:
        return this.compatible(compatibleProviderOfApi(api)).simulate(request)
    }
  }

  /** The linearized prompt of a body, without touching cache state. */
  linearize(api: WireApi, body: Record<string, unknown>): Prompt {
    switch (api) {
      case 'openai-chat':
        return this.openai.linearize('chat', body)
      case 'openai-responses':
        return this.openai.linearize('responses', body)
      case 'deepseek-chat':
        return this.deepseek.linearize(body)
      case 'anthropic-messages':
        return this.anthropic.linearize(body)
      case 'bedrock-converse':
        return this.bedrock.linearize(body)
      case 'gemini-generate':
        return this.gemini.linearize(body)
      default:
        return this.compatible(compatibleProviderOfApi(api)).linearize(body)
    }
  }
}
