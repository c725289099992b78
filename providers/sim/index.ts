// The cache simulators of every vendor behind one call: simulate a wire body of a given API. One
// instance models one account's caches; reset by making a new one.

import type { WireApi } from '../types.ts'
import { AnthropicCacheSimulator } from './anthropic.ts'
import { DeepSeekCacheSimulator } from './deepseek.ts'
import { GeminiCacheSimulator } from './gemini.ts'
import { OpenAICacheSimulator } from './openai.ts'
import type { Prompt, Simulation, SimulationRequest, SimulatorOptions } from './types.ts'

export type { SimulationRequest, SimulatorOptions }

export class CacheSimulators {
  readonly anthropic: AnthropicCacheSimulator
  readonly openai: OpenAICacheSimulator
  readonly deepseek: DeepSeekCacheSimulator
  readonly gemini: GeminiCacheSimulator

  constructor(options: SimulatorOptions = {}) {
    this.anthropic = new AnthropicCacheSimulator(options)
    this.openai = new OpenAICacheSimulator(options)
    this.deepseek = new DeepSeekCacheSimulator(options)
    this.gemini = new GeminiCacheSimulator(options)
  }

  /** Simulate one request of `api`; throws SimulatorRejection for a request the provider refuses. */
  simulate(api: WireApi, request: SimulationRequest): Simulation {
    switch (api) {
      case 'openai-chat':
        return this.openai.simulate('chat', request)
      case 'openai-responses':
        return this.openai.simulate('responses', request)
      case 'deepseek-chat':
        return this.deepseek.simulate('chat', request)
      case 'anthropic-messages':
        return this.anthropic.simulate(request)
      case 'gemini-generate':
        return this.gemini.simulate(request)
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
      case 'gemini-generate':
        return this.gemini.linearize(body)
    }
  }
}
