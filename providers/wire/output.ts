// The model's answer in a provider response, as the assistant message cachelab scripts mocks with:
// its text and its tool calls (ids, names, argument JSON). Read from the JSON body or from the stream's
// events, for each wire API, so a recorded live answer can be served again by the mock handlers.

import type { AssistantMessage, TextBlock, ToolCallBlock } from '../../harness/types.ts'
import { geminiAnswerOf } from '../gemini.ts'
import { bodyShape, type WireApi } from '../types.ts'

type Json = Record<string, unknown>

const asRecord = (value: unknown): Json =>
  typeof value === 'object' && value !== null ? (value as Json) : {}
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const asString = (value: unknown): string => (typeof value === 'string' ? value : '')

function parse(text: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null ? (value as Json) : undefined
  } catch {
    return undefined
  }
}

/** The `data:` payloads of an SSE text, parsed; `[DONE]` and unparsable frames left out. */
function events(text: string): Json[] {
  const found: Json[] = []
  for (const frame of text.split(/\r?\n\r?\n/)) {
    const data = frame
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n')
    const event = data === '' || data === '[DONE]' ? undefined : parse(data)
    if (event !== undefined) found.push(event)
  }
  return found
}

function message(text: string, calls: ToolCallBlock[]): AssistantMessage {
  const content: Array<TextBlock | ToolCallBlock> = text === '' ? [] : [{ type: 'text', text }]
  return { role: 'assistant', content: [...content, ...calls] }
}

/** A tool call from its id, name and argument JSON as the response spelled them. */
function toolCall(callId: unknown, name: unknown, args: string): ToolCallBlock {
  return { type: 'tool-call', callId: asString(callId), name: asString(name), arguments: args }
}

/** A streamed message: its text, and its calls by block index with their argument pieces joined (none: `{}`). */
function streamedMessage(text: string, calls: ReadonlyMap<number, ToolCallBlock>): AssistantMessage {
  return message(
    text,
    [...calls.values()].map((call) => ({
      ...call,
      arguments: call.arguments === '' ? '{}' : call.arguments,
    })),
  )
}

/** Anthropic Messages: content blocks, or the stream's block starts and deltas. */
function anthropicOutput(body: Json | undefined, stream: Json[]): AssistantMessage {
  if (body !== undefined) {
    let text = ''
    const calls: ToolCallBlock[] = []
    for (const block of asArray(body.content).map(asRecord)) {
      if (block.type === 'text') text += asString(block.text)
      if (block.type === 'tool_use')
        calls.push(toolCall(block.id, block.name, JSON.stringify(block.input ?? {})))
    }
    return message(text, calls)
  }
  let text = ''
  const calls = new Map<number, ToolCallBlock>()
  for (const event of stream) {
    const index = typeof event.index === 'number' ? event.index : -1
    if (event.type === 'content_block_start') {
      const block = asRecord(event.content_block)
      if (block.type === 'tool_use') calls.set(index, toolCall(block.id, block.name, ''))
    } else if (event.type === 'content_block_delta') {
      const delta = asRecord(event.delta)
      if (delta.type === 'text_delta') text += asString(delta.text)
      const call = calls.get(index)
      if (delta.type === 'input_json_delta' && call !== undefined)
        call.arguments += asString(delta.partial_json)
    }
  }
  return streamedMessage(text, calls)
}

/** Chat Completions (OpenAI, DeepSeek): the first choice's message, or its deltas. */
function chatOutput(body: Json | undefined, stream: Json[]): AssistantMessage {
  if (body !== undefined) {
    const reply = asRecord(asRecord(asArray(body.choices)[0]).message)
    const calls = asArray(reply.tool_calls)
      .map(asRecord)
      .map((call) => {
        const fn = asRecord(call.function)
        return toolCall(call.id, fn.name, asString(fn.arguments))
      })
    return message(asString(reply.content), calls)
  }
  let text = ''
  const calls = new Map<number, ToolCallBlock>()
  for (const event of stream) {
    const delta = asRecord(asRecord(asArray(event.choices)[0]).delta)
    text += asString(delta.content)
    for (const part of asArray(delta.tool_calls).map(asRecord)) {
      const index = typeof part.index === 'number' ? part.index : 0
      const fn = asRecord(part.function)
      const call = calls.get(index) ?? toolCall('', '', '')
      if (typeof part.id === 'string') call.callId = part.id
      if (typeof fn.name === 'string') call.name = fn.name
      call.arguments += asString(fn.arguments)
      calls.set(index, call)
    }
  }
  return message(text, [...calls.values()])
}

