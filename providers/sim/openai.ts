// OpenAI's prompt cache: the model picks the cache a request meets, prefixes before GPT-5.6
// (openai-prefix.ts) or breakpoints after (openai-breakpoints.ts), on one routed fleet (openai-routing.ts).

import { seededRandom } from '../../harness/random.ts'
import {
  type BillingBlock,
  type ModelEntry,
  type OpenAIPrefixRules,
  simulationModel,
  type Vendor,
} from '../catalog.ts'
import { type Probe, previousModel } from './counterfactual.ts'
import { linearizeAnthropic } from './linearize-anthropic.ts'
import { linearizeChat, linearizeResponses } from './linearize-openai.ts'
import { OpenAIBreakpointCache, usesCaching } from './openai-breakpoints.ts'
import { cacheOptions } from './openai-cache-fields.ts'
import { OpenAIPrefixCache } from './openai-prefix.ts'
import { OpenAIRouter } from './openai-routing.ts'
import { billedOutputTokens } from './output.ts'
import { sharedTokenCounter, type TokenCounter } from './tokens.ts'
import type { Prompt, Simulation, SimulationRequest, SimulatorOptions } from './types.ts'

export { writeWindow } from './openai-breakpoints.ts'
export { floorToIncrement } from './openai-prefix.ts'

/** The body shapes a prefix cache reads: OpenAI's two APIs, and an Anthropic-compatible provider's Messages. */
type Api = 'chat' | 'responses' | 'messages'

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

  /** How an Anthropic-compatible provider treats Claude Code's billing block (Messages bodies only). */
  private readonly billingBlock: BillingBlock

  constructor(
    options: SimulatorOptions = {},
    vendor: Vendor = 'openai',
    billingBlock: BillingBlock = 'cached',
  ) {
    this.vendor = vendor
    this.billingBlock = billingBlock
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
    // A Messages body's `cache_control` markers are left out of its segments: this cache ignores them.
    if (api === 'messages')
      return linearizeAnthropic(
        body,
        this.counter,
        entry.tokenScale,
        undefined,
        undefined,
        'kept',
        this.billingBlock,
      ).prompt
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
    const options = cacheOptions(
      api === 'messages' ? 'chat' : api,
      request.body,
      entry.cache.kind === 'openai-breakpoint',
    )
    const prompt = this.linearize(api, request.body)
    const output = billedOutputTokens(request, this.counter, entry.tokenScale)
    // Staying on the model the previous request ran on would have read that model's cache, of either kind.
    const stayed = previousModel(request.previous, entry, (model) => this.model({ model }))
    const switched = stayed === undefined ? undefined : this.probe(api, stayed, request, prompt)
    return entry.cache.kind === 'openai-breakpoint'
      ? this.breakpointCache.simulate(entry.cache, options, request, prompt, output, switched)
      : this.prefixCache.simulate(
          entry.cache as OpenAIPrefixRules,
          request,
          prompt,
          output,
          entry.tokenScale,
          switched,
        )
  }

  /**
   * A read of another model's cache for a request, changing nothing: the body sent to that model, routed
   * by its own key, a warm cache on the previous request's machine.
   */
  private probe(api: Api, entry: ModelEntry, request: SimulationRequest, prompt: Prompt): Probe {
    const body = { ...request.body, model: entry.model }
    const home = request.previous?.machine
    if (entry.cache.kind !== 'openai-breakpoint')
      return this.prefixCache.probe(
        entry.cache as OpenAIPrefixRules,
        body,
        request.at,
        entry.tokenScale,
        undefined,
        home,
      )
    // The body passed the current model's checks, which are the breakpoint models' or stricter.
    const caching = usesCaching(cacheOptions(api === 'messages' ? 'chat' : api, body, true), prompt)
    return this.breakpointCache.probe(entry.cache, caching, body, request.at, undefined, home)
  }

  private model(body: Record<string, unknown>): ModelEntry {
    const name = typeof body.model === 'string' ? body.model : ''
    return (
      this.models?.find((entry) => entry.vendor === this.vendor && entry.model === name) ??
      simulationModel(this.vendor, name)
    )
  }
}
