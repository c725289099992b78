// Anthropic Messages: what the API refuses before it runs a model, beyond what the cache simulator already
// refuses (breakpoint count, TTL values and order, system roles: sim/anthropic.ts and
// sim/linearize-anthropic.ts keep those, in one place). Role order is not refused: the API merges
// consecutive turns of one role and accepts a first assistant message (see the note). The field rules
// word their refusals as the API's schema validation does: `<path>: Input should be …`.

import { invalidRequest } from '../../sim/linearize-anthropic.ts'
import type { SimulatorRejection } from '../../sim/types.ts'
import { isNumber } from './fields.ts'
import { asArray, asRecord, type Body, isSet, type Rule } from './shared.ts'

/**
 * The largest output limit of any current Claude model (Opus 4.6 and later: 128,000 tokens, models
 * overview): the bound of `max_tokens` on a model whose own limit the catalog does not record.
 */
export const LARGEST_OUTPUT_LIMIT = 128_000

/**
 * `max_tokens` is an integer ≥ 1 and at most the model's output limit. Over the limit: "max_tokens: 21333
 * > 4096, which is the maximum allowed number of output tokens for claude-3-opus-20240229" — verbatim
 * (anthropics/claude-code#11302, ChatGPTNextWeb/NextChat#4964). Below 1 and not an integer: the schema's
 * wording ("max_tokens: Input should be greater than or equal to 1", the form of rule 13's verbatim
 * budget refusal; "Input should be a valid integer" assumed). A model the catalog has no limit for is
 * bounded by `LARGEST_OUTPUT_LIMIT` (assumed), so 1e308 is refused everywhere.
 */
export const maxTokensInRange: Rule = ({ body, model }) => {
  const value = body.max_tokens
  if (!isSet(value)) return undefined
  if (!isNumber(value)) return invalidRequest('max_tokens: Input should be a valid integer')
  if (!Number.isInteger(value))
    return invalidRequest('max_tokens: Input should be a valid integer, got a number with a fractional part')
  if (value < 1) return invalidRequest('max_tokens: Input should be greater than or equal to 1')
  const limit =
    (model.request.kind === 'anthropic' ? model.request.maxOutputTokens : undefined) ?? LARGEST_OUTPUT_LIMIT
  if (value <= limit) return undefined
  const name = typeof body.model === 'string' ? body.model : model.model
  return invalidRequest(
    `max_tokens: ${value} > ${limit}, which is the maximum allowed number of output tokens for ${name}`,
  )
}

/** A number in a range, worded as the schema's bounds (`temperature`, `top_p`: 0–1, API reference); assumed. */
function numberInRange(path: string, value: unknown, minimum: number, maximum: number) {
  if (!isSet(value)) return undefined
  if (!isNumber(value)) return invalidRequest(`${path}: Input should be a valid number`)
  if (value < minimum) return invalidRequest(`${path}: Input should be greater than or equal to ${minimum}`)
  if (value > maximum) return invalidRequest(`${path}: Input should be less than or equal to ${maximum}`)
  return undefined
}

/** `top_k` is an integer ≥ 0 (API reference), worded as `max_tokens`' schema errors; assumed. */
function topKInRange(value: unknown) {
  if (!isSet(value)) return undefined
  if (!isNumber(value)) return invalidRequest('top_k: Input should be a valid integer')
  if (!Number.isInteger(value))
    return invalidRequest('top_k: Input should be a valid integer, got a number with a fractional part')
  return value < 0 ? invalidRequest('top_k: Input should be greater than or equal to 0') : undefined
}

/**
 * `system` is text or a list of blocks, and `stop_sequences` a list of strings (API reference; wordings
 * the schema's, as for message content, assumed).
 */
function textFields(body: Body) {
  if (isSet(body.system) && typeof body.system !== 'string' && !Array.isArray(body.system))
    return invalidRequest('system: Input should be a valid list')
  const stops = body.stop_sequences
  if (!isSet(stops)) return undefined
  if (!Array.isArray(stops)) return invalidRequest('stop_sequences: Input should be a valid list')
  const index = stops.findIndex((stop) => typeof stop !== 'string')
  return index === -1 ? undefined : invalidRequest(`stop_sequences.${index}: Input should be a valid string`)
}

