// The LangChain JS loop: a minimal agent loop on `@langchain/anthropic`'s ChatAnthropic and
// `@langchain/openai`'s ChatOpenAI, caching as LangChain documents it. Anthropic: `cache_control` on content
// blocks — the system message's text block and, each turn, the newest user message's text block, the marks
// staying in the history the application keeps (LangChain passes every mark through, so the fifth one meets
// the API's limit of four). OpenAI (Chat Completions and, with `useResponsesApi`, Responses): the
// `promptCacheKey` field per session. DeepSeek: ChatOpenAI pointed at DeepSeek's OpenAI-compatible API,
// nothing to ask (its cache is automatic); `@langchain/deepseek` is not used because its releases need
// Node 22. The loop is the one LangChain's tool-calling guide shows: `bindTools`, `invoke`, run the
// message's `tool_calls`, append a `ToolMessage` each, invoke again until the model calls no tool.

import { ChatAnthropic } from '@langchain/anthropic'
import type { BaseChatModel } from '@langchain/core/language_models/chat_models'
import {
  type AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type UsageMetadata,
} from '@langchain/core/messages'
import type { Runnable } from '@langchain/core/runnables'
import { ChatOpenAI } from '@langchain/openai'
import type { ProviderId, ToolSchema } from '../../types.ts'
import { DEFAULT_MAX_TOKENS, runTurn } from './sdk.ts'
import type {
  LibraryLoop,
  LibrarySession,
  LibrarySessionOptions,
  LibraryToolCall,
  ReportedUsage,
} from './types.ts'

/** The cache mark LangChain's Anthropic docs put on a content block. */
const EPHEMERAL = { type: 'ephemeral' } as const

/** The LangChain loop. */
export function langchainLoop(): LibraryLoop {
  return {
    name: 'langchain',
    providers: ['anthropic', 'openai-chat', 'openai-responses', 'deepseek'],
    caching(provider: ProviderId): string {
      switch (provider) {
        case 'anthropic':
          return 'cache_control content blocks on the system message and on each turn’s user message, kept in the history'
        case 'openai-chat':
        case 'openai-responses':
          return 'promptCacheKey per session'
        default:
          return 'automatic (nothing to ask)'
      }
    },
    async open(options: LibrarySessionOptions): Promise<LibrarySession> {
      return langchainSession(options, chatModel(options))
    },
  }
}

/** The chat model for the provider, configured with serve's base URL and the transport's fetch. */
function chatModel(options: LibrarySessionOptions): BaseChatModel {
  const { transport } = options
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS
  switch (options.provider) {
    case 'anthropic':
      return new ChatAnthropic({
        model: options.model,
        apiKey: transport.apiKey,
        anthropicApiUrl: transport.baseURL,
        clientOptions: { fetch: transport.fetch },
        maxTokens,
        maxRetries: 0,
      })
    case 'openai-chat':
    case 'openai-responses':
      return new ChatOpenAI({
        model: options.model,
        apiKey: transport.apiKey,
        configuration: { baseURL: transport.baseURL, fetch: transport.fetch },
        maxTokens,
        maxRetries: 0,
        promptCacheKey: options.sessionKey,
        useResponsesApi: options.provider === 'openai-responses',
      })
    case 'deepseek':
      // DeepSeek's API is OpenAI-compatible (its docs); ChatOpenAI is what a user without Node 22 reaches for.
      return new ChatOpenAI({
        model: options.model,
        apiKey: transport.apiKey,
        configuration: { baseURL: transport.baseURL, fetch: transport.fetch },
        maxTokens,
        maxRetries: 0,
      })
    default:
      throw new Error(`the langchain loop does not speak to ${options.provider}`)
  }
}

/** One conversation as an application on LangChain keeps it: an array of messages it appends to. */
function langchainSession(options: LibrarySessionOptions, model: BaseChatModel): LibrarySession {
  // Anthropic caching is asked for on the content blocks themselves (LangChain's Anthropic docs).
  const marks = options.provider === 'anthropic'
  let system = systemMessage(options.system, marks)
  let bound = withTools(model, options.tools)
  const messages: BaseMessage[] = []
  return {
    setSystem: (text) => {
      system = systemMessage(text, marks)
    },
    setTools: (tools) => {
      bound = withTools(model, tools)
    },
    turn(user, execute) {
      const mark = messages.length
      messages.push(
        marks
          ? new HumanMessage({ content: [{ type: 'text', text: user, cache_control: EPHEMERAL }] })
          : new HumanMessage(user),
      )
      return runTurn(
        async () => {
          const reply = await bound.invoke([system, ...messages])
          messages.push(reply)
          const calls = (reply.tool_calls ?? []).map((call, index) => ({
            // LangChain always reads the id off the wire; an id-less call would be the library's bug.
            id: call.id ?? `missing_${index}`,
            name: call.name,
            arguments: call.args as LibraryToolCall['arguments'],
          }))
          return { calls, reported: reportedUsage(reply.usage_metadata) }
        },
        execute,
        (results) => {
          for (const { call, result } of results)
            messages.push(
              new ToolMessage({
                content: result.output,
                tool_call_id: call.id,
                // LangChain's field for a failed tool; whether it reaches the wire is the provider package's.
                ...(result.isError ? { status: 'error' as const } : {}),
              }),
            )
        },
        () => messages.splice(mark),
      )
    },
  }
}

function systemMessage(text: string, marked: boolean): SystemMessage {
  return marked
    ? new SystemMessage({ content: [{ type: 'text', text, cache_control: EPHEMERAL }] })
    : new SystemMessage(text)
}

/** The model with the scenario's tools bound in OpenAI's function format (LangChain converts per provider). */
function withTools(model: BaseChatModel, tools: readonly ToolSchema[]): Runnable<BaseMessage[], AIMessage> {
  if (tools.length === 0) return model as Runnable<BaseMessage[], AIMessage>
  if (model.bindTools === undefined) throw new Error('the chat model cannot bind tools')
  return model.bindTools(
    tools.map((tool) => ({
      type: 'function' as const,
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    })),
  ) as Runnable<BaseMessage[], AIMessage>
}

/**
 * `usage_metadata` by LangChain's documented meanings: `input_tokens` the sum of all input token types,
 * `input_token_details.cache_read` the cache hits, `cache_creation` the tokens written on a miss. Taken as
 * the library reports them, never corrected.
 */
function reportedUsage(usage: UsageMetadata | undefined): ReportedUsage | undefined {
  if (usage === undefined) return undefined
  const details = usage.input_token_details
  return {
    input: usage.input_tokens,
    ...(details?.cache_read !== undefined ? { cacheRead: details.cache_read } : {}),
    ...(details?.cache_creation !== undefined ? { cacheWrite: details.cache_creation } : {}),
    raw: usage,
  }
}
