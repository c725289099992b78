// OpenAI Chat Completions: what the API refuses before it runs a model — the parameters reasoning models
// do not take, and tool messages that do not pair with the calls before them. Each rule cites where its
// status and wording come from (notes/2026-11-30-mock-validation.md lists them all).

import type { ReasoningEffort } from '../../catalog.ts'
import { type Body, isSet, openAIError, type Rule, toolPairing } from './shared.ts'

/**
 * `max_tokens` on a reasoning model. Wording, param and code verbatim from the API's answers to GPT-5.x
 * and o-series requests (koosoli/ESPHomeDesigner#379 on gpt-5.4, griptape-ai/ComfyUI-Griptape#312).
 */
export const maxTokensOnReasoningModel: Rule = ({ body, model }) => {
  if (model.request.kind !== 'openai' || model.request.reasoning === undefined) return undefined
  if (!isSet(body.max_tokens)) return undefined
  return openAIError(
    400,
    "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    'max_tokens',
    'unsupported_parameter',
  )
}

/**
 * `temperature` or `top_p` other than 1 on a reasoning model whose effort is not `none` (GPT-5.1 on
 * default to `none` and take them; GPT-5.5 and 5.6 default to `medium`). Wording verbatim for
 * temperature (NVlabs/cvdp_benchmark#29, BerriAI/litellm#32060); for `top_p` the same template is
 * assumed. `effortOf` reads the request's effort where its API puts it.
 */
export function samplingOnReasoningModel(effortOf: (body: Body) => unknown): Rule {
  return ({ body, model }) => {
    if (model.request.kind !== 'openai' || model.request.reasoning === undefined) return undefined
    const requested = effortOf(body)
    const effort = isSet(requested) ? (requested as ReasoningEffort) : model.request.reasoning.defaultEffort
    if (effort === 'none') return undefined
    for (const param of ['temperature', 'top_p'] as const) {
      const value = body[param]
      if (!isSet(value) || value === 1) continue
      return openAIError(
        400,
        `Unsupported value: '${param}' does not support ${String(value)} with this model. Only the default (1) value is supported.`,
        param,
        'unsupported_value',
      )
    }
    return undefined
  }
}

/**
 * Tool messages pair with the calls before them. The orphan's wording is verbatim from the API, spelling
 * "preceeding" included (Haervwe/open-webui-tools#12, smarter-sh/smarter#264); of the unanswered calls'
 * wording the first sentence is (microsoft/promptflow#3130), the sentence naming the ids is unconfirmed.
 * `param` names the message's role; no code.
 */
export const toolMessagesPairWithCalls: Rule = ({ body }) => {
  const broken = toolPairing(Array.isArray(body.messages) ? body.messages : [])
  if (broken === undefined) return undefined
  switch (broken.kind) {
    case 'orphan-tool':
      return openAIError(
        400,
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        `messages.[${broken.index}].role`,
        null,
      )
    case 'unanswered-calls':
      return openAIError(
        400,
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${broken.ids.join(', ')}`,
        `messages.[${broken.index}].role`,
        null,
      )
  }
}

/** The rules of Chat Completions, in the order they are checked. */
export const OPENAI_CHAT_RULES: readonly Rule[] = [
  toolMessagesPairWithCalls,
  maxTokensOnReasoningModel,
  samplingOnReasoningModel((body) => body.reasoning_effort),
]
