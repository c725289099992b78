// Output token counts of a scripted answer, the same for every provider before scaling.

import type { AssistantMessage } from '../../harness/types.ts'
import { scaleTokens } from './prompt.ts'
import type { TokenCounter } from './tokens.ts'
import type { SimulationRequest } from './types.ts'

/** Tokens around each tool call (name, id and argument framing). */
const TOOL_CALL_FRAMING = 3

/** Output tokens of one block of an answer: its text, or a tool call's name, arguments and framing. */
export function blockOutputTokens(block: AssistantMessage['content'][number], counter: TokenCounter): number {
  return block.type === 'text'
    ? counter.count(block.text)
    : TOOL_CALL_FRAMING + counter.count(block.name) + counter.count(block.arguments)
}

/** Output tokens of an assistant message: its text plus each tool call's name, arguments and framing. */
export function outputTokens(message: AssistantMessage, counter: TokenCounter): number {
  let total = 0
  for (const block of message.content) total += blockOutputTokens(block, counter)
  return Math.max(total, 1)
}

/** The output tokens a request bills: the caller's count when it decided one, else the answer's own, scaled. */
export function billedOutputTokens(request: SimulationRequest, counter: TokenCounter, scale: number): number {
  return scaleTokens(request.outputTokens ?? outputTokens(request.output, counter), scale)
}