/**
 * `temperature` and `top_p` are numbers in 0–1, `top_k` an integer ≥ 0, `stream` a boolean, `system` text
 * or blocks and `stop_sequences` strings (wordings the schema's, assumed).
 */
export const parameterTypes: Rule = ({ body }) =>
  numberInRange('temperature', body.temperature, 0, 1) ??
  numberInRange('top_p', body.top_p, 0, 1) ??
  topKInRange(body.top_k) ??
  (isSet(body.stream) && typeof body.stream !== 'boolean'
    ? invalidRequest('stream: Input should be a valid boolean')
    : undefined) ??
  textFields(body)

/**
 * Every message's role is `user` or `assistant` — "messages.0.role: Input should be 'user' or
 * 'assistant'", the schema's literal error (as the issue 26 brief quotes it; the same message in
 * ogx-ai/ogx#5982's Messages-compatible server) — and its content a string or a list of blocks
 * ("Input should be a valid list", assumed). A `system` role is left to the simulator, which refuses it
 * with its own wording on models that read no system prompt there and reads it on those that do.
 */
export const messageFields: Rule = ({ body }) => {
  for (const [index, value] of asArray(body.messages).entries()) {
    const message = asRecord(value)
    if (message.role !== 'user' && message.role !== 'assistant' && message.role !== 'system')
      return invalidRequest(`messages.${index}.role: Input should be 'user' or 'assistant'`)
    const content = message.content
    if (typeof content !== 'string' && !Array.isArray(content))
      return invalidRequest(`messages.${index}.content: Input should be a valid list`)
  }
  return undefined
}

/** `tools` is a list of tools that each have a name (schema wordings, assumed). */
export const toolsShape: Rule = ({ body }): SimulatorRejection | undefined => {
  if (!isSet(body.tools)) return undefined
  if (!Array.isArray(body.tools)) return invalidRequest('tools: Input should be a valid list')
  for (const [index, tool] of body.tools.entries()) {
    if (typeof asRecord(tool).name !== 'string') return invalidRequest(`tools.${index}.name: Field required`)
  }
  return undefined
}

/**
 * `diagnostics` is an object (or null) whose `previous_message_id` is a message id or null: the null on
 * the first turn is how a client opts in (cache diagnostics guide; SDK `DiagnosticsParam`). Wordings the
 * schema's, assumed. The field is generally available: no beta header is needed (the guide: "the
 * `cache-diagnosis-2026-04-07` beta header is no longer required").
 */
export const diagnosticsShape: Rule = ({ body }) => {
  const diagnostics = body.diagnostics
  if (!isSet(diagnostics)) return undefined
  if (typeof diagnostics !== 'object' || Array.isArray(diagnostics))
    return invalidRequest('diagnostics: Input should be a valid dictionary or object to extract fields from')
  const previous = asRecord(diagnostics).previous_message_id
  if (isSet(previous) && typeof previous !== 'string')
    return invalidRequest('diagnostics.previous_message_id: Input should be a valid string')
  return undefined
}

/** The beta that lets a thinking budget exceed `max_tokens` (the budget then spans the whole turn). */
const INTERLEAVED_THINKING = 'interleaved-thinking-2025-05-14'

/**
 * `thinking.type: "enabled"` on a model that has only adaptive thinking (Claude 4.7 and later:
 * platform.claude.com/docs/en/build-with-claude/extended-thinking). Wording verbatim from the API
 * (NousResearch/hermes-agent#11137).
 */
export const extendedThinkingSupported: Rule = ({ body, model }) => {
  if (asRecord(body.thinking).type !== 'enabled') return undefined
  if (model.request.kind !== 'anthropic' || model.request.thinking.includes('enabled')) return undefined
  return invalidRequest(
    '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
  )
}

/**
 * A thinking budget below the minimum of 1,024 tokens (extended-thinking docs). Wording verbatim from the
 * API's schema validation (danny-avila/LibreChat#8346, tingly-dev/tingly-box#569).
 */
export const thinkingBudgetMinimum: Rule = ({ body }) => {
  const thinking = asRecord(body.thinking)
  if (thinking.type !== 'enabled' || typeof thinking.budget_tokens !== 'number') return undefined
  if (thinking.budget_tokens >= 1024) return undefined
  return invalidRequest('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024')
}

