// OpenAI Chat Completions: what the API refuses before it runs a model — fields of the wrong type or out
// of range, the parameters reasoning models do not take, and tool messages that do not pair with the calls
// before them. Each rule cites where its status and wording come from (notes/2026-11-30-mock-validation.md
// and notes/2026-12-02-mock-field-validation.md list them all).

import type { ReasoningEffort } from '../../catalog.ts'
import type { SimulatorRejection } from '../../sim/types.ts'
import { INT32_MAX, isNumber, jsonKind, withArticle } from './fields.ts'
import { asArray, asRecord, type Body, isSet, openAIError, type Rule, toolPairing } from './shared.ts'

/**
 * A field of the wrong type: "Invalid type for 'messages[1].content': expected one of a string or array of
 * objects, but got an object instead.", param the field, code `invalid_type` — verbatim from the API
 * (pydantic-ai/pydantic-ai#2653; the `max_tokens` string case from the issue 26 probe's reference). Other
 * fields' expectations ("a boolean", "a number") follow the same template, assumed.
 */
export function invalidType(param: string, expected: string, value: unknown): SimulatorRejection {
  return openAIError(
    400,
    `Invalid type for '${param}': expected ${expected}, but got ${withArticle(jsonKind(value))} instead.`,
    param,
    'invalid_type',
  )
}

/**
 * An integer field out of its range: "Invalid 'max_tokens': integer below minimum value. Expected a value
 * >= 1, but got -1 instead.", code `integer_below_min_value` — verbatim (YSocialTwin/YClient#6; Responses'
 * `max_output_tokens` >= 16, vectorize-io/hindsight#58). The maximum's wording and code are assumed by
 * symmetry; the bound is a 32-bit integer's (the catalog has no output limits for OpenAI models).
 */
export function integerInRange(
  param: string,
  value: unknown,
  minimum: number,
): SimulatorRejection | undefined {
  if (!isSet(value)) return undefined
  // 1e308 is an integer to JavaScript: it fails on the maximum, as a number past any bound.
  if (!isNumber(value) || !Number.isInteger(value)) return invalidType(param, 'an integer', value)
  if (value < minimum)
    return openAIError(
      400,
      `Invalid '${param}': integer below minimum value. Expected a value >= ${minimum}, but got ${value} instead.`,
      param,
      'integer_below_min_value',
    )
  if (value > INT32_MAX)
    return openAIError(
      400,
      `Invalid '${param}': integer above maximum value. Expected a value <= ${INT32_MAX}, but got ${value} instead.`,
      param,
      'integer_above_max_value',
    )
  return undefined
}

/**
 * A number field out of its documented range (`temperature` 0–2, `top_p` 0–1, API reference). Wording
 * and codes (`decimal_below_min_value`, `decimal_above_max_value`) assumed from the integer template.
 */
export function numberInRange(
  param: string,
  value: unknown,
  minimum: number,
  maximum: number,
): SimulatorRejection | undefined {
  if (!isSet(value)) return undefined
  if (!isNumber(value)) return invalidType(param, 'a number', value)
  if (value < minimum)
    return openAIError(
      400,
      `Invalid '${param}': decimal below minimum value. Expected a value >= ${minimum}, but got ${value} instead.`,
      param,
      'decimal_below_min_value',
    )
  if (value > maximum)
    return openAIError(
      400,
      `Invalid '${param}': decimal above maximum value. Expected a value <= ${maximum}, but got ${value} instead.`,
      param,
      'decimal_above_max_value',
    )
  return undefined
}

/** `stream` is a boolean (template of `invalidType`, assumed for this field). */
export const streamIsBoolean: Rule = ({ body }) =>
  isSet(body.stream) && typeof body.stream !== 'boolean'
    ? invalidType('stream', 'a boolean', body.stream)
    : undefined

/**
 * A role outside the API's list: "Invalid value: 'bot'. Supported values are: …", param the role, code
 * `invalid_value` — the API's template for enums as clients quote it; not confirmed by a stored source.
 * A role that is not a string is a type error.
 */
