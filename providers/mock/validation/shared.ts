// What every API's validation shares: the request a rule reads, a rule's shape, the OpenAI-family error
// envelope, and the walk that pairs Chat Completions tool calls with their tool messages (OpenAI and
// DeepSeek enforce the same pairing and word their refusals differently).

import { asRecord } from '../../../harness/json-fields.ts'
import type { ModelEntry } from '../../catalog.ts'
import { SimulatorRejection } from '../../sim/types.ts'

export type Body = Record<string, unknown>

/** A request as the validation reads it. */
export interface ValidationRequest {
  body: Body
  /** The catalog entry of the request's model (the vendor default's rules for a model it does not list). */
  model: ModelEntry
  /** The beta features the request names in its `anthropic-beta` header. */
  betas: readonly string[]
}

/** One documented rule: the API's refusal of a request that breaks it, or undefined when it holds. */
export type Rule = (request: ValidationRequest) => SimulatorRejection | undefined

export { asRecord }
export const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
/** JSON clients send `null` for a field they leave unset. */
export const isSet = (value: unknown): boolean => value !== undefined && value !== null

/** The refusal of the first rule a request breaks, in the given order. */
export function firstRefusal(
  rules: readonly Rule[],
  request: ValidationRequest,
): SimulatorRejection | undefined {
  for (const rule of rules) {
    const refusal = rule(request)
    if (refusal !== undefined) return refusal
  }
  return undefined
}

/** An error in the OpenAI envelope, which DeepSeek shares: `{error: {message, type, param, code}}`. */
export function openAIError(
  status: number,
  message: string,
  param: string | null,
  code: string | null,
): SimulatorRejection {
  return new SimulatorRejection(status, message, {
    error: { message, type: 'invalid_request_error', param, code },
  })
}

/** Where a Chat Completions conversation breaks the pairing of tool calls and tool messages. */
export type PairingBreak =
  /** A `tool` message that answers no call of the assistant message it follows. */
  | { kind: 'orphan-tool'; index: number }
  /** An assistant message whose calls are not all answered before the next non-tool message. */
  | { kind: 'unanswered-calls'; index: number; ids: string[] }

/** The tool call ids of an assistant message (empty for any other message). */
function callIds(message: Body): string[] {
  if (message.role !== 'assistant') return []
  return asArray(message.tool_calls).flatMap((call) => {
    const id = asRecord(call).id
    return typeof id === 'string' ? [id] : []
  })
}

/**
 * The first break of tool-call pairing, in message order: every `tool` message must answer a call of the
 * assistant message before it (other tool messages may sit between), and every call must be answered
 * before the next message of another role. An assistant message whose calls nothing follows is the
 * conversation's open end, not a break.
 */
export function toolPairing(messages: readonly unknown[]): PairingBreak | undefined {
  let open: { index: number; calls: Set<string>; pending: Set<string> } | undefined
  const unanswered = (): PairingBreak | undefined =>
    open !== undefined && open.pending.size > 0
      ? { kind: 'unanswered-calls', index: open.index, ids: [...open.pending] }
      : undefined
  for (const [index, value] of messages.entries()) {
    const message = asRecord(value)
    if (message.role === 'tool') {
      const id = message.tool_call_id
      if (open === undefined || typeof id !== 'string' || !open.calls.has(id))
        return { kind: 'orphan-tool', index }
      open.pending.delete(id)
      continue
    }
    const broken = unanswered()
    if (broken !== undefined) return broken
    const ids = callIds(message)
    open = ids.length > 0 ? { index, calls: new Set(ids), pending: new Set(ids) } : undefined
  }
  // Calls some of which were answered and the rest never: the conversation went on without them.
  if (open !== undefined && open.pending.size < open.calls.size) return unanswered()
  return undefined
}
