// The reference loop: a minimal agent loop on the official SDKs, caching as each provider's documentation
// recommends for a multi-turn conversation. Anthropic: top-level `cache_control` (automatic caching, the
// breakpoint moves with the conversation). OpenAI: a per-session `prompt_cache_key`, the history resent
// whole (Chat Completions; Responses with `store: false`). DeepSeek: nothing to ask, its cache is
// automatic. The other library loops are compared with this one request by request.

import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type { ProviderId, ToolSchema } from '../../types.ts'
import type {
  LibraryLoop,
  LibrarySession,
  LibrarySessionOptions,
  LibraryToolCall,
  LibraryToolResult,
  LibraryTransport,
  LibraryTurn,
  ReportedUsage,
} from './types.ts'

/** The output cap a loop sends when the scenario sets none (Anthropic requires one). */
export const DEFAULT_MAX_TOKENS = 4096

/** A tool call's arguments, parsed (an unparsable string is an empty object, as the model sent nothing usable). */
export function parsedArguments(text: string): LibraryToolCall['arguments'] {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as LibraryToolCall['arguments'])
      : {}
  } catch {
    return {}
  }
}

/** A turn's requests in a loop of its own: one `step` per request until it returns no tool calls. */
export async function runTurn(
  step: () => Promise<{ calls: LibraryToolCall[]; reported: ReportedUsage | undefined }>,
  execute: (call: LibraryToolCall) => LibraryToolResult,
  afterCalls: (results: Array<{ call: LibraryToolCall; result: LibraryToolResult }>) => void,
  /** Put the history back as it was before the turn (a failed turn). */
  restore: () => void,
): Promise<LibraryTurn> {
  const reported: Array<ReportedUsage | undefined> = []
  try {
    for (;;) {
      const answer = await step()
      reported.push(answer.reported)
      if (answer.calls.length === 0) return { reported }
      afterCalls(answer.calls.map((call) => ({ call, result: execute(call) })))
    }
  } catch (error) {
    restore()
    return { reported, error: error instanceof Error ? error.message : String(error) }
  }
}

/** The official SDKs' loop. */
export function sdkLoop(): LibraryLoop {
  return {
    name: 'sdk',
    providers: ['anthropic', 'openai-chat', 'openai-responses', 'deepseek'],
    caching(provider: ProviderId): string {
      switch (provider) {
        case 'anthropic':
          return 'top-level cache_control (automatic caching)'
        case 'openai-chat':
        case 'openai-responses':
          return 'prompt_cache_key per session'
        default:
          return 'automatic (nothing to ask)'
      }
    },
    async open(options: LibrarySessionOptions): Promise<LibrarySession> {
      switch (options.provider) {
        case 'anthropic':
          return anthropicSession(options)
        case 'openai-chat':
        case 'deepseek':
          return chatSession(options)
        case 'openai-responses':
          return responsesSession(options)
        default:
          throw new Error(`the sdk loop does not speak to ${options.provider}`)
      }
    },
  }
}

/** The system prompt and tools a session sends: what `setSystem` and `setTools` change from the next request on. */
function requestHead(options: LibrarySessionOptions): {
  readonly system: string
  readonly tools: readonly ToolSchema[]
  setSystem(text: string): void
  setTools(tools: readonly ToolSchema[]): void
} {
  let system = options.system
  let tools = options.tools
  return {
    get system() {
      return system
    },
    get tools() {
      return tools
    },
    setSystem: (text) => {
      system = text
    },
    setTools: (next) => {
      tools = next
    },
  }
}

/** The openai SDK pointed at the transport, without retries (a fault shows as it is). */
function openAiClient(transport: LibraryTransport): OpenAI {
  return new OpenAI({
    apiKey: transport.apiKey,
    baseURL: transport.baseURL,
    fetch: transport.fetch,
    maxRetries: 0,
  })
}

function anthropicSession(options: LibrarySessionOptions): LibrarySession {
  const { transport } = options
  const client = new Anthropic({
    apiKey: transport.apiKey,
    baseURL: transport.baseURL,
    fetch: transport.fetch,
    maxRetries: 0,
  })
  const head = requestHead(options)
  const messages: Anthropic.MessageParam[] = []
  return {
    setSystem: head.setSystem,
    setTools: head.setTools,
    turn(user, execute) {
      const mark = messages.length
      messages.push({ role: 'user', content: user })
      return runTurn(
        async () => {
          const message = await client.messages.create({
            model: options.model,
            max_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
            system: head.system,
            messages,
            ...(head.tools.length > 0 ? { tools: head.tools.map(anthropicTool) } : {}),
            cache_control: { type: 'ephemeral' },
          })
          messages.push({ role: 'assistant', content: message.content })
          const calls = message.content.flatMap((block) =>
            block.type === 'tool_use'
              ? [{ id: block.id, name: block.name, arguments: block.input as LibraryToolCall['arguments'] }]
              : [],
          )
          const usage = message.usage
          const read = usage.cache_read_input_tokens ?? 0
          const write = usage.cache_creation_input_tokens ?? 0
          return {
            calls,
            reported: {
              input: usage.input_tokens + read + write,
              cacheRead: read,
              cacheWrite: write,
              raw: usage,
            },
          }
        },
        execute,
        (results) =>
          messages.push({
            role: 'user',
            content: results.map(({ call, result }) => ({
              type: 'tool_result',
              tool_use_id: call.id,
              content: result.output,
              ...(result.isError ? { is_error: true } : {}),
            })),
          }),
        () => messages.splice(mark),
      )
    },
  }
}

