// The cache simulators of every vendor behind one call: simulate a wire body of a given API. One
// instance models one account's caches; reset by making a new one.

import type { CompatibleProviderId } from '../../harness/types.ts'
import { compatibleProviderOfApi, type WireApi } from '../types.ts'
import { AnthropicCacheSimulator } from './anthropic.ts'
import { BedrockCacheSimulator } from './bedrock.ts'
import { CompatibleCacheSimulator } from './compatible.ts'
import { DeepSeekCacheSimulator } from './deepseek.ts'
import { GeminiCacheSimulator } from './gemini.ts'
import { OpenAICacheSimulator } from './openai.ts'
import type { Prompt, Simulation, SimulationRequest, SimulatorOptions } from './types.ts'

export type { SimulationRequest, SimulatorOptions }

export class CacheSimulators {
  readonly anthropic: AnthropicCacheSimulator
  readonly openai: OpenAICacheSimulator
  readonly deepseek: DeepSeekCacheSimulator
  readonly bedrock: BedrockCacheSimulator
  private readonly options: SimulatorOptions
  /** One cache per compatible provider, made on its first request. */
  private readonly compatibles = new Map<CompatibleProviderId, CompatibleCacheSimulator>()
  readonly gemini: GeminiCacheSimulator

  constructor(options: SimulatorOptions = {}) {
    this.options = options
    this.anthropic = new AnthropicCacheSimulator(options)
    this.openai = new OpenAICacheSimulator(options)
    this.deepseek = new DeepSeekCacheSimulator(options)
    this.bedrock = new BedrockCacheSimulator(options)
    this.gemini = new GeminiCacheSimulator(options)
  }

  /** The cache of a compatible provider. */
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
