// Third-party clients against `cachelab serve`, configured as docs/serve.md's "Point your client at
// cachelab serve" table says and sending no cachelab header: each holds a three-turn conversation above
// the model's cache minimum, streamed and not, and must see its cached tokens grow through its own usage
// API. A client that needs a different base URL or path than docs/serve.md gives fails here.

import { createAnthropic } from '@ai-sdk/anthropic'
import { createDeepSeek } from '@ai-sdk/deepseek'
import { createOpenAI } from '@ai-sdk/openai'
import Anthropic from '@anthropic-ai/sdk'
import { ChatAnthropic } from '@langchain/anthropic'
import type { BaseChatModel } from '@langchain/core/language_models/chat_models'
import {
  type AIMessageChunk,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  type UsageMetadata,
} from '@langchain/core/messages'
import { ChatOpenAI } from '@langchain/openai'
import { type Api, type Context, complete, getModel, type Model } from '@mariozechner/pi-ai'
import { generateText, type LanguageModel, type ModelMessage, streamText } from 'ai'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { type LoopbackServer, type ServeLogRecord, startLoopback } from './loopback.ts'

/**
 * One client configured for the server. `open` starts a conversation held in the client's own message
 * format and returns `ask`: send the next user turn, keep the reply in the history, and return the
 * cached input tokens the client reports for the request.
 */
interface ClientCase {
  name: string
  /** The path its requests must arrive at. */
  path: string
  /** Whether the client can send unstreamed requests (pi-ai always streams). */
  unstreamed: boolean
  open(system: string, stream: boolean): (user: string) => Promise<number | undefined>
}

const KEY = 'cachelab-client-test-key'
let server: LoopbackServer
const log: ServeLogRecord[] = []
const savedEnv = {
  OPENAI_BASE_URL: process.env.OPENAI_BASE_URL,
  ANTHROPIC_BASE_URL: process.env.ANTHROPIC_BASE_URL,
}

beforeAll(async () => {
  server = await startLoopback({ upstream: 'sim', port: 0, log: (record) => log.push(record) })
  // The clients that read a base URL from the environment take it from here, as a user's would.
  process.env.OPENAI_BASE_URL = server.baseURLs.openai
  process.env.ANTHROPIC_BASE_URL = server.baseURLs.anthropic
})
afterAll(async () => {
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
  await server.close()
})

/** The AI SDK: `generateText` or `streamText`, cached tokens from `usage.inputTokenDetails`. */
function aiSdk(
  model: LanguageModel,
  providerOptions: Parameters<typeof generateText>[0]['providerOptions'] = {},
) {
  return (system: string, stream: boolean) => {
    const messages: ModelMessage[] = []
    return async (user: string) => {
      messages.push({ role: 'user', content: user })
      const call = { model, system, messages, providerOptions, maxRetries: 0 }
      const result = stream ? streamText(call) : await generateText(call)
      messages.push({ role: 'assistant', content: await result.text })
      return (await result.usage).inputTokenDetails.cacheReadTokens
    }
  }
}

/** LangChain: `invoke` or `stream` (chunks concatenated), cached tokens from `usage_metadata`. */
function langChain(model: BaseChatModel) {
  return (system: string, stream: boolean) => {
    const messages: BaseMessage[] = [new SystemMessage(system)]
    return async (user: string) => {
      messages.push(new HumanMessage(user))
      let reply: AIMessageChunk | undefined
      if (stream) {
        for await (const chunk of await model.stream(messages))
          reply = reply === undefined ? chunk : reply.concat(chunk)
      } else {
        reply = await model.invoke(messages)
      }
      if (reply === undefined) throw new Error('LangChain returned no message')
      messages.push(reply)
      // LangChain's generic message types resolve `usage_metadata` to never here; read it as the runtime has it.
      const usage = (reply as unknown as { usage_metadata?: UsageMetadata }).usage_metadata
      return usage?.input_token_details?.cache_read
    }
  }
}

