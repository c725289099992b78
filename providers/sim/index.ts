// The cache simulators of every vendor behind one call: simulate a wire body of a given API. One
// instance models one account's caches; reset by making a new one. Under a memory budget (serve), the
// tries are pruned of expired entries whenever their estimated bytes pass it.

import type { CompatibleProviderId } from '../../harness/types.ts'
import { compatibleProviderOfApi, type WireApi } from '../types.ts'
import { AnthropicCacheSimulator } from './anthropic.ts'
import { BedrockCacheSimulator } from './bedrock.ts'
import { CompatibleCacheSimulator } from './compatible.ts'
import { DeepSeekCacheSimulator } from './deepseek.ts'
import { GeminiCacheSimulator } from './gemini.ts'
import { OpenAICacheSimulator } from './openai.ts'
import type { TrieMeter } from './trie.ts'
import type { Prompt, Simulation, SimulationRequest, SimulatorOptions } from './types.ts'

export type { SimulationRequest, SimulatorOptions }

/** What pruning under the memory budget has done so far (serve's health endpoint reports it). */
export interface PruneStats {
  /** Estimated bytes the tries hold now. */
  bytes: number
  /** The budget, when there is one. */
  budget: number | undefined
  /** Times the tries were pruned. */
  prunes: number
  /** Trie nodes removed in all. */
  removed: number
  /**
   * True when the latest pruning left more than the budget: what is left can still be read (live entries
   * are never evicted early, that would change the counts), so memory grows past the budget.
   */
  overBudget: boolean
}

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
  private readonly meter: TrieMeter = { bytes: 0 }
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
    const simulation = this.dispatch(api, request)
    this.latest = Math.max(this.latest, request.at)
    if (this.meter.bytes > this.threshold) this.prune(this.latest)
    return simulation
  }

  /**
   * Remove every entry that no request at `at` or later can read, and the prefixes that lead only to
   * such entries. Pruning walks every trie, so it runs again only once the tries have doubled since (or
   * passed the budget): its cost per request stays constant however much is live.
   */
  prune(at: number): number {
    let removed =
      this.anthropic.prune(at) +
      this.openai.prune(at) +
      this.deepseek.prune(at) +
      this.bedrock.prune(at) +
      this.gemini.prune(at)
    for (const simulator of this.compatibles.values()) removed += simulator.prune(at)
    this.prunes += 1
    this.removed += removed
    const budget = this.budget ?? Number.POSITIVE_INFINITY
    this.overBudget = this.meter.bytes > budget
    this.threshold = Math.max(budget, 2 * this.meter.bytes)
    return removed
  }

  /** The tries' estimated bytes and what pruning has done. */
  get pruneStats(): PruneStats {
    return {
      bytes: this.meter.bytes,
      budget: this.budget,
      prunes: this.prunes,
      removed: this.removed,
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