export function roleInList(
  param: string,
  role: unknown,
  roles: readonly string[],
): SimulatorRejection | undefined {
  if (typeof role !== 'string') return invalidType(param, 'a string', role)
  if (roles.includes(role)) return undefined
  const listed = roles.map((name) => `'${name}'`)
  const supported = `${listed.slice(0, -1).join(', ')}, and ${listed.at(-1) ?? ''}`
  return openAIError(
    400,
    `Invalid value: '${role}'. Supported values are: ${supported}.`,
    param,
    'invalid_value',
  )
}

/** A message's or item's content: a string, an array of parts, or unset (an assistant message with calls). */
export function contentIsTextOrParts(param: string, content: unknown): SimulatorRejection | undefined {
  if (!isSet(content) || typeof content === 'string' || Array.isArray(content)) return undefined
  return invalidType(param, 'one of a string or array of objects', content)
}

/** The roles of Chat Completions messages (API reference, `messages`). */
const CHAT_ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'] as const

/** Every message's role is one the API knows, and its content a string or an array of parts. */
export const chatMessageFields: Rule = ({ body }) => {
  for (const [index, value] of asArray(body.messages).entries()) {
    const message = asRecord(value)
    const refusal =
      roleInList(`messages[${index}].role`, message.role, CHAT_ROLES) ??
      contentIsTextOrParts(`messages[${index}].content`, message.content)
    if (refusal !== undefined) return refusal
  }
  return undefined
}

/**
 * The output caps and `n` are integers ≥ 1; `temperature` is in 0–2, `top_p` in 0–1, and
 * `presence_penalty` and `frequency_penalty` in −2–2 (API reference).
 */
export const chatParameterRanges: Rule = ({ body }) =>
  integerInRange('max_tokens', body.max_tokens, 1) ??
  integerInRange('max_completion_tokens', body.max_completion_tokens, 1) ??
  integerInRange('n', body.n, 1) ??
  numberInRange('temperature', body.temperature, 0, 2) ??
  numberInRange('top_p', body.top_p, 0, 1) ??
  numberInRange('presence_penalty', body.presence_penalty, -2, 2) ??
  numberInRange('frequency_penalty', body.frequency_penalty, -2, 2)

/**
 * `tools` is an array, and a function tool names its function: "Missing required parameter:
 * 'tools[0].function'.", code `missing_required_parameter` (the API's wording for missing fields, as for
 * `model` and `input`; this field's not confirmed by a stored source).
 */
export const chatToolsShape: Rule = ({ body }) => {
  if (!isSet(body.tools)) return undefined
  if (!Array.isArray(body.tools)) return invalidType('tools', 'an array', body.tools)
  for (const [index, value] of body.tools.entries()) {
    const tool = asRecord(value)
    if (tool.type !== 'function') continue
    if (typeof asRecord(tool.function).name === 'string') continue
    const param = isSet(tool.function) ? `tools[${index}].function.name` : `tools[${index}].function`
    return openAIError(400, `Missing required parameter: '${param}'.`, param, 'missing_required_parameter')
  }
  return undefined
}

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

/**
 * Prompt cache diagnostics are the Responses API's alone (prompt cache diagnostics guide: "available in
 * the Responses API"; Chat's `PromptCacheOptions` has only `mode` and `ttl`): a `comparison_response_id`
 * on Chat Completions is an unknown parameter, in OpenAI's template for one (assumed for a nested field).
 * Only on a model that takes `prompt_cache_options` at all: an older one refuses the whole object first.
 */
export const noComparisonOnChat: Rule = ({ body, model }) => {
  if (model.cache.kind !== 'openai-breakpoint') return undefined
  if (!isSet(asRecord(body.prompt_cache_options).comparison_response_id)) return undefined
  const param = 'prompt_cache_options.comparison_response_id'
  return openAIError(400, `Unknown parameter: '${param}'.`, param, 'unknown_parameter')
}

/** The rules of Chat Completions, in the order they are checked (the schema's types and ranges first). */
export const OPENAI_CHAT_RULES: readonly Rule[] = [
  chatMessageFields,
  streamIsBoolean,
  chatParameterRanges,
  chatToolsShape,
  noComparisonOnChat,
  toolMessagesPairWithCalls,
  maxTokensOnReasoningModel,
  samplingOnReasoningModel((body) => body.reasoning_effort),
]
