// A recorded Chat Completions body (DSH's rebuilt DeepSeek requests) as another provider's wire: the same
// conversation — system prompt, turns, tool calls and results, tool schemas — in Anthropic Messages,
// OpenAI Chat or OpenAI Responses form, under another model, the way cachelab's own adapters frame a
// request. Pure and deterministic; converted messages are shared between a session's bodies (keyed by the
// source message objects, which the DSH reader shares) so a long session costs one array per request.

import type { BuiltInProviderId } from '../../../harness/types.ts'
import { DEFAULT_MAX_TOKENS } from '../../../providers/anthropic-request.ts'
import { converseFromMessages } from '../../../providers/bedrock.ts'
import type { WireApi } from '../../../providers/types.ts'
import { type Fields, fieldsOf, listOf, numberOf, textOf } from './fields.ts'

/** The wire each provider id is translated to. */
export const TARGET_WIRES: Readonly<Record<BuiltInProviderId, WireApi>> = {
  anthropic: 'anthropic-messages',
  'openai-chat': 'openai-chat',
  'openai-responses': 'openai-responses',
  deepseek: 'deepseek-chat',
  bedrock: 'bedrock-converse',
  gemini: 'gemini-generate',
}

/** A body translated to the target wire, with what the translation had to estimate. */
export interface TranslatedBody {
  api: WireApi
  body: Record<string, unknown>
  /** What the body holds that the recorded one did not say (framing, schema conversion, dropped fields). */
  estimated: string[]
}

/** A translation, or why the recorded body cannot be translated. */
export type Translation =
  | { kind: 'translated'; translated: TranslatedBody }
  | { kind: 'untranslatable'; reason: string }

/** Text between instructions taken from more than one leading system message (as cachelab's Responses adapter joins them). */
const INSTRUCTIONS_SEPARATOR = '\n\n'

/** What the translation to each wire estimates, beyond what the recorded body already estimated. */
const ESTIMATES: Readonly<Record<BuiltInProviderId, readonly string[]>> = {
  anthropic: [
    "Anthropic framing: leading system messages as the top-level system, tool results as tool_result blocks of a user turn, the automatic top-level cache_control (5m) as cachelab's adapter marks requests",
    'tool schemas: Chat function parameters used as input_schema unchanged',
    'reasoning not carried back (thinking blocks need signatures the log does not hold); thinking off',
    'a system message inside the history becomes tagged user text; max_tokens from the body or 1024',
  ],
  'openai-chat': [
    'OpenAI Chat framing: the same messages and tools; reasoning_content and DeepSeek thinking fields dropped; prompt_cache_key = the session',
  ],
  'openai-responses': [
    'Responses framing: leading system messages as instructions, messages as input items, tool calls as function_call / function_call_output; reasoning not carried (store: false); prompt_cache_key = the session',
    'tool schemas: Chat function tools flattened to Responses function tools',
  ],
  deepseek: ['DeepSeek Chat: the recorded body under the target model'],
  bedrock: [
    'Bedrock Converse framing: the Anthropic translation rewritten block for block, one cache point after the last block (Bedrock has no automatic marker)',
  ],
  gemini: [
    'Gemini framing: leading system messages as systemInstruction parts, turns as user/model contents, tool calls as functionCall parts (arguments parsed), tool results as functionResponse parts ({output}) of a user turn',
    'tool schemas: Chat function parameters used as parametersJsonSchema unchanged; reasoning not carried; a system message inside the history becomes tagged user text',
  ],
}

/** The text of a Chat message's content: a string, or its text parts joined. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  return listOf(content)
    .map(fieldsOf)
    .filter((part) => part.type === 'text' || part.type === 'input_text')
    .map((part) => textOf(part.text) ?? '')
    .join('')
}

/** A tool call's arguments as an Anthropic `input` object; text that is no JSON object is kept under `arguments`. */
function toolInput(argumentsText: string): Record<string, unknown> {
  if (argumentsText.trim() === '') return {}
  try {
    const parsed: unknown = JSON.parse(argumentsText)
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>
  } catch {
    // Torn arguments the model produced: kept as text so their tokens stay in the prompt.
  }
  return { arguments: argumentsText }
}

