// The loop's own token meter: an estimate of how many tokens a message or a request occupies, for what
// DSH measures with its token meter (a compaction's shadowed token count, context pressure). It is an
// estimate by design: the provider's tokenizer lives in providers/, below which the loop may not reach,
// and the numbers only need to be deterministic and proportional to size.

import { identicalPrefix } from './lineage.ts'
import type { DerivedRequest, Message } from './types.ts'

/** Characters per token of the estimate (the common rule of thumb for English text and code). */
const CHARACTERS_PER_TOKEN = 4
/** Pixels per token of an image (Anthropic's published estimate, width × height / 750). */
const PIXELS_PER_TOKEN = 750

/** Estimated tokens of a text. */
export function textTokens(text: string): number {
  return Math.ceil(text.length / CHARACTERS_PER_TOKEN)
}

/** Estimated tokens of one message. */
export function messageTokens(message: Message): number {
  switch (message.role) {
    case 'system':
    case 'developer':
      return textTokens(message.text)
    case 'tool':
      return textTokens(message.text)
    case 'user':
      return message.content.reduce(
        (sum, block) =>
          sum +
          (block.type === 'text'
            ? textTokens(block.text)
            : Math.ceil((block.width * block.height) / PIXELS_PER_TOKEN)),
        0,
      )
    case 'assistant':
      return message.content.reduce(
        (sum, block) => sum + textTokens(block.type === 'text' ? block.text : block.arguments),
        0,
      )
  }
}

/**
 * The previous request's messages and their running token sums: the next request of a session repeats
 * most of them (the same derived objects), so it counts only what it added. Both lists are this module's
 * own and are cut back and extended in place, so a request costs its compare plus what it added.
 */
let lastMessages: {
  messages: DerivedRequest['messages'][number][]
  /** The list `messages` was copied from (its successor's claim is about it). */
  source?: readonly unknown[]
  sums: number[]
} = {
  messages: [],
  sums: [0],
}

/** Estimated tokens of a request's messages, the shared prefix with the previous request's counted once. */
function messagesTokens(messages: readonly DerivedRequest['messages'][number][]): number {
  const last = lastMessages
  // Reset first: a throw below leaves no half-updated lists behind.
  lastMessages = { messages: [], sums: [0] }
  const shared = identicalPrefix(messages, last.messages, last.source)
  const { sums } = last
  last.messages.length = shared
  sums.length = shared + 1
  for (let index = shared; index < messages.length; index += 1) {
    const derived = messages[index] as DerivedRequest['messages'][number]
    sums.push((sums[index] ?? 0) + messageTokens(derived.message))
    last.messages.push(derived)
  }
  lastMessages = { ...last, source: messages }
  return sums[messages.length] ?? 0
}

/** Estimated tokens of a whole request: system slot, tool definitions and messages. */
export function requestTokens(request: DerivedRequest): number {
  return (
    textTokens(request.system?.text ?? '') +
    textTokens(request.tools.length > 0 ? JSON.stringify(request.tools) : '') +
    messagesTokens(request.messages)
  )
}
