// DeepSeek Chat Completions: what its API refuses before it runs a model — a role it does not know (its
// body is deserialized strictly, so `developer` fails like a typo), tool messages that do not pair with
// the calls before them, and, in thinking mode (on by default on V4), a tool-calling assistant message
// whose `reasoning_content` was not passed back. Every refusal is a 400 in the OpenAI envelope with
// `code: "invalid_request_error"`.

import {
  asArray,
  asRecord,
  type Body,
  isSet,
  openAIError,
  type Rule,
  toolPairing,
  type ValidationRequest,
} from './shared.ts'

/** The roles DeepSeek deserializes, in the order its error lists them (cc-switch#3281 logs, 2026-05). */
const ROLES = ['system', 'user', 'assistant', 'tool', 'latest_reminder'] as const

function invalidRequest(message: string) {
  return openAIError(400, message, null, 'invalid_request_error')
}

/** A step of a path into a JSON body: a key or an index. */
type Step = string | number

/** `value` with the value at `path` replaced (copies along the path only; the body is never changed). */
function replaced(value: unknown, path: readonly Step[], by: unknown): unknown {
  const [step, ...rest] = path
  if (step === undefined) return by
  if (Array.isArray(value)) {
    const copy = value.slice()
    copy[Number(step)] = replaced(copy[Number(step)], rest, by)
    return copy
  }
  const record = asRecord(value)
  return { ...record, [step]: replaced(record[step], rest, by) }
}

/**
 * The 1-based column at which a JSON parser reading `body` as clients send it (compact JSON, keys in
 * their order) finishes the value at `path`: the position serde names in its error.
 */
export function fieldColumn(body: Body, path: readonly Step[]): number {
  const marker = '\u0000cachelab-field\u0000'
  let original: unknown = body
  for (const step of path)
    original = Array.isArray(original) ? original[Number(step)] : asRecord(original)[step]
  const text = JSON.stringify(replaced(body, path, marker))
  return text.indexOf(JSON.stringify(marker)) + (JSON.stringify(original) ?? '').length
}

/** The column of `messages[index].role` (see `fieldColumn`). */
export const roleColumn = (body: Body, index: number): number =>
  fieldColumn(body, ['messages', index, 'role'])

/** A value as serde's "invalid type" errors show it: `integer \`5\``, `string "x"`, `sequence`, `map`. */
function serdeUnexpected(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'sequence'
  switch (typeof value) {
    case 'string':
      return `string ${JSON.stringify(value)}`
    case 'boolean':
      return `boolean \`${value}\``
    case 'number':
      return Number.isInteger(value) && Number.isSafeInteger(value)
        ? `integer \`${value}\``
        : `floating point \`${String(value).replace('e+', 'e')}\``
    default:
      return 'map'
  }
}

/**
 * A field the body does not deserialize: "Failed to deserialize the JSON body into the target type:
 * <path>: invalid type: <value>, expected <type> at line 1 column N" — the prefix and the path are
 * verbatim from DeepSeek's role refusal (rule 1); the middle is serde's standard wording for a value of
 * the wrong type ("invalid type: string \"x\", expected a boolean"), assumed for these fields, as is
 * the Rust type named (`u32` for `max_tokens`).
 */
function invalidType(body: Body, path: readonly Step[], shown: string, value: unknown, expected: string) {
  return invalidRequest(
    `Failed to deserialize the JSON body into the target type: ${shown}: invalid type: ${serdeUnexpected(value)}, expected ${expected} at line 1 column ${fieldColumn(body, path)}`,
  )
}

/** The largest `u32`: a larger integer `max_tokens` is serde's "invalid value". */
const U32_MAX = 4_294_967_295

/** The sampling fields DeepSeek deserializes as `f32`. */
const FLOAT_FIELDS = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty'] as const

/** The refusal of one top-level field that does not deserialize, or undefined. */
function fieldTypeRefusal(body: Body, field: string) {
  const value = body[field]
  if (!isSet(value)) return undefined
  if (field === 'stream')
    return typeof value === 'boolean'
      ? undefined
      : invalidType(body, ['stream'], 'stream', value, 'a boolean')
  if (field === 'max_tokens') {
    if (typeof value === 'number' && Number.isSafeInteger(value) && (value < 0 || value > U32_MAX))
      return invalidRequest(
        `Failed to deserialize the JSON body into the target type: max_tokens: invalid value: integer \`${value}\`, expected u32 at line 1 column ${fieldColumn(body, ['max_tokens'])}`,
      )
    return typeof value === 'number' && Number.isSafeInteger(value)
      ? undefined
      : invalidType(body, ['max_tokens'], 'max_tokens', value, 'u32')
  }
  if ((FLOAT_FIELDS as readonly string[]).includes(field))
    return typeof value === 'number' ? undefined : invalidType(body, [field], field, value, 'f32')
  if (field === 'messages') {
    for (const [index, item] of asArray(value).entries()) {
      const message = asRecord(item)
      if (message.role !== undefined && typeof message.role !== 'string')
        return invalidType(
          body,
          ['messages', index, 'role'],
          `messages[${index}].role`,
          message.role,
          'variant identifier',
        )
      const unknown = typeof message.role === 'string' ? unknownRole(body, index, message.role) : undefined
      if (unknown !== undefined) return unknown
      const content = message.content
      if (isSet(content) && typeof content !== 'string' && !Array.isArray(content))
        return invalidType(
          body,
          ['messages', index, 'content'],
          `messages[${index}].content`,
          content,
          'a string or an array',
        )
    }
  }
  return undefined
}