/** A Chat assistant message's tool calls as `{id, name, arguments}`. */
function toolCalls(message: Fields): Array<{ id: string; name: string; arguments: string }> {
  return listOf(message.tool_calls).map((value) => {
    const call = fieldsOf(value)
    const fn = fieldsOf(call.function)
    return { id: textOf(call.id) ?? '', name: textOf(fn.name) ?? '', arguments: textOf(fn.arguments) ?? '' }
  })
}

/** A Chat function tool as `{name, description, parameters}`. */
function functionOf(tool: unknown): { name: string; description: string; parameters: Fields } {
  const fn = fieldsOf(fieldsOf(tool).function)
  const parameters = fieldsOf(fn.parameters)
  return {
    name: textOf(fn.name) ?? '',
    description: textOf(fn.description) ?? '',
    // Anthropic and Responses require an object schema; a tool without one takes no arguments.
    parameters: Object.keys(parameters).length > 0 ? parameters : { type: 'object', properties: {} },
  }
}

function isSystem(message: Fields): boolean {
  return message.role === 'system' || message.role === 'developer'
}

/** The leading system messages' texts and where the conversation after them starts. */
function leadingSystem(messages: readonly unknown[]): { texts: string[]; start: number } {
  const texts: string[] = []
  let start = 0
  while (start < messages.length && isSystem(fieldsOf(messages[start]))) {
    texts.push(contentText(fieldsOf(messages[start]).content))
    start += 1
  }
  return { texts, start }
}

/**
 * Anthropic-shaped turns as Gemini contents: text parts, `functionCall` parts, `functionResponse` parts
 * named after the call they answer (Gemini pairs responses by name, Chat by id).
 */
function geminiContents(turns: readonly AnthropicMessage[]): unknown[] {
  const names = new Map<string, string>()
  return turns.map((turn) => ({
    role: turn.role === 'assistant' ? 'model' : 'user',
    parts: turn.content.map((block) => {
      switch (block.type) {
        case 'tool_use':
          names.set(String(block.id), String(block.name))
          return { functionCall: { id: block.id, name: block.name, args: block.input } }
        case 'tool_result':
          return {
            functionResponse: {
              id: block.tool_use_id,
              name: names.get(String(block.tool_use_id)) ?? '',
              response: { output: block.content },
            },
          }
        default:
          return { text: block.text }
      }
    }),
  }))
}

type AnthropicBlock = Record<string, unknown>
interface AnthropicMessage {
  role: 'user' | 'assistant'
  content: AnthropicBlock[]
}

/** The Anthropic blocks one Chat message contributes to its turn, and the turn's role. */
function anthropicBlocks(message: Fields): { role: 'user' | 'assistant'; blocks: AnthropicBlock[] } {
  switch (message.role) {
    case 'assistant': {
      const text = contentText(message.content)
      return {
        role: 'assistant',
        blocks: [
          ...(text === '' ? [] : [{ type: 'text', text }]),
          ...toolCalls(message).map((call) => ({
            type: 'tool_use',
            id: call.id,
            name: call.name,
            input: toolInput(call.arguments),
          })),
        ],
      }
    }
    case 'tool':
      return {
        role: 'user',
        blocks: [
          {
            type: 'tool_result',
            tool_use_id: textOf(message.tool_call_id) ?? '',
            content: contentText(message.content),
          },
        ],
      }
    case 'system':
    case 'developer':
      // Anthropic refuses `system` inside messages on most models: the text travels as tagged user text.
      return {
        role: 'user',
        blocks: [
          { type: 'text', text: `<${message.role}>\n${contentText(message.content)}\n</${message.role}>` },
        ],
      }
    default: {
      const text = contentText(message.content)
      return { role: 'user', blocks: text === '' ? [] : [{ type: 'text', text }] }
    }
  }
}