function anthropicTool(tool: ToolSchema): Anthropic.Tool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: tool.parameters as Anthropic.Tool.InputSchema,
  }
}

/** OpenAI's and DeepSeek's Chat Completions through the openai SDK. */
function chatSession(options: LibrarySessionOptions): LibrarySession {
  const { transport } = options
  const client = openAiClient(transport)
  const openai = options.provider === 'openai-chat'
  const head = requestHead(options)
  const messages: OpenAI.ChatCompletionMessageParam[] = []
  return {
    setSystem: head.setSystem,
    setTools: head.setTools,
    turn(user, execute) {
      const mark = messages.length
      messages.push({ role: 'user', content: user })
      return runTurn(
        async () => {
          const completion = await client.chat.completions.create({
            model: options.model,
            messages: [{ role: 'system', content: head.system }, ...messages],
            ...(head.tools.length > 0 ? { tools: head.tools.map(chatTool) } : {}),
            ...(openai
              ? {
                  max_completion_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
                  prompt_cache_key: options.sessionKey,
                }
              : { max_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS }),
          })
          const message = completion.choices[0]?.message
          if (message === undefined) throw new Error('the completion has no choice')
          const toolCalls = (message.tool_calls ?? []).flatMap((call) =>
            call.type === 'function' ? [call] : [],
          )
          // DeepSeek's thinking mode needs the reasoning back with the tool calls it led to (its docs).
          const reasoning = (message as { reasoning_content?: unknown }).reasoning_content
          messages.push({
            role: 'assistant',
            content: message.content ?? '',
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            ...(!openai && typeof reasoning === 'string' ? { reasoning_content: reasoning } : {}),
          } as OpenAI.ChatCompletionAssistantMessageParam)
          const calls = toolCalls.map((call) => ({
            id: call.id,
            name: call.function.name,
            arguments: parsedArguments(call.function.arguments),
          }))
          const usage = completion.usage
          return { calls, reported: usage === undefined ? undefined : chatReported(usage) }
        },
        execute,
        (results) => {
          for (const { call, result } of results)
            messages.push({ role: 'tool', tool_call_id: call.id, content: result.output })
        },
        () => messages.splice(mark),
      )
    },
  }
}

/**
 * Chat Completions usage: `prompt_tokens` every input token, cached ones in the details (DeepSeek: its hit
 * count), and the written ones where the model reports writes (GPT-5.6+; the SDK's types predate them).
 */
function chatReported(usage: OpenAI.CompletionUsage): ReportedUsage {
  const raw = usage as OpenAI.CompletionUsage & { prompt_cache_hit_tokens?: number }
  const cacheRead = raw.prompt_cache_hit_tokens ?? usage.prompt_tokens_details?.cached_tokens
  const cacheWrite = writtenTokens(usage.prompt_tokens_details)
  return {
    input: usage.prompt_tokens,
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    raw: usage,
  }
}

/** `{ cacheWrite }` when the API reported writes, else nothing. */
function writeField(cacheWrite: number | undefined): { cacheWrite?: number } {
  return cacheWrite === undefined ? {} : { cacheWrite }
}

/** `cache_write_tokens` of a usage details object, when the API sent it. */
function writtenTokens(details: object | null | undefined): number | undefined {
  const value = (details as { cache_write_tokens?: unknown } | null | undefined)?.cache_write_tokens
  return typeof value === 'number' ? value : undefined
}

function chatTool(tool: ToolSchema): OpenAI.ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }
}

function responsesSession(options: LibrarySessionOptions): LibrarySession {
  const { transport } = options
  const client = openAiClient(transport)
  const head = requestHead(options)
  const input: OpenAI.Responses.ResponseInputItem[] = []
  return {
    setSystem: head.setSystem,
    setTools: head.setTools,
    turn(user, execute) {
      const mark = input.length
      input.push({ role: 'user', content: user })
      return runTurn(
        async () => {
          const response = await client.responses.create({
            model: options.model,
            instructions: head.system,
            input,
            ...(head.tools.length > 0
              ? {
                  tools: head.tools.map((tool) => ({
                    type: 'function' as const,
                    name: tool.name,
                    description: tool.description,
                    parameters: tool.parameters,
                    strict: false,
                  })),
                }
              : {}),
            max_output_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
            prompt_cache_key: options.sessionKey,
            store: false,
          })
          const calls: LibraryToolCall[] = []
          for (const item of response.output) {
            if (item.type === 'message')
              input.push({
                role: 'assistant',
                content: item.content
                  .flatMap((part) => (part.type === 'output_text' ? [part.text] : []))
                  .join(''),
              })
            if (item.type === 'function_call') {
              input.push({
                type: 'function_call',
                call_id: item.call_id,
                name: item.name,
                arguments: item.arguments,
              })
              calls.push({ id: item.call_id, name: item.name, arguments: parsedArguments(item.arguments) })
            }
          }
          const usage = response.usage
          return {
            calls,
            reported:
              usage === undefined || usage === null
                ? undefined
                : {
                    input: usage.input_tokens,
                    cacheRead: usage.input_tokens_details.cached_tokens,
                    ...writeField(writtenTokens(usage.input_tokens_details)),
                    raw: usage,
                  },
          }
        },
        execute,
        (results) => {
          for (const { call, result } of results)
            input.push({ type: 'function_call_output', call_id: call.id, output: result.output })
        },
        () => input.splice(mark),
      )
    },
  }
}
