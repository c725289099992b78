// The texts of a request that say what it is for: its system prompt, the latest user message, the JSON
// answer it asks for, read the same way from every wire API. Agent ports tell a title request from a
// compaction by them, the capture tells a structured-output request by them, and reply rules match them.

import { asRecord } from '../../harness/json-fields.ts'
import { bodyShape, type WireApi } from '../types.ts'
import { isAgentNote, isUserTurn, itemsOf } from './digest.ts'

type Body = Record<string, unknown>

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

/** Structured output a request asks for: the answer's text is JSON, valid against the schema when one is given. */
export interface JsonOutput {
  /** The JSON schema the text must match; absent: any JSON object (`json_object`). */
  schema?: unknown
}

/**
 * The structured output a request asks for, if any: Anthropic `output_config.format` (or the beta
 * `output_format`), Chat `response_format`, Responses `text.format` (`json_schema` with a schema, or
 * `json_object`), Gemini `generationConfig.responseMimeType: application/json` with `responseJsonSchema`
 * or `responseSchema`, Converse `outputConfig.textFormat` (its schema a JSON text).
 */
export function jsonOutputOf(api: WireApi, body: Body): JsonOutput | undefined {
  switch (bodyShape(api)) {
    case 'anthropic-messages':
      return jsonFormat(asRecord(body.output_config).format ?? body.output_format)
    case 'openai-chat':
    case 'deepseek-chat': {
      const format = asRecord(body.response_format)
      if (format.type === 'json_object') return {}
      if (format.type !== 'json_schema') return undefined
      const schema = asRecord(format.json_schema).schema
      return schema === undefined ? {} : { schema }
    }
    case 'openai-responses':
      return jsonFormat(asRecord(body.text).format)
    case 'gemini-generate': {
      const config = asRecord(body.generationConfig)
      if (config.responseMimeType !== 'application/json') return undefined
      const schema = config.responseJsonSchema ?? config.responseSchema
      return schema === undefined ? {} : { schema }
    }
    case 'bedrock-converse': {
      const format = asRecord(asRecord(body.outputConfig).textFormat)
      if (format.type !== 'json_schema') return undefined
      const text = asString(asRecord(asRecord(format.structure).jsonSchema).schema)
      try {
        return text === undefined ? {} : { schema: JSON.parse(text) }
      } catch {
        return {}
      }
    }
  }
}

/** `{type: "json_schema", schema}` or `{type: "json_object"}` (Anthropic, Responses). */
function jsonFormat(value: unknown): JsonOutput | undefined {
  const format = asRecord(value)
  if (format.type === 'json_object') return {}
  if (format.type !== 'json_schema') return undefined
  return format.schema === undefined ? {} : { schema: format.schema }
}

/** The text blocks of a content: a string, or the `text` of its text blocks and parts (tool results left out). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  const texts: string[] = []
  for (const value of asArray(content)) {
    const block = asRecord(value)
    const type = block.type
    const text = asString(block.text)
    if (text !== undefined && (type === undefined || type === 'text' || type === 'input_text'))
      texts.push(text)
  }
  return texts.join('\n')
}

/**
 * The text of a request's system prompt: Anthropic and Converse `system` (a string or text blocks),
 * Responses `instructions`, Gemini `systemInstruction`, and every system or developer message in the
 * conversation (Chat, Responses, and the system messages some clients put in Anthropic's), joined by
 * newlines.
 */
export function systemText(api: WireApi, body: Body): string {
  const texts: string[] = []
  switch (bodyShape(api)) {
    case 'anthropic-messages':
    case 'bedrock-converse':
      texts.push(contentText(body.system))
      break
    case 'openai-responses':
      texts.push(asString(body.instructions) ?? '')
      break
    case 'gemini-generate': {
      const instruction = body.systemInstruction
      texts.push(typeof instruction === 'string' ? instruction : contentText(asRecord(instruction).parts))
      break
    }
    case 'openai-chat':
    case 'deepseek-chat':
      break
  }
  for (const item of itemsOf(body)) {
    const record = asRecord(item)
    if (record.role === 'system' || record.role === 'developer') texts.push(contentText(record.content))
  }
  return texts.filter((text) => text !== '').join('\n')
}

/**
 * The text of the latest user message that is not only tool results and agent notes (Gemini `parts`, the
 * others' `content`), the notes left out: what the user typed.
 */
export function lastUserText(body: Body): string {
  const items = itemsOf(body)
  for (let index = items.length - 1; index >= 0; index -= 1) {
    const item = items[index]
    if (!isUserTurn(item)) continue
    const record = asRecord(item)
    const content = record.content ?? record.parts
    return contentText(Array.isArray(content) ? content.filter((block) => !isAgentNote(block)) : content)
  }
  return ''
}

/** The text of the request's last message or input item, whatever its role; '' when there is none. */
export function lastItemText(body: Body): string {
  const record = asRecord(itemsOf(body).at(-1))
  return contentText(record.content ?? record.parts)
}
