// The Chat Completions message shape shared by OpenAI and DeepSeek: derived messages to wire messages
// (with provenance), and a reply (JSON or a stream of chunks) back to an assistant message.

import { builtFrom, identicalPrefix } from '../harness/lineage.ts'
import type {
  AssistantMessage,
  DerivedRequest,
  Message,
  Seq,
  ToolCallBlock,
  UserMessage,
} from '../harness/types.ts'
import { joinPrefix } from './sim/prompt.ts'
import type { StopReason } from './types.ts'

/** A Chat Completions message as cachelab sends it. */
export type ChatMessage =
  | { role: 'system' | 'developer'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } }

export interface ChatToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

function userContent(message: UserMessage): string | ChatContentPart[] {
  const only = message.content[0]
  if (message.content.length === 1 && only?.type === 'text') return only.text
  return message.content.map((block) =>
    block.type === 'text'
      ? { type: 'text', text: block.text }
      : { type: 'image_url', image_url: { url: `data:${block.mediaType};base64,${block.data}` } },
  )
}

/** Wire messages already built, per derived message and developer role: history is converted once. */
const converted = {
  developer: new WeakMap<Message, ChatMessage>(),
  system: new WeakMap<Message, ChatMessage>(),
}

/** One derived message as a Chat Completions message (memoized: derived messages are immutable). */
function chatMessage(message: Message, developerRole: 'developer' | 'system'): ChatMessage {
  const memo = converted[developerRole]
  const known = memo.get(message)
  if (known !== undefined) return known
  const wire = toChatMessage(message, developerRole)
  memo.set(message, wire)
  return wire
}

function toChatMessage(message: Message, developerRole: 'developer' | 'system'): ChatMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.text }
    case 'developer':
      return { role: developerRole, content: message.text }
    case 'user':
      return { role: 'user', content: userContent(message) }
    case 'assistant': {
      const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
      const calls = message.content.flatMap((block) => (block.type === 'tool-call' ? [block] : []))
      return {
        role: 'assistant',
        content: text === '' ? null : text,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((call) => ({
                id: call.callId,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      }
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.callId, content: message.text }
  }
}

/** The previous request converted: a session's next request repeats most of it. */
let lastBuilt: {
  role: 'developer' | 'system'
  /** The header prompt it was built with: reused only when both its text and its source match. */
  system: DerivedRequest['system']
  derived: readonly DerivedRequest['messages'][number][]
  messages: ChatMessage[]
  sources: Seq[][]
} = { role: 'developer', system: undefined, derived: [], messages: [], sources: [] }

/** Whether two header prompts build the same wire message with the same provenance. */
function sameHeader(a: DerivedRequest['system'], b: DerivedRequest['system']): boolean {
  if (a === undefined || b === undefined) return a === b
  return a.text === b.text && a.sourceSeq === b.sourceSeq
}

/** Wire messages of a derived request; `developerRole` is the role developer messages travel as. */
export function chatMessages(
  request: DerivedRequest,
  developerRole: 'developer' | 'system',
): { messages: ChatMessage[]; sources: Seq[][] } {
  const head = request.system === undefined ? 0 : 1
  const last =
    lastBuilt.role === developerRole && sameHeader(lastBuilt.system, request.system) ? lastBuilt : undefined
  // Derived messages repeated from the previous request (the same frozen objects) keep their wire messages.
  let reused = 0
  if (last !== undefined) {
    // Bounded by what was converted, in case a caller grew its array since. What the derived list claims
    // to share with the previous one (`builtFrom`) is not compared again.
    const bound = Math.min(request.messages.length, last.derived.length, last.messages.length - head)
    reused = Math.min(identicalPrefix(request.messages, last.derived, last.derived), bound)
  }
  const added: ChatMessage[] = []
  const addedSources: Seq[][] = []
  if (last === undefined && request.system !== undefined) {
    added.push({ role: 'system', content: request.system.text })
    addedSources.push([request.system.sourceSeq])
  }
  for (let index = reused; index < request.messages.length; index += 1) {
    const { message, sourceSeqs } = request.messages[index] as DerivedRequest['messages'][number]
    added.push(chatMessage(message, developerRole))
    addedSources.push(sourceSeqs)
  }
  const messages = last === undefined ? added : joinPrefix(last.messages, head + reused, added)
  if (last !== undefined) builtFrom(messages, last.messages, head + reused)
  const sources = last === undefined ? addedSources : joinPrefix(last.sources, head + reused, addedSources)
  lastBuilt = {
    role: developerRole,
    system: request.system === undefined ? undefined : { ...request.system },
    derived: request.messages,
    messages,
    sources,
  }
  // Callers treat these as read-only: the next request builds on them.
  return { messages, sources }
}

/**
 * Tool definitions in the Chat Completions shape. Where the API supports deferred declarations
 * (DeepSeek), a tool added mid-session carries `defer_loading`; elsewhere it is declared like the others.
 */
export function chatTools(
  request: DerivedRequest,
  options: { deferLoading: boolean } = { deferLoading: false },
): Array<Record<string, unknown>> {
  return request.tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    ...(options.deferLoading && tool.deferLoading === true ? { defer_loading: true } : {}),
  }))
}

/** An assistant message from a reply's text and tool calls. */
export function assistantFrom(text: string, calls: readonly ChatToolCall[]): AssistantMessage {
  const content: AssistantMessage['content'] = []
  if (text !== '') content.push({ type: 'text', text })
  for (const call of calls) {
    const block: ToolCallBlock = {
      type: 'tool-call',
      callId: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    }
    content.push(block)
  }
  return { role: 'assistant', content }
}

/** Map a Chat Completions finish reason. Unknown values are an error naming the value. */
export function mapFinishReason(reason: string | null | undefined): StopReason {
  switch (reason) {
    case 'stop':
      return 'end'
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls'
    case 'length':
      return 'max-tokens'
    case 'content_filter':
    case null:
    case undefined:
      return 'error'
    default:
      throw new Error(`unknown finish_reason ${JSON.stringify(reason)}`)
  }
}

/** The streamed pieces of a Chat Completions reply, accumulated chunk by chunk. */
export class ChatStreamAccumulator {
  private text = ''
  private readonly calls: ChatToolCall[] = []
  private finish: string | null | undefined
  /** The usage object of the final chunk (a running total: overwritten, never added). */
  usage: unknown
  id = ''

  add(chunk: {
    id?: string
    usage?: unknown
    choices?: Array<{
      delta?: {
        content?: string | null
        tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }>
      }
      finish_reason?: string | null
    }>
  }): void {
    if (chunk.id !== undefined && chunk.id !== '') this.id = chunk.id
    if (chunk.usage !== undefined && chunk.usage !== null) this.usage = chunk.usage
    const choice = chunk.choices?.[0]
    if (choice === undefined) return
    const delta = choice.delta
    if (typeof delta?.content === 'string') this.text += delta.content
    for (const part of delta?.tool_calls ?? []) {
      let call = this.calls[part.index]
      if (call === undefined) {
        call = { id: '', type: 'function', function: { name: '', arguments: '' } }
        this.calls[part.index] = call
      }
      if (part.id !== undefined) call.id = part.id
      if (part.function?.name !== undefined) call.function.name += part.function.name
      if (part.function?.arguments !== undefined) call.function.arguments += part.function.arguments
    }
    if (choice.finish_reason !== undefined && choice.finish_reason !== null)
      this.finish = choice.finish_reason
  }

  message(): AssistantMessage {
    return assistantFrom(this.text, this.calls)
  }

  stopReason(): StopReason {
    return mapFinishReason(this.finish)
  }
}