/** A converted turn and the source messages it came from, compared by identity on reuse. */
interface CachedTurn {
  members: readonly unknown[]
  turn: AnthropicMessage
}

/**
 * Translates a session's recorded bodies to one target wire and model. Holds the conversions of the
 * source messages it has seen (weakly), so consecutive bodies of a session share converted messages.
 */
export class WireTranslator {
  readonly target: BuiltInProviderId
  readonly model: string
  private readonly items = new WeakMap<object, unknown[]>()
  private readonly turns = new WeakMap<object, CachedTurn[]>()
  private readonly tools = new WeakMap<object, unknown[]>()

  constructor(target: BuiltInProviderId, model: string) {
    this.target = target
    this.model = model
  }

  /** The recorded request as the target's wire; `session` keys OpenAI's cache routing. */
  translate(source: { api: WireApi; body: Record<string, unknown> }, session: string): Translation {
    const api = TARGET_WIRES[this.target]
    if (source.api !== 'deepseek-chat' && source.api !== 'openai-chat') {
      if (source.api === api)
        return {
          kind: 'translated',
          translated: { api, body: { ...source.body, model: this.model }, estimated: [] },
        }
      return {
        kind: 'untranslatable',
        reason: `a recorded ${source.api} body translates only to itself (Chat Completions bodies translate to every wire)`,
      }
    }
    const body = this.body(source.body, session)
    return { kind: 'translated', translated: { api, body, estimated: [...ESTIMATES[this.target]] } }
  }

  private body(source: Record<string, unknown>, session: string): Record<string, unknown> {
    const messages = listOf(source.messages)
    const maxTokens = numberOf(source.max_tokens) ?? numberOf(source.max_completion_tokens)
    switch (this.target) {
      case 'deepseek':
        return { ...source, model: this.model }
      case 'openai-chat': {
        const tools = listOf(source.tools)
        return {
          model: this.model,
          messages: messages.map((message) => this.chatMessage(message)),
          ...(tools.length > 0 ? { tools } : {}),
          ...(maxTokens !== undefined ? { max_completion_tokens: maxTokens } : {}),
          prompt_cache_key: session,
        }
      }
      case 'openai-responses': {
        const { texts, start } = leadingSystem(messages)
        const tools = this.convertedTools(source.tools, (tool) => ({ type: 'function', ...functionOf(tool) }))
        return {
          model: this.model,
          ...(texts.length > 0 ? { instructions: texts.join(INSTRUCTIONS_SEPARATOR) } : {}),
          input: messages.slice(start).flatMap((message) => this.responsesItems(message)),
          ...(tools.length > 0 ? { tools } : {}),
          ...(maxTokens !== undefined ? { max_output_tokens: maxTokens } : {}),
          store: false,
          prompt_cache_key: session,
        }
      }
      case 'bedrock': {
        const messagesBody = new WireTranslator('anthropic', this.model).body(source, session)
        return converseFromMessages(messagesBody).input
      }
      case 'gemini': {
        const { texts, start } = leadingSystem(messages)
        const tools = this.convertedTools(source.tools, (tool) => {
          const { name, description, parameters } = functionOf(tool)
          return { name, description, parametersJsonSchema: parameters }
        })
        return {
          model: this.model,
          contents: geminiContents(this.anthropicTurns(messages.slice(start))),
          ...(texts.length > 0 ? { systemInstruction: { parts: texts.map((text) => ({ text })) } } : {}),
          ...(tools.length > 0 ? { tools: [{ functionDeclarations: tools }] } : {}),
          ...(maxTokens !== undefined ? { generationConfig: { maxOutputTokens: maxTokens } } : {}),
        }
      }
      case 'anthropic': {
        const { texts, start } = leadingSystem(messages)
        const tools = this.convertedTools(source.tools, (tool) => {
          const { name, description, parameters } = functionOf(tool)
          return { name, description, input_schema: parameters }
        })
        return {
          model: this.model,
          max_tokens: maxTokens ?? DEFAULT_MAX_TOKENS,
          ...(texts.length > 0 ? { system: texts.map((text) => ({ type: 'text', text })) } : {}),
          messages: this.anthropicTurns(messages.slice(start)),
          ...(tools.length > 0 ? { tools } : {}),
          cache_control: { type: 'ephemeral', ttl: '5m' },
        }
      }
    }
  }

