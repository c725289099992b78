// How a caller tells a mock provider what the model answers and when: the scripted assistant message
// travels in `x-cachelab-script` (base64url JSON) and the virtual request time in `x-cachelab-at`.
// Both are request headers, so the same handlers serve in-process MSW and the loopback server. Without
// the script, a replies file or the default answers (reply.ts).

import type { AssistantMessage } from '../../harness/types.ts'

export const SCRIPT_HEADER = 'x-cachelab-script'
export const TIME_HEADER = 'x-cachelab-at'
export const SESSION_HEADER = 'x-cachelab-session'
/** Set by the loopback server on the request it hands a mock handler, to match the handler's report to it. */
export const EXCHANGE_HEADER = 'x-cachelab-exchange'
/**
 * Set by the loopback server, to the exchange id, on a request it placed: the handler takes the body the
 * server parsed and the request's place (session, conversation, kind, turn, step, as the capture numbers
 * it, so the replies use the same) by that id. A client's own is dropped; in process it is never set.
 */
export const PLACE_HEADER = 'x-cachelab-place'

/** The plain answer: what `simulate` and a live prediction assume, and what a failure before any answer reports. */
export const DEFAULT_REPLY: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'OK.' }] }

/**
 * A scripted answer in the header: the assistant message, and whether the model also reasons as it would
 * unscripted (`as-requested`: where the request or the model turns reasoning on, as a real thinking-mode
 * answer always does). Without the field a scripted answer carries no reasoning.
 */
export type HeaderAnswer = AssistantMessage & { reasoning?: 'as-requested' }

export function encodeScript(message: HeaderAnswer): string {
  return Buffer.from(JSON.stringify(message), 'utf8').toString('base64url')
}

/** The scripted reply of a request, or undefined when absent; a malformed header is an error. */
export function decodeScript(header: string | null): HeaderAnswer | undefined {
  if (header === null || header === '') return undefined
  const value: unknown = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'))
  if (typeof value !== 'object' || value === null || (value as { role?: unknown }).role !== 'assistant') {
    throw new Error(`${SCRIPT_HEADER} must encode an assistant message`)
  }
  const content = (value as { content?: unknown }).content
  if (
    !Array.isArray(content) ||
    content.some((block) => typeof block !== 'object' || block === null || typeof block.type !== 'string')
  )
    throw new Error(`${SCRIPT_HEADER} must encode an assistant message whose content is an array of blocks`)
  const reasoning = (value as { reasoning?: unknown }).reasoning
  if (reasoning !== undefined && reasoning !== 'as-requested')
    throw new Error(`${SCRIPT_HEADER}: reasoning must be "as-requested" when present`)
  return value as HeaderAnswer
}
