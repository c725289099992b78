// The usage object each wire API reports for simulated counts, in the provider's own shape: the one
// place `cachelab simulate` and the handlers agree on.

import { compatibleProvider } from '../compatible.ts'
import { compatibleWireUsage } from '../compatible-chat.ts'
import type { SimCounts } from '../sim/types.ts'
import { bodyShape, compatibleProviderOfApi, type WireApi } from '../types.ts'
import { anthropicUsage } from './anthropic.ts'
import { bedrockUsage } from './bedrock.ts'
import { chatUsage } from './chat.ts'
import { geminiUsage } from './gemini.ts'
import { responsesUsage } from './responses.ts'

/** The provider-shaped usage of `counts`; `reportsWrites` for OpenAI models that report cache writes. */
export function wireUsage(api: WireApi, counts: SimCounts, reportsWrites: boolean): Record<string, unknown> {
  switch (api) {
    case 'openai-chat':
      return chatUsage('openai', counts, reportsWrites)
    case 'deepseek-chat':
      return chatUsage('deepseek', counts, false)
    case 'openai-responses':
      return responsesUsage(counts, reportsWrites)
    case 'anthropic-messages':
      return anthropicUsage(counts, counts.output)
    case 'bedrock-converse':
      return bedrockUsage(counts)
    case 'gemini-generate':
      return geminiUsage(counts)
    default:
      // An Anthropic-compatible API reports Anthropic's usage object.
      return bodyShape(api) === 'anthropic-messages'
        ? anthropicUsage(counts, counts.output)
        : compatibleWireUsage(compatibleProvider(compatibleProviderOfApi(api)), counts)
  }
}