  /** A Chat message without DeepSeek's `reasoning_content` (OpenAI's Chat API takes no reasoning back). */
  private chatMessage(message: unknown): unknown {
    const fields = fieldsOf(message)
    if (!('reasoning_content' in fields)) return message
    return this.cached(message, () => {
      const { reasoning_content: _reasoning, ...rest } = fields
      return [rest]
    })[0]
  }

  private responsesItems(message: unknown): unknown[] {
    return this.cached(message, () => {
      const fields = fieldsOf(message)
      const text = contentText(fields.content)
      switch (fields.role) {
        case 'assistant':
          return [
            ...(text === ''
              ? []
              : [
                  {
                    type: 'message',
                    role: 'assistant',
                    content: [{ type: 'output_text', text, annotations: [] }],
                  },
                ]),
            ...toolCalls(fields).map((call) => ({
              type: 'function_call',
              call_id: call.id,
              name: call.name,
              arguments: call.arguments,
            })),
          ]
        case 'tool':
          return [{ type: 'function_call_output', call_id: textOf(fields.tool_call_id) ?? '', output: text }]
        case 'system':
        case 'developer':
          return [{ type: 'message', role: fields.role, content: [{ type: 'input_text', text }] }]
        default:
          return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }]
      }
    })
  }

  /**
   * Chat messages as alternating Anthropic turns: consecutive user-side messages (user text, tool
   * results, history system text) join one user turn; an assistant message with nothing to say is left
   * out (the API refuses empty content), so the turns around it join.
   */
  private anthropicTurns(messages: readonly unknown[]): AnthropicMessage[] {
    const groups: Array<{ role: 'user' | 'assistant'; members: unknown[] }> = []
    for (const message of messages) {
      const { role, blocks } = anthropicBlocks(fieldsOf(message))
      if (blocks.length === 0) continue
      const last = groups.at(-1)
      if (last !== undefined && last.role === role) last.members.push(message)
      else groups.push({ role, members: [message] })
    }
    return groups.map((group) => this.anthropicTurn(group.role, group.members))
  }

  private anthropicTurn(role: 'user' | 'assistant', members: readonly unknown[]): AnthropicMessage {
    const first = members[0]
    const key = typeof first === 'object' && first !== null ? first : undefined
    const known = key === undefined ? undefined : this.turns.get(key)
    const hit = known?.find(
      (entry) =>
        entry.members.length === members.length &&
        entry.members.every((member, index) => member === members[index]),
    )
    if (hit !== undefined) return hit.turn
    const turn: AnthropicMessage = {
      role,
      content: members.flatMap((member) => anthropicBlocks(fieldsOf(member)).blocks),
    }
    // A turn still growing (tool results arriving) is converted again per length; older lengths stay for
    // a later body that repeats them.
    if (key !== undefined) this.turns.set(key, [...(known ?? []), { members: [...members], turn }])
    return turn
  }

  private convertedTools(tools: unknown, convert: (tool: unknown) => unknown): unknown[] {
    const list = listOf(tools)
    if (!Array.isArray(tools)) return []
    const known = this.tools.get(tools)
    if (known !== undefined) return known
    const converted = list.map(convert)
    this.tools.set(tools, converted)
    return converted
  }

  /** A source message's conversion, computed once per message object. */
  private cached(message: unknown, convert: () => unknown[]): unknown[] {
    if (typeof message !== 'object' || message === null) return convert()
    const known = this.items.get(message)
    if (known !== undefined) return known
    const converted = convert()
    this.items.set(message, converted)
    return converted
  }
}