/** pi-ai: `complete` (it always streams), cached tokens from `usage.cacheRead`. */
function piAi(model: Model<Api>) {
  return (systemPrompt: string) => {
    const context: Context = { systemPrompt, messages: [] }
    return async (user: string) => {
      context.messages.push({ role: 'user', content: user, timestamp: 0 })
      const reply = await complete(model, context, { apiKey: KEY })
      if (reply.stopReason === 'error') throw new Error(`pi-ai: ${reply.errorMessage}`)
      context.messages.push(reply)
      return reply.usage.cacheRead
    }
  }
}

/** The official openai SDK's Chat Completions, against OpenAI or an OpenAI-compatible vendor. */
function openAIChat(client: () => OpenAI, model: string) {
  return (system: string, stream: boolean) => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'system', content: system }]
    return async (user: string) => {
      messages.push({ role: 'user', content: user })
      if (!stream) {
        const reply = await client().chat.completions.create({ model, messages })
        messages.push({ role: 'assistant', content: reply.choices[0]?.message.content ?? '' })
        return reply.usage?.prompt_tokens_details?.cached_tokens
      }
      const chunks = await client().chat.completions.create({
        model,
        messages,
        stream: true,
        stream_options: { include_usage: true },
      })
      let text = ''
      let cached: number | undefined
      for await (const chunk of chunks) {
        text += chunk.choices[0]?.delta.content ?? ''
        cached = chunk.usage?.prompt_tokens_details?.cached_tokens ?? cached
      }
      messages.push({ role: 'assistant', content: text })
      return cached
    }
  }
}

/** The official Anthropic SDK, with automatic caching (a top-level `cache_control`). */
function anthropicMessages(system: string, stream: boolean) {
  const client = new Anthropic({ apiKey: KEY, maxRetries: 0 })
  const messages: Anthropic.MessageParam[] = []
  return async (user: string) => {
    messages.push({ role: 'user', content: user })
    const request = {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      system,
      messages,
      cache_control: { type: 'ephemeral' as const },
    }
    const message = stream
      ? await client.messages.stream(request).finalMessage()
      : await client.messages.create(request)
    messages.push({ role: 'assistant', content: message.content })
    return message.usage.cache_read_input_tokens ?? undefined
  }
}

/** The AI SDK's automatic caching on Anthropic: a top-level `cache_control`. */
const anthropicAutomaticCaching = { anthropic: { cacheControl: { type: 'ephemeral' } } }

