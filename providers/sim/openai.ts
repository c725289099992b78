// OpenAI's prompt cache: the model picks the cache a request meets, prefixes before GPT-5.6
// (openai-prefix.ts) or breakpoints after (openai-breakpoints.ts), on one routed fleet (openai-routing.ts).

import { seededRandom } from '../../harness/random.ts'
import { type ModelEntry, type OpenAIPrefixRules, simulationModel, type Vendor } from '../catalog.ts'
import { linearizeChat, linearizeResponses } from './linearize-openai.ts'
import { OpenAIBreakpointCache } from './openai-breakpoints.ts'
import { cacheOptions } from './openai-cache-fields.ts'
import { OpenAIPrefixCache } from './openai-prefix.ts'
import { OpenAIRouter } from './openai-routing.ts'
import { billedOutputTokens } from './output.ts'
import { sharedTokenCounter, type TokenCounter } from './tokens.ts'
import type { Prompt, Simulation, SimulationRequest, SimulatorOptions } from './types.ts'

export { writeWindow } from './openai-breakpoints.ts'
export { floorToIncrement } from './openai-prefix.ts'

type Api = 'chat' | 'responses'

/**
 * Models a fleet of OpenAI cache machines. One instance is one organization's cache. A compatible provider
 * runs its own instance (`vendor`), whose models carry the provider's prefix rules.
 */
export class OpenAICacheSimulator {
  private readonly vendor: Vendor
  private readonly counter: TokenCounter
  private readonly models: readonly ModelEntry[] | undefined
  private readonly prefixCache: OpenAIPrefixCache
  private readonly breakpointCache: OpenAIBreakpointCache

  constructor(options: SimulatorOptions = {}, vendor: Vendor = 'openai') {
    this.vendor = vendor
    this.counter = options.counter ?? sharedTokenCounter
    this.models = options.models
    // One seeded stream for the fleet: overflow picks and eviction times draw from it in request order.
    const random = options.seed === undefined ? undefined : seededRandom(options.seed)
    const router = new OpenAIRouter(this.counter, random, options.overflow === true)
    const meter = options.meter ?? { bytes: 0 }
    this.prefixCache = new OpenAIPrefixCache(this.counter, random, router, meter)
    this.breakpointCache = new OpenAIBreakpointCache(router, meter)
  }

  /** Remove the cache entries no request can read at `at` or later (see `CacheSimulators.prune`). */
  prune(at: number): number {
    return this.prefixCache.prune(at) + this.breakpointCache.prune(at)
  }

  /** Linearize a body of the given wire API with the model's token scale. */
  linearize(api: Api, body: Record<string, unknown>): Prompt {
    const entry = this.model(body)
    return api === 'chat'
      ? linearizeChat(body, this.counter, entry.tokenScale)
      : linearizeResponses(body, this.counter, entry.tokenScale)
  }

  /** Whether the model reports cache writes (GPT-5.6 and later). */
  reportsWrites(model: string): boolean {
    return this.model({ model }).cache.kind === 'openai-breakpoint'
  }

  /** Simulate one request; throws the API's 400 (`SimulatorRejection`) for a body it refuses. */
  simulate(api: Api, request: SimulationRequest): Simulation {
    const entry = this.model(request.body)
    const options = cacheOptions(api, request.body, entry.cache.kind === 'openai-breakpoint')
    const prompt = this.linearize(api, request.body)
    const output = billedOutputTokens(request, this.counter, entry.tokenScale)
    return entry.cache.kind === 'openai-breakpoint'
      ? this.breakpointCache.simulate(entry.cache, options, request, prompt, output)
      : this.prefixCache.simulate(entry.cache as OpenAIPrefixRules, request, prompt, output, entry.tokenScale)
  }

  private model(body: Record<string, unknown>): ModelEntry {
    const name = typeof body.model === 'string' ? body.model : ''
    return (
      this.models?.find((entry) => entry.vendor === this.vendor && entry.model === name) ??
      simulationModel(this.vendor, name)
    )
  }
}
