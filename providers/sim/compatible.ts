// A compatible provider's cache: OpenAI's prefix cache with the provider's numbers (its catalog models'
// rules), routed by the key the provider reads, with the cached prefix billed as a write where it says so.
// An Anthropic-compatible provider's Messages bodies are read the same way, their cache marks ignored.

import type { CompatibleProviderId } from '../../harness/types.ts'
import {
  type CompatibleProvider,
  compatibleProvider,
  type RoutingKey,
  speaksMessages,
} from '../compatible.ts'
import { OpenAICacheSimulator } from './openai.ts'
import type { Prompt, Simulation, SimulationRequest, SimulatorOptions } from './types.ts'

/**
 * The key a request is routed by: the body field or header the provider reads, or none. The prefix cache's
 * router reads `prompt_cache_key`, so the simulator's view of the body carries the key there.
 */
function routedBody(routing: RoutingKey, request: SimulationRequest): Record<string, unknown> {
  const { prompt_cache_key: _ignored, ...body } = request.body
  const key =
    routing.kind === 'body'
      ? request.body[routing.field]
      : routing.kind === 'header'
        ? request.routingKey
        : undefined
  return typeof key === 'string' && key !== '' ? { ...body, prompt_cache_key: key } : body
}

/** One account's cache at one compatible provider. */
export class CompatibleCacheSimulator {
  private readonly provider: CompatibleProvider
  private readonly prefix: OpenAICacheSimulator
  /** The body shape: Chat Completions, or an Anthropic-compatible provider's Messages. */
  private readonly api: 'chat' | 'messages'

  constructor(id: CompatibleProviderId, options: SimulatorOptions = {}) {
    this.provider = compatibleProvider(id)
    this.api = speaksMessages(this.provider) ? 'messages' : 'chat'
    this.prefix = new OpenAICacheSimulator(options, id, this.provider.billingBlock)
  }

  linearize(body: Record<string, unknown>): Prompt {
    return this.prefix.linearize(this.api, body)
  }

  /** Remove what no request at `at` or later can read (serve's memory budget); the count removed. */
  prune(at: number): number {
    return this.prefix.prune(at)
  }

  /** Simulate one request: reads as OpenAI's prefix cache does; a billed write is the newly cached prefix. */
  simulate(request: SimulationRequest): Simulation {
    const simulation = this.prefix.simulate(this.api, {
      ...request,
      body: routedBody(this.provider.cache.routing, request),
    })
    if (this.provider.cache.writes === 'free') return simulation
    const { counts, trace } = simulation
    const write = Math.max(0, Math.min(trace.carry.tokens, counts.input) - counts.read)
    return {
      ...simulation,
      counts: { ...counts, write, write5m: write, uncached: counts.input - counts.read - write },
    }
  }
}
