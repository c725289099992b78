// Validation that mirrors each API: the rules of the request's wire API, checked in order, the first
// broken one answered with the API's own status and error body. The mock handlers run it before faults
// and simulation; `lenient` mocks skip it.

import type { SimulatorRejection } from '../../sim/types.ts'
import { type BuiltInWireApi, bodyShape, isBuiltInApi, type WireApi } from '../../types.ts'
import { ANTHROPIC_RULES } from './anthropic.ts'
import { BEDROCK_RULES } from './bedrock.ts'
import { DEEPSEEK_RULES } from './deepseek.ts'
import { GEMINI_RULES } from './gemini.ts'
import { OPENAI_CHAT_RULES } from './openai-chat.ts'
import { OPENAI_RESPONSES_RULES } from './openai-responses.ts'
import { firstRefusal, type Rule, type ValidationRequest } from './shared.ts'

export { itemNotFound, previousResponseNotFound } from './openai-responses.ts'
export type { ValidationRequest } from './shared.ts'

const RULES: Readonly<Record<BuiltInWireApi, readonly Rule[]>> = {
  'anthropic-messages': ANTHROPIC_RULES,
  'openai-chat': OPENAI_CHAT_RULES,
  'openai-responses': OPENAI_RESPONSES_RULES,
  'deepseek-chat': DEEPSEEK_RULES,
  'bedrock-converse': BEDROCK_RULES,
  'gemini-generate': GEMINI_RULES,
}

/** The API's refusal of a request, or undefined when it breaks none of the API's rules. */
export function validateRequest(api: WireApi, request: ValidationRequest): SimulatorRejection | undefined {
  // A compatible provider is validated as the API whose shape it takes: its documentation names no stricter rules.
  return firstRefusal(
    isBuiltInApi(api)
      ? RULES[api]
      : bodyShape(api) === 'anthropic-messages'
        ? RULES['anthropic-messages']
        : OPENAI_CHAT_RULES,
    request,
  )
}
