// OpenAI Responses: the parameters reasoning models refuse (as on Chat Completions), and the refusals of
// server-side state — a `previous_response_id` the account never stored, an `item_reference` to an item
// it does not hold. The state itself lives in ../responses-store.ts; its refusals are worded here.

import type { SimulatorRejection } from '../../sim/types.ts'
import {
  contentIsTextOrParts,
  integerInRange,
  invalidType,
  numberInRange,
  roleInList,
  samplingOnReasoningModel,
  streamIsBoolean,
} from './openai-chat.ts'
import { asRecord, isSet, openAIError, type Rule } from './shared.ts'

/** The roles of Responses input messages (API reference, `input`: EasyInputMessage). */
const INPUT_ROLES = ['assistant', 'system', 'developer', 'user'] as const

/**
 * `input` is a string or an array of items, and a message item (one with a `role`, typed `message` or not
 * typed) has a role the API knows and text or parts for content. Wordings: Chat Completions' templates
 * (openai-chat.ts), assumed for these fields.
 */
export const inputFields: Rule = ({ body }) => {
  const input = body.input
  if (!isSet(input) || typeof input === 'string') return undefined
  if (!Array.isArray(input)) return invalidType('input', 'one of a string or array of objects', input)
  for (const [index, value] of input.entries()) {
    const item = asRecord(value)
    if (item.role === undefined || (item.type !== undefined && item.type !== 'message')) continue
    const refusal =
      roleInList(`input[${index}].role`, item.role, INPUT_ROLES) ??
      contentIsTextOrParts(`input[${index}].content`, item.content)
    if (refusal !== undefined) return refusal
  }
  return undefined
}

/**
 * `max_output_tokens` is an integer ≥ 16 — verbatim, "Invalid 'max_output_tokens': integer below minimum
 * value. Expected a value >= 16, but got 10 instead." (vectorize-io/hindsight#58, relayed from Azure's
 * OpenAI) — the sampling parameters are in their ranges as on Chat Completions, and `instructions` is
 * text (a list of input items is left to the API's newer form; anything else is a type error, assumed).
 */
export const responsesParameterRanges: Rule = ({ body }) =>
  (isSet(body.instructions) && typeof body.instructions !== 'string' && !Array.isArray(body.instructions)
    ? invalidType('instructions', 'a string', body.instructions)
    : undefined) ??
  integerInRange('max_output_tokens', body.max_output_tokens, 16) ??
  numberInRange('temperature', body.temperature, 0, 2) ??
  numberInRange('top_p', body.top_p, 0, 1)

/**
 * `tools` is an array, and a function tool (Responses puts its name at the top of the tool) has a name:
 * "Missing required parameter: 'tools[0].name'." (the API's missing-field template, assumed here).
 */
export const responsesToolsShape: Rule = ({ body }) => {
  if (!isSet(body.tools)) return undefined
  if (!Array.isArray(body.tools)) return invalidType('tools', 'an array', body.tools)
  for (const [index, value] of body.tools.entries()) {
    const tool = asRecord(value)
    if (tool.type !== 'function' || typeof tool.name === 'string') continue
    const param = `tools[${index}].name`
    return openAIError(400, `Missing required parameter: '${param}'.`, param, 'missing_required_parameter')
  }
  return undefined
}

/**
 * `prompt_cache_options.comparison_response_id` names a response by its id (prompt cache diagnostics
 * guide); anything but a string is a type error in the API's template (assumed). An id nothing was kept
 * for is no error: the response says `comparison_response_not_found`. On a model before GPT-5.6 the whole
 * `prompt_cache_options` is refused by the simulator's cache-field rules (sim/openai-cache-fields.ts).
 */
export const comparisonResponseId: Rule = ({ body }) => {
  const compared = asRecord(body.prompt_cache_options).comparison_response_id
  if (!isSet(compared) || typeof compared === 'string') return undefined
  return invalidType('prompt_cache_options.comparison_response_id', 'a string', compared)
}

/**
 * An unknown or unstored `previous_response_id`: a 400 with its own code. Wording, param and code from
 * the API's answers (maximhq/bifrost#2441 for the message, bigduu/Bamboo-agent#513 for param and code).
 */
export function previousResponseNotFound(id: string): SimulatorRejection {
  return openAIError(
    400,
    `Previous response with id '${id}' not found.`,
    'previous_response_id',
    'previous_response_not_found',
  )
}

/**
 * An input item the account does not hold: a 404 naming the item (home-assistant/core#150251,
 * can1357/oh-my-pi#41). The sentence on `store` is the API's own when the request has `store: false`;
 * with storage on, only the first sentence is sent (assumed: every observed answer had `store: false`).
 */
export function itemNotFound(id: string, storeOff: boolean): SimulatorRejection {
  const hint = storeOff
    ? ' Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.'
    : ''
  return openAIError(404, `Item with id '${id}' not found.${hint}`, 'input', null)
}

/** The rules of Responses checked before its state is read, in order. */
export const OPENAI_RESPONSES_RULES: readonly Rule[] = [
  inputFields,
  streamIsBoolean,
  responsesParameterRanges,
  responsesToolsShape,
  comparisonResponseId,
  samplingOnReasoningModel((body) => asRecord(body.reasoning).effort),
]