/**
 * `stream` a boolean, `max_tokens` a `u32` (a negative or larger integer is serde's "invalid value"), the
 * sampling fields `f32`s, each message's role a string and its content a string or a list of parts.
 * serde stops at the first field that fails in the body's own order, so the fields are checked in it.
 * `expected f32` is verbatim from DeepSeek's answer to a string temperature (NotIvny/Yunzai-DeepSeek-JS#2,
 * a 422 with a bare text body in 2025; the 2026 answers to such bodies are 400s in the OpenAI envelope,
 * zhukunpenglinyutong/jetbrains-cc-gui#591, farion1231/cc-switch#3330).
 */
export const fieldTypes: Rule = ({ body }) => {
  for (const field of Object.keys(body)) {
    const refusal = fieldTypeRefusal(body, field)
    if (refusal !== undefined) return refusal
  }
  return undefined
}

/** Whether the request runs in thinking mode: `thinking.type`, else the model's default (V4: on). */
function thinkingMode(body: Body, model: ValidationRequest['model']): boolean {
  const thinking = asRecord(body.thinking).type
  const byDefault = model.request.kind === 'deepseek' && model.request.thinkingByDefault
  return thinking === 'enabled' || (thinking !== 'disabled' && byDefault)
}

/** V4's output limit: the bound of a model the catalog lacks too. */
const LARGEST_OUTPUT_LIMIT = 393_216

/**
 * Ranges DeepSeek checks once the body deserialized: `max_tokens` in 1..the model's output limit
 * ("Invalid max_tokens value, the valid range of max_tokens is [1, 393216]", verbatim on V4,
 * MoonshotAI/kimi-code#2656; `[1, 8192]` on V3, we0-dev/we0#56), `top_p` in 0–1, and outside thinking
 * mode `temperature` in 0–2 and the penalties in −2–2 (the API reference's ranges; the wording is the
 * max_tokens template, assumed). Thinking mode ignores temperature and the penalties "without an error"
 * (guides/thinking_mode), so there no value of theirs is refused.
 */
export const fieldRanges: Rule = ({ body, model }) => {
  const limit = model.request.kind === 'deepseek' ? model.request.maxOutputTokens : LARGEST_OUTPUT_LIMIT
  const bounds: Array<[string, number, number]> = [
    ['max_tokens', 1, limit],
    ['top_p', 0, 1],
  ]
  if (!thinkingMode(body, model))
    bounds.push(['temperature', 0, 2], ['presence_penalty', -2, 2], ['frequency_penalty', -2, 2])
  for (const [field, minimum, maximum] of bounds) {
    const value = body[field]
    if (typeof value !== 'number' || (value >= minimum && value <= maximum)) continue
    return invalidRequest(`Invalid ${field} value, the valid range of ${field} is [${minimum}, ${maximum}]`)
  }
  return undefined
}

/**
 * A role outside DeepSeek's list. Wording verbatim from its answers to `developer` messages
 * (earendil-works/pi#1048, losesky/ai-auto-trading#14; the list gained `latest_reminder` by 2026-05:
 * farion1231/cc-switch#3330, icebear0828/codex-proxy#589); the column is computed as serde reports it
 * for a compact body. Part of deserializing `messages` (`fieldTypes`).
 */
function unknownRole(body: Body, index: number, role: string) {
  if ((ROLES as readonly string[]).includes(role)) return undefined
  const expected = ROLES.map((name) => `\`${name}\``).join(', ')
  return invalidRequest(
    `Failed to deserialize the JSON body into the target type: messages[${index}].role: unknown variant \`${role}\`, expected one of ${expected} at line 1 column ${roleColumn(body, index)}`,
  )
}

/**
 * Tool messages pair with the calls before them. Wordings verbatim from DeepSeek's answers
 * (FoundationAgents/OpenManus#23, qwersyk/Newelle#425 on deepseek-v4-flash; the unanswered-call wording
 * as relayed by a gateway in gptme/gptme#3421).
 */
export const toolMessagesPairWithCalls: Rule = ({ body }) => {
  const broken = toolPairing(asArray(body.messages))
  if (broken === undefined) return undefined
  switch (broken.kind) {
    case 'orphan-tool':
      return invalidRequest(
        "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
      )
    case 'unanswered-calls':
      return invalidRequest(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
      )
  }
}

/**
 * In thinking mode, an assistant message with tool calls must carry its `reasoning_content` in every later
 * request (api-docs.deepseek.com/guides/thinking_mode: thinking is on by default; "the reasoning_content
 * must be passed back … otherwise the API will return a 400 error"). Wording verbatim from the API's
 * answers to V4 requests (dataelement/Clawith#570, anomalyco/opencode#24083). An empty string counts as
 * passed back.
 */
export const reasoningPassedBack: Rule = ({ body, model }) => {
  if (!thinkingMode(body, model)) return undefined
  for (const value of asArray(body.messages)) {
    const message = asRecord(value)
    if (message.role !== 'assistant' || asArray(message.tool_calls).length === 0) continue
    if (typeof message.reasoning_content === 'string') continue
    return invalidRequest('The `reasoning_content` in the thinking mode must be passed back to the API.')
  }
  return undefined
}

/** The rules of DeepSeek Chat Completions, in the order they are checked (deserialization first). */
export const DEEPSEEK_RULES: readonly Rule[] = [
  fieldTypes,
  fieldRanges,
  toolMessagesPairWithCalls,
  reasoningPassedBack,
]