/** Responses: the output items of the response (the stream's `response.completed` carries it whole). */
function responsesOutput(body: Json | undefined, stream: Json[]): AssistantMessage {
  const response =
    body ?? asRecord(stream.find((event) => event.type === 'response.completed')?.response ?? undefined)
  let text = ''
  const calls: ToolCallBlock[] = []
  for (const item of asArray(response.output).map(asRecord)) {
    if (item.type === 'message')
      for (const part of asArray(item.content).map(asRecord))
        if (part.type === 'output_text') text += asString(part.text)
    if (item.type === 'function_call') calls.push(toolCall(item.call_id, item.name, asString(item.arguments)))
  }
  return message(text, calls)
}

/**
 * Bedrock Converse: the output message's text and `toolUse` blocks, or ConverseStream's block starts and
 * deltas (its event-stream read as server-sent events, `answerText` in mock/exchange.ts). A stream's
 * payloads carry no event type, but each kind has its own shape: `start.toolUse`, `delta.text`,
 * `delta.toolUse.input`. Reasoning is left out, as every other reader leaves it.
 */
function converseOutput(body: Json | undefined, stream: Json[]): AssistantMessage {
  if (body !== undefined) {
    let text = ''
    const calls: ToolCallBlock[] = []
    for (const block of asArray(asRecord(asRecord(body.output).message).content).map(asRecord)) {
      if (typeof block.text === 'string') text += block.text
      const use = asRecord(block.toolUse)
      if (block.toolUse !== undefined)
        calls.push(toolCall(use.toolUseId, use.name, JSON.stringify(use.input ?? {})))
    }
    return message(text, calls)
  }
  let text = ''
  const calls = new Map<number, ToolCallBlock>()
  for (const event of stream) {
    const index = typeof event.contentBlockIndex === 'number' ? event.contentBlockIndex : -1
    const start = asRecord(event.start)
    const use = asRecord(start.toolUse)
    if (start.toolUse !== undefined) calls.set(index, toolCall(use.toolUseId, use.name, ''))
    const delta = asRecord(event.delta)
    text += asString(delta.text)
    const call = calls.get(index)
    if (call !== undefined) call.arguments += asString(asRecord(delta.toolUse).input)
  }
  return streamedMessage(text, calls)
}

/**
 * The assistant message of a successful response of `api`, from its text as sent (JSON, or an event
 * stream when `contentType` says so); undefined when the text holds no answer.
 */
export function answerOf(api: WireApi, text: string, contentType: string): AssistantMessage | undefined {
  const streamed = contentType.includes('text/event-stream')
  const body = streamed ? undefined : parse(text)
  const stream = streamed ? events(text) : []
  if (body === undefined && stream.length === 0) return undefined
  switch (bodyShape(api)) {
    case 'anthropic-messages':
      return anthropicOutput(body, stream)
    case 'openai-chat':
    case 'deepseek-chat':
      return chatOutput(body, stream)
    case 'openai-responses':
      return responsesOutput(body, stream)
    case 'gemini-generate':
      return geminiAnswerOf(body === undefined ? stream : [body])
    case 'bedrock-converse':
      return converseOutput(body, stream)
  }
}

/** The id of a Responses response, from its JSON body or its stream's `response.created`/`completed` event. */
export function responseIdOf(text: string, contentType: string): string | undefined {
  const body = contentType.includes('text/event-stream')
    ? asRecord(events(text).find((event) => typeof asRecord(event.response).id === 'string')?.response)
    : parse(text)
  return typeof body?.id === 'string' ? body.id : undefined
}

/**
 * The message of an error response (`error.message` in every vendor's envelope, or a top-level
 * `message`), on one line; undefined when the text is not such a body.
 */
export function errorMessageOf(text: string): string | undefined {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return undefined
  }
  const record = (Array.isArray(body) ? body[0] : body) as Record<string, unknown> | undefined
  const error = record?.error as Record<string, unknown> | undefined
  const message = error?.message ?? record?.message
  return typeof message === 'string' && message.trim() !== ''
    ? message.replace(/\s+/g, ' ').trim()
    : undefined
}
