// The providers layer's public surface: adapters by provider id, the catalog, endpoints, the port the
// loop sends through, and the mock providers.

import type { AdapterConfigDefaults, CompatibleProviderId, ProviderId } from '../harness/types.ts'
import { anthropicAdapter, anthropicCompatibleAdapter } from './anthropic.ts'
import { DEFAULT_MAX_TOKENS } from './anthropic-request.ts'
import { bedrockAdapter } from './bedrock.ts'
import { compatibleProvider, findCompatible, speaksMessages } from './compatible.ts'
import { compatibleAdapter } from './compatible-chat.ts'
import { deepSeekAdapter } from './deepseek.ts'
import type { Endpoint } from './endpoints.ts'
import { geminiAdapter } from './gemini.ts'
import { openAIChatAdapter } from './openai-chat.ts'
import { openAIResponsesAdapter } from './openai-responses.ts'
import type { ProviderAdapter } from './types.ts'

export { CATALOG, DEFAULT_MODELS, findModel, type ModelEntry, resolveModel, vendorOf } from './catalog.ts'
export { ENV_NAMES, type Endpoint, liveEndpoint, simulatedEndpoint } from './endpoints.ts'
export { type MockProviders, startMockProviders } from './mock/server.ts'
export { adapterPort, modeledLatencyMs } from './port.ts'
export type { BuildOptions, BuiltRequest, ProviderAdapter, WireApi } from './types.ts'

/**
 * Call-config values a provider's adapter supplies when the configuration leaves them out: the loop
 * records them in the header as adapter defaults. Anthropic's adapter supplies one (`max_tokens` is
 * required there), and Bedrock's, which builds an Anthropic body first, sends it as `maxTokens`; the
 * others leave an unset cap to the provider.
 */
export function adapterDefaults(provider: ProviderId): AdapterConfigDefaults {
  const messages =
    findCompatible(provider) !== undefined &&
    speaksMessages(compatibleProvider(provider as CompatibleProviderId))
  return provider === 'anthropic' || provider === 'bedrock' || messages
    ? { maxTokens: DEFAULT_MAX_TOKENS }
    : {}
}

/** The adapter of a provider id, bound to an endpoint. */
export function createAdapter(provider: ProviderId, endpoint: Endpoint): ProviderAdapter {
  switch (provider) {
    case 'openai-chat':
      return openAIChatAdapter(endpoint)
    case 'openai-responses':
      return openAIResponsesAdapter(endpoint)
    case 'deepseek':
      return deepSeekAdapter(endpoint)
    case 'anthropic':
      return anthropicAdapter(endpoint)
    case 'bedrock':
      return bedrockAdapter(endpoint)
    case 'gemini':
      return geminiAdapter(endpoint)
    default:
      return speaksMessages(compatibleProvider(provider))
        ? anthropicCompatibleAdapter(provider, endpoint)
        : compatibleAdapter(provider, endpoint)
  }
}
