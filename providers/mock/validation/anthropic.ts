// Anthropic Messages: what the API refuses before it runs a model, beyond what the cache simulator already
// refuses (breakpoint count, TTL values and order, system roles: sim/anthropic.ts and
// sim/linearize-anthropic.ts keep those, in one place). Role order is not refused: the API merges
// consecutive turns of one role and accepts a first assistant message (see the note).

import { invalidRequest } from '../../sim/linearize-anthropic.ts'
import { asArray, asRecord, type Body, isSet, type Rule } from './shared.ts'

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

/** The rules of Messages, in the order they are checked (parameters before the conversation). */
export const ANTHROPIC_RULES: readonly Rule[] = [
  extendedThinkingSupported,
  thinkingBudgetMinimum,
  thinkingBudgetBelowMaxTokens,
  temperatureSupported,
  toolResultsPairWithToolUses,
]
