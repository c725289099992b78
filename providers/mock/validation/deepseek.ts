// DeepSeek Chat Completions: what its API refuses before it runs a model — a role it does not know (its
// body is deserialized strictly, so `developer` fails like a typo), tool messages that do not pair with
// the calls before them, and, in thinking mode (on by default on V4), a tool-calling assistant message
// whose `reasoning_content` was not passed back. Every refusal is a 400 in the OpenAI envelope with
// `code: "invalid_request_error"`.

import { asArray, asRecord, type Body, isSet, openAIError, type Rule, toolPairing } from './shared.ts'

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

/**
 * `stream` a boolean, `max_tokens` an unsigned integer (a negative one is serde's "invalid value"), each
 * message's role a string and its content a string or a list of parts. Ranges DeepSeek checks after
 * deserializing ("Invalid max_tokens value, the valid range of max_tokens is [1, 8192]", we0-dev/we0#56,
 * for V3) are left open: V4's bound has no stored source.
 */
export const fieldTypes: Rule = ({ body }) => {
  if (isSet(body.stream) && typeof body.stream !== 'boolean')
    return invalidType(body, ['stream'], 'stream', body.stream, 'a boolean')
  const tokens = body.max_tokens
  if (isSet(tokens)) {
    if (typeof tokens === 'number' && Number.isSafeInteger(tokens) && tokens < 0)
      return invalidRequest(
        `Failed to deserialize the JSON body into the target type: max_tokens: invalid value: integer \`${tokens}\`, expected u32 at line 1 column ${fieldColumn(body, ['max_tokens'])}`,
      )
    if (typeof tokens !== 'number' || !Number.isSafeInteger(tokens))
      return invalidType(body, ['max_tokens'], 'max_tokens', tokens, 'u32')
  }
  for (const [index, value] of asArray(body.messages).entries()) {
    const message = asRecord(value)
    if (message.role !== undefined && typeof message.role !== 'string')
      return invalidType(
        body,
        ['messages', index, 'role'],
        `messages[${index}].role`,
        message.role,
        'variant identifier',
      )
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
  return undefined
}

/**
 * A role outside DeepSeek's list. Wording verbatim from its answers to `developer` messages
 * (earendil-works/pi#1048, losesky/ai-auto-trading#14; the list gained `latest_reminder` by 2026-05:
 * farion1231/cc-switch#3330, icebear0828/codex-proxy#589); the column is computed as serde reports it
 * for a compact body.
 */
export const knownRoles: Rule = ({ body }) => {
  for (const [index, value] of asArray(body.messages).entries()) {
    const role = asRecord(value).role
    if (typeof role !== 'string' || (ROLES as readonly string[]).includes(role)) continue
    const expected = ROLES.map((name) => `\`${name}\``).join(', ')
    return invalidRequest(
      `Failed to deserialize the JSON body into the target type: messages[${index}].role: unknown variant \`${role}\`, expected one of ${expected} at line 1 column ${roleColumn(body, index)}`,
    )
  }
  return undefined
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
  const thinking = asRecord(body.thinking).type
  const byDefault = model.request.kind === 'deepseek' && model.request.thinkingByDefault
  if (!(thinking === 'enabled' || (thinking !== 'disabled' && byDefault))) return undefined
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
  knownRoles,
  toolMessagesPairWithCalls,
  reasoningPassedBack,
]
