// DeepSeek Chat Completions: what its API refuses before it runs a model — a role it does not know (its
// body is deserialized strictly, so `developer` fails like a typo), tool messages that do not pair with
// the calls before them, and, in thinking mode (on by default on V4), a tool-calling assistant message
// whose `reasoning_content` was not passed back. Every refusal is a 400 in the OpenAI envelope with
// `code: "invalid_request_error"`.

import { asArray, asRecord, type Body, openAIError, type Rule, toolPairing } from './shared.ts'

/** The roles DeepSeek deserializes, in the order its error lists them (cc-switch#3281 logs, 2026-05). */
const ROLES = ['system', 'user', 'assistant', 'tool', 'latest_reminder'] as const

function invalidRequest(message: string) {
  return openAIError(400, message, null, 'invalid_request_error')
}

/**
 * The 1-based column at which a JSON parser reading `body` as clients send it (compact JSON, keys in
 * their order) finishes the string at `messages[index].role`: the position serde names in its error.
 */
export function roleColumn(body: Body, index: number): number {
  const marker = '\u0000cachelab-role\u0000'
  const messages = asArray(body.messages).slice()
  const role = asRecord(messages[index]).role
  messages[index] = { ...asRecord(messages[index]), role: marker }
  const text = JSON.stringify({ ...body, messages })
  return text.indexOf(JSON.stringify(marker)) + JSON.stringify(role).length
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
export const DEEPSEEK_RULES: readonly Rule[] = [knownRoles, toolMessagesPairWithCalls, reasoningPassedBack]