/**
 * A thinking budget at or above `max_tokens`, which counts the thinking too; with interleaved thinking the
 * budget may exceed it (extended-thinking docs). Wording verbatim from the API
 * (liuw1535/antigravity2api-nodejs#149).
 */
export const thinkingBudgetBelowMaxTokens: Rule = ({ body, betas }) => {
  const thinking = asRecord(body.thinking)
  if (thinking.type !== 'enabled' || typeof thinking.budget_tokens !== 'number') return undefined
  if (typeof body.max_tokens !== 'number' || thinking.budget_tokens < body.max_tokens) return undefined
  if (betas.includes(INTERLEAVED_THINKING)) return undefined
  return invalidRequest(
    '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
  )
}

/**
 * A `temperature` other than its default on a model that removed sampling parameters (Opus 4.7 and 4.8).
 * Wording verbatim from the API (RooCodeInc/Roo-Code#12162, The-PR-Agent/pr-agent#2456). `temperature: 1`
 * is let through: whether the API refuses the default too is not settled by the sources.
 */
export const temperatureSupported: Rule = ({ body, model }) => {
  if (model.request.kind !== 'anthropic' || model.request.temperature) return undefined
  if (!isSet(body.temperature) || body.temperature === 1) return undefined
  return invalidRequest('`temperature` is deprecated for this model.')
}

/** A run of consecutive messages of one role, which the API reads as one turn. */
interface Turn {
  role: unknown
  /** Indices of its messages in `messages`. */
  indices: number[]
}

function turnsOf(messages: readonly unknown[]): Turn[] {
  const turns: Turn[] = []
  for (const [index, message] of messages.entries()) {
    const role = asRecord(message).role
    const last = turns.at(-1)
    if (last !== undefined && last.role === role) last.indices.push(index)
    else turns.push({ role, indices: [index] })
  }
  return turns
}

/** The blocks of type `type` in a turn, with the message index and block index of each. */
function blocksOf(
  messages: readonly unknown[],
  turn: Turn | undefined,
  type: string,
): Array<{ block: Body; index: number; position: number }> {
  if (turn === undefined) return []
  return turn.indices.flatMap((index) =>
    asArray(asRecord(messages[index]).content).flatMap((value, position) => {
      const block = asRecord(value)
      return block.type === type ? [{ block, index, position }] : []
    }),
  )
}

/**
 * Every `tool_use` is answered by a `tool_result` in the next turn, and every `tool_result` answers a
 * `tool_use` of the turn before. Both wordings verbatim from the API (anthropics/claude-code#5060 and
 * #13460); a final assistant turn (a prefill) has no next turn to check.
 */
export const toolResultsPairWithToolUses: Rule = ({ body }) => {
  const messages = asArray(body.messages)
  const turns = turnsOf(messages)
  for (const [position, turn] of turns.entries()) {
    if (turn.role === 'user') {
      const previous = turns[position - 1]
      const used = new Set(
        previous?.role === 'assistant'
          ? blocksOf(messages, previous, 'tool_use').map(({ block }) => block.id)
          : [],
      )
      for (const { block, index, position: at } of blocksOf(messages, turn, 'tool_result')) {
        if (used.has(block.tool_use_id)) continue
        return invalidRequest(
          `messages.${index}.content.${at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        )
      }
    }
    if (turn.role !== 'assistant') continue
    const next = turns[position + 1]
    if (next === undefined) continue
    const answered = new Set(blocksOf(messages, next, 'tool_result').map(({ block }) => block.tool_use_id))
    const unanswered = blocksOf(messages, turn, 'tool_use').filter(({ block }) => !answered.has(block.id))
    const first = unanswered[0]
    if (first === undefined) continue
    return invalidRequest(
      `messages.${first.index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.map(({ block }) => String(block.id)).join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
    )
  }
  return undefined
}

/** The rules of Messages, in the order they are checked (the schema's types and ranges, parameters, then the conversation). */
export const ANTHROPIC_RULES: readonly Rule[] = [
  maxTokensInRange,
  parameterTypes,
  messageFields,
  toolsShape,
  diagnosticsShape,
  extendedThinkingSupported,
  thinkingBudgetMinimum,
  thinkingBudgetBelowMaxTokens,
  temperatureSupported,
  toolResultsPairWithToolUses,
]