const CLIENTS: ClientCase[] = [
  {
    name: 'the official openai SDK (OPENAI_BASE_URL)',
    path: '/openai/v1/chat/completions',
    unstreamed: true,
    open: openAIChat(() => new OpenAI({ apiKey: KEY, maxRetries: 0 }), 'gpt-5.4'),
  },
  {
    name: 'the official Anthropic SDK (ANTHROPIC_BASE_URL)',
    path: '/anthropic/v1/messages',
    unstreamed: true,
    open: anthropicMessages,
  },
  {
    name: 'the official openai SDK on DeepSeek (baseURL …/deepseek/v1)',
    path: '/deepseek/v1/chat/completions',
    unstreamed: true,
    open: openAIChat(
      () => new OpenAI({ apiKey: KEY, baseURL: `${server.baseURLs.deepseek}/v1`, maxRetries: 0 }),
      'deepseek-flash',
    ),
  },
  {
    name: 'the AI SDK openai provider, Responses (OPENAI_BASE_URL)',
    path: '/openai/v1/responses',
    unstreamed: true,
    open: (system, stream) => aiSdk(createOpenAI({ apiKey: KEY })('gpt-5.4'))(system, stream),
  },
  {
    name: 'the AI SDK openai provider, Chat Completions (OPENAI_BASE_URL)',
    path: '/openai/v1/chat/completions',
    unstreamed: true,
    open: (system, stream) => aiSdk(createOpenAI({ apiKey: KEY }).chat('gpt-5.4'))(system, stream),
  },
  {
    name: 'the AI SDK anthropic provider (ANTHROPIC_BASE_URL)',
    path: '/anthropic/messages',
    unstreamed: true,
    open: (system, stream) =>
      aiSdk(createAnthropic({ apiKey: KEY })('claude-sonnet-4-6'), anthropicAutomaticCaching)(system, stream),
  },
  {
    name: 'the AI SDK anthropic provider (baseURL …/anthropic/v1)',
    path: '/anthropic/v1/messages',
    unstreamed: true,
    open: (system, stream) =>
      aiSdk(
        createAnthropic({ apiKey: KEY, baseURL: `${server.baseURLs.anthropic}/v1` })('claude-sonnet-4-6'),
        anthropicAutomaticCaching,
      )(system, stream),
  },
  {
    name: 'the AI SDK deepseek provider (baseURL …/deepseek)',
    path: '/deepseek/chat/completions',
    unstreamed: true,
    open: (system, stream) =>
      aiSdk(createDeepSeek({ apiKey: KEY, baseURL: server.baseURLs.deepseek })('deepseek-flash'))(
        system,
        stream,
      ),
  },
  {
    name: 'LangChain ChatOpenAI (OPENAI_BASE_URL)',
    path: '/openai/v1/chat/completions',
    unstreamed: true,
    open: (system, stream) =>
      langChain(new ChatOpenAI({ model: 'gpt-5.4', apiKey: KEY, maxRetries: 0 }))(system, stream),
  },
  {
    name: 'LangChain ChatAnthropic (ANTHROPIC_BASE_URL)',
    path: '/anthropic/v1/messages',
    unstreamed: true,
    open: (system, stream) =>
      langChain(
        new ChatAnthropic({
          model: 'claude-sonnet-4-6',
          apiKey: KEY,
          maxRetries: 0,
          invocationKwargs: { cache_control: { type: 'ephemeral' } },
        }),
      )(system, stream),
  },
  {
    name: 'LangChain ChatOpenAI on DeepSeek (configuration.baseURL …/deepseek)',
    path: '/deepseek/chat/completions',
    unstreamed: true,
    open: (system, stream) =>
      langChain(
        new ChatOpenAI({
          model: 'deepseek-flash',
          apiKey: KEY,
          maxRetries: 0,
          configuration: { baseURL: server.baseURLs.deepseek },
        }),
      )(system, stream),
  },
  {
    name: 'pi-ai anthropic (model baseUrl …/anthropic)',
    path: '/anthropic/v1/messages',
    unstreamed: false,
    open: (system) =>
      piAi({ ...getModel('anthropic', 'claude-sonnet-4-6'), baseUrl: server.baseURLs.anthropic })(system),
  },
  {
    name: 'pi-ai openai (model baseUrl …/openai/v1)',
    path: '/openai/v1/responses',
    unstreamed: false,
    open: (system) => piAi({ ...getModel('openai', 'gpt-5.4'), baseUrl: server.baseURLs.openai })(system),
  },
  {
    name: 'pi-ai deepseek (model baseUrl …/deepseek)',
    path: '/deepseek/chat/completions',
    unstreamed: false,
    open: (system) =>
      piAi({
        ...getModel('deepseek', 'deepseek-v4-flash'),
        id: 'deepseek-flash',
        baseUrl: server.baseURLs.deepseek,
        // pi-ai tells DeepSeek by its host; under another base URL it would send `developer` messages,
        // which DeepSeek (and so the mock) refuses.
        compat: { ...getModel('deepseek', 'deepseek-v4-flash').compat, supportsDeveloperRole: false },
      })(system),
  },
]

describe('third-party clients against cachelab serve, with no cachelab header', () => {
  for (const client of CLIENTS) {
    for (const stream of client.unstreamed ? [false, true] : [true]) {
      it(`${client.name}, ${stream ? 'streamed' : 'not streamed'}: cached tokens grow over three turns`, async () => {
        // A system prompt of its own, above every model's cache minimum, so no case reads another's cache.
        const ask = client.open(fillerText(1500, `${client.name}/${stream}`), stream)
        const before = log.length
        const reads: Array<number | undefined> = []
        for (const question of ['first', 'second', 'third'])
          reads.push(await ask(`${question} question: ${fillerText(200, question)}`))
        expect(reads[0]).toBe(0)
        expect(reads[1]).toBeGreaterThanOrEqual(1024)
        expect(reads[2]).toBeGreaterThan(reads[1] as number)
        expect(log.slice(before).map(({ path, status }) => `${status} ${path}`)).toEqual(
          Array(3).fill(`200 ${client.path}`),
        )
      })
    }
  }
})
