import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { deepSeekAdapter, parseDeepSeekUsage } from '../deepseek.ts'
import { DEFAULT_BASE_URLS, lateBoundFetch, SIMULATED_KEY, simulatedEndpoint } from '../endpoints.ts'
import type { BuiltRequest } from '../types.ts'
import { encodeScript, SCRIPT_HEADER, TIME_HEADER } from './script.ts'
import { type MockProviders, startMockProviders } from './server.ts'

let mock: MockProviders
const client = new OpenAI({
  apiKey: SIMULATED_KEY,
  baseURL: DEFAULT_BASE_URLS.deepseek,
  maxRetries: 0,
  fetch: lateBoundFetch,
})
const adapter = deepSeekAdapter(simulatedEndpoint('deepseek'))

beforeAll(() => {
  mock = startMockProviders()
})
afterAll(() => mock.close())
beforeEach(() => mock.context.reset())

/** DeepSeek's usage: the OpenAI fields plus its hit and miss counts. */
type DeepSeekUsage = OpenAI.CompletionUsage & {
  prompt_cache_hit_tokens?: number
  prompt_cache_miss_tokens?: number
}

const system = fillerText(2000, 'deepseek-system')
const script: AssistantMessage = {
  role: 'assistant',
  content: [
    { type: 'text', text: 'Searching the sources for the parser entry point.' },
    { type: 'tool-call', callId: 'call_0', name: 'grep', arguments: '{"pattern":"export function parse"}' },
  ],
}

/** An append-only conversation: each request is the previous one plus one exchange. */
function conversation(turns: number): OpenAI.Chat.ChatCompletionMessageParam[] {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'system', content: system }]
  for (let turn = 0; turn < turns; turn += 1) {
    if (turn > 0) messages.push({ role: 'assistant', content: 'OK.' })
    messages.push({ role: 'user', content: `Question ${turn + 1}. ${fillerText(150, turn)}` })
  }
  return messages
}

const params = (messages: OpenAI.Chat.ChatCompletionMessageParam[]) => ({ model: 'deepseek-flash', messages })

describe('mock DeepSeek Chat Completions over the openai SDK', () => {
  it('reads more cached tokens as an append-only conversation grows, hits and misses summing to the prompt', async () => {
    const hits: number[] = []
    for (let turns = 1; turns <= 4; turns += 1) {
      const completion = await client.chat.completions.create(params(conversation(turns)), {
        headers: { [TIME_HEADER]: String(turns * 10) },
      })
      const usage = completion.usage as DeepSeekUsage
      hits.push(usage.prompt_cache_hit_tokens ?? -1)
      expect((usage.prompt_cache_hit_tokens ?? 0) + (usage.prompt_cache_miss_tokens ?? 0)).toBe(
        usage.prompt_tokens,
      )
      expect(usage.prompt_tokens_details?.cached_tokens).toBe(usage.prompt_cache_hit_tokens)
    }
    expect(hits[0]).toBe(0)
    for (let index = 1; index < hits.length; index += 1) {
      expect(hits[index]).toBeGreaterThan(hits[index - 1] ?? 0)
    }
  })

  it('gives the same normalized usage streamed and not streamed, and through the stream helper', async () => {
    const body = params(conversation(3))
    const usages: unknown[] = []
    for (const mode of ['plain', 'stream', 'helper'] as const) {
      mock.context.reset()
      await client.chat.completions.create(params(conversation(2)))
      const headers = { [TIME_HEADER]: '5' }
      if (mode === 'plain') {
        usages.push((await client.chat.completions.create(body, { headers })).usage)
      } else if (mode === 'stream') {
        const stream = await client.chat.completions.create(
          { ...body, stream: true, stream_options: { include_usage: true } },
          { headers },
        )
        let usage: unknown
        for await (const chunk of stream) if (chunk.usage) usage = chunk.usage
        usages.push(usage)
      } else {
        const helper = client.chat.completions.stream(
          { ...body, stream_options: { include_usage: true } },
          { headers },
        )
        usages.push((await helper.finalChatCompletion()).usage)
      }
    }
    const [plain, ...others] = usages.map((usage) => parseDeepSeekUsage(usage))
    expect(plain?.cacheRead).toBeGreaterThan(2000)
    for (const other of others) expect(other).toEqual(plain)
  })

  it('answers with the scripted message, tool calls included, through the adapter streamed or not', async () => {
    const headers = { [SCRIPT_HEADER]: encodeScript(script) }
    const plain = await client.chat.completions.create(params(conversation(1)), { headers })
    expect(plain.choices[0]?.message.content).toBe('Searching the sources for the parser entry point.')
    expect(plain.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      id: 'call_0',
      function: { name: 'grep', arguments: '{"pattern":"export function parse"}' },
    })
    const built: BuiltRequest = {
      provider: 'deepseek',
      api: 'deepseek-chat',
      body: params(conversation(1)),
      sources: { system: [], tools: [], messages: [] },
    }
    for (const stream of [false, true]) {
      const reply = await adapter.send(built, { stream, headers })
      expect(reply.message).toEqual(script)
      expect(reply.stopReason).toBe('tool-calls')
      expect(reply.usage.cacheWrite).toBeUndefined()
      expect(reply.usage.uncached + (reply.usage.cacheRead ?? 0)).toBe(reply.usage.input)
    }
  })

  it('surfaces a 429 with its retry-after-ms header', async () => {
    mock.context.faults.push({ kind: 'rate-limit', retryAfterMs: 1200 })
    const failure = await client.chat.completions.create(params(conversation(1))).catch((error) => error)
    expect(failure).toBeInstanceOf(OpenAI.APIError)
    expect(failure.status).toBe(429)
    expect(failure.headers.get('retry-after-ms')).toBe('1200')

    mock.context.faults.push({ kind: 'rate-limit', retryAfterMs: 800 })
    const built: BuiltRequest = {
      provider: 'deepseek',
      api: 'deepseek-chat',
      body: params(conversation(1)),
      sources: { system: [], tools: [], messages: [] },
    }
    await expect(adapter.send(built, { stream: true, headers: {} })).rejects.toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 800,
    })
  })
})
