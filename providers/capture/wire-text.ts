// The texts of a request that say what it is for: its system prompt and the latest user message, read
// the same way from every wire API. Agent ports tell a title request from a compaction by them, and
// reply rules match substrings of them.

import type { WireApi } from '../types.ts'
import { isUserTurn, itemsOf } from './digest.ts'

type Body = Record<string, unknown>

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const asRecord = (value: unknown): Body =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Body) : {}

/** The text of a content value: a string, or the text of its text blocks and parts, joined. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  const texts: string[] = []
  for (const block of asArray(content)) {
    const record = asRecord(block)
    if (typeof record.text === 'string') texts.push(record.text)
  }
  return texts.join('\n')
}

/** The text of a message or input item: its content, or Gemini's parts. */
function itemText(item: unknown): string {
  const record = asRecord(item)
  return contentText(record.content ?? record.parts)
}

/**
 * The system prompt's text: Anthropic and Bedrock `system`, Responses `instructions`, Gemini
 * `systemInstruction`, and the system and developer messages of the message list, in order.
 */
export function systemText(api: WireApi, body: Body): string {
  const texts: string[] = []
  switch (api) {
    case 'openai-responses':
      if (typeof body.instructions === 'string') texts.push(body.instructions)
      break
    case 'gemini-generate':
      texts.push(itemText(body.systemInstruction))
      break
    default:
      texts.push(contentText(body.system))
  }
  for (const item of itemsOf(body)) {
    const role = asRecord(item).role
    if (role === 'system' || role === 'developer') texts.push(itemText(item))
  }
  return texts.filter((text) => text !== '').join('\n\n')
}

/** The text of the latest user message that is not only tool results; '' when there is none. */
export function lastUserText(body: Body): string {
  const items = itemsOf(body)
  for (let index = items.length - 1; index >= 0; index -= 1) {
    const item = items[index]
    if (isUserTurn(item)) return itemText(item)
  }
  return ''
}

/** The text of the request's last message or input item, whatever its role; '' when there is none. */
export function lastItemText(body: Body): string {
  return itemText(itemsOf(body).at(-1))
}
