// Output token counts of a scripted answer, the same for every provider before scaling.

import type { AssistantMessage } from '../../harness/types.ts'
import type { TokenCounter } from './tokens.ts'

/** Tokens around each tool call (name, id and argument framing). */
const TOOL_CALL_FRAMING = 3

/** Output tokens of an assistant message: its text plus each tool call's name, arguments and framing. */
export function outputTokens(message: AssistantMessage, counter: TokenCounter): number {
  let total = 0
  for (const block of message.content) {
    if (block.type === 'text') total += counter.count(block.text)
    else total += TOOL_CALL_FRAMING + counter.count(block.name) + counter.count(block.arguments)
  }
  return Math.max(total, 1)
}
