// OpenAI Responses: the parameters reasoning models refuse (as on Chat Completions), and the refusals of
// server-side state — a `previous_response_id` the account never stored, an `item_reference` to an item
// it does not hold. The state itself lives in ../responses-store.ts; its refusals are worded here.

import type { SimulatorRejection } from '../../sim/types.ts'
import { samplingOnReasoningModel } from './openai-chat.ts'
import { asRecord, openAIError, type Rule } from './shared.ts'

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
  samplingOnReasoningModel((body) => asRecord(body.reasoning).effort),
]
