import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { lateBoundFetch, SIMULATED_KEY, simulatedEndpoint } from '../endpoints.ts'
import { parseOpenAIUsage } from '../openai-chat.ts'
import { openAIResponsesAdapter } from '../openai-responses.ts'
import { ProviderError } from '../types.ts'
import { encodeScript, SCRIPT_HEADER, TIME_HEADER } from './script.ts'
import { type MockProviders, startMockProviders } from './server.ts'

let mock: MockProviders
const client = new OpenAI({ apiKey: SIMULATED_KEY, maxRetries: 0, fetch: lateBoundFetch })
const adapter = openAIResponsesAdapter(simulatedEndpoint('openai-responses'))

beforeAll(() => {
  mock = startMockProviders()
})
afterAll(() => mock.close())
beforeEach(() => mock.context.reset())

const instructions = fillerText(3000, 'responses-instructions')
const script: AssistantMessage = {
  role: 'assistant',
  content: [
    { type: 'text', text: 'Looking at the parser and the formatter now.' },
    { type: 'tool-call', callId: 'call_1', name: 'grep', arguments: '{"pattern":"parse","path":"src"}' },
    { type: 'tool-call', callId: 'call_2', name: 'read_file', arguments: '{"path":"src/parser.ts"}' },
  ],
}

/** An append-only conversation: each request is the previous one plus one exchange. */
function conversation(turns: number): OpenAI.Responses.ResponseInputItem[] {
  const input: OpenAI.Responses.ResponseInputItem[] = []
  for (let turn = 0; turn < turns; turn += 1) {
    if (turn > 0) input.push({ role: 'assistant', content: `Answer ${turn}. ${fillerText(200, turn)}` })
    input.push({ role: 'user', content: `Question ${turn + 1}.` })
  }
  return input
}

const params = (model: string, input: OpenAI.Responses.ResponseInputItem[]) => ({
  model,
  instructions,
  input,
  store: false,
  prompt_cache_key: 'conversation-1',
})

describe('mock Responses over the openai SDK', () => {
  it('reads more cached tokens as an append-only conversation grows', async () => {
    const cached: number[] = []
    for (let turns = 1; turns <= 4; turns += 1) {
      const response = await client.responses.create(params('gpt-5.4', conversation(turns)), {
        headers: { [TIME_HEADER]: String(turns * 10) },
      })
      cached.push(response.usage?.input_tokens_details.cached_tokens ?? -1)
      expect(response.usage?.input_tokens_details).not.toHaveProperty('cache_write_tokens')
      expect(response.prompt_cache_key).toBe('conversation-1')
    }
    expect(cached[0]).toBe(0)
    for (let index = 1; index < cached.length; index += 1) {
      expect(cached[index]).toBeGreaterThan(cached[index - 1] ?? 0)
      expect((cached[index] ?? 0) % 128).toBe(0)
    }
  })

  it('reports cache writes on GPT-5.6 and reads the previous breakpoint exactly', async () => {
    const first = await client.responses.create(params('gpt-5.6-sol', conversation(1)))
    const second = await client.responses.create(params('gpt-5.6-sol', conversation(2)), {
      headers: { [TIME_HEADER]: '5' },
    })
    const written = first.usage?.input_tokens_details.cache_write_tokens ?? 0
    expect(first.usage?.input_tokens_details.cached_tokens).toBe(0)
    expect(written).toBeGreaterThan(3000)
    expect(second.usage?.input_tokens_details.cached_tokens).toBe(written)
    expect(second.usage?.input_tokens_details.cache_write_tokens).toBeGreaterThan(200)
  })

  it('gives the same normalized usage streamed and not streamed, and through the stream helper', async () => {
    const body = params('gpt-5.4', conversation(3))
    const usages = []
    for (const mode of ['plain', 'stream', 'helper'] as const) {
      mock.context.reset()
      await client.responses.create(params('gpt-5.4', conversation(2)))
      const headers = { [TIME_HEADER]: '5' }
      if (mode === 'plain') {
        usages.push((await client.responses.create(body, { headers })).usage)
      } else if (mode === 'stream') {
        const stream = await client.responses.create({ ...body, stream: true }, { headers })
        let usage: OpenAI.Responses.ResponseUsage | undefined
        let last = -1
        for await (const event of stream) {
          expect(event.sequence_number).toBe(last + 1)
          last = event.sequence_number
          if (event.type === 'response.completed') usage = event.response.usage
        }
        usages.push(usage)
      } else {
        usages.push((await client.responses.stream(body, { headers }).finalResponse()).usage)
      }
    }
    const [plain, ...others] = usages.map((usage) => parseOpenAIUsage(usage))
    expect(plain?.cacheRead).toBeGreaterThan(3000)
    for (const other of others) expect(other).toEqual(plain)
  })

  it('answers with the scripted message, function calls included, streamed or not', async () => {
    const headers = { [SCRIPT_HEADER]: encodeScript(script) }
    const plain = await client.responses.create(params('gpt-5.4', conversation(1)), { headers })
    expect(plain.status).toBe('completed')
    expect(plain.output_text).toBe('Looking at the parser and the formatter now.')
    const calls = plain.output.flatMap((item) => (item.type === 'function_call' ? [item] : []))
    expect(calls.map((item) => [item.call_id, item.name, item.arguments])).toEqual([
      ['call_1', 'grep', '{"pattern":"parse","path":"src"}'],
      ['call_2', 'read_file', '{"path":"src/parser.ts"}'],
    ])
    const final = await client.responses
      .stream(params('gpt-5.4', conversation(1)), { headers })
      .finalResponse()
    expect(final.output_text).toBe(plain.output_text)
    expect(final.output.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call'])

    const built = adapter.buildRequest(
      {
        sessionId: 's',
        config: { provider: 'openai-responses', model: 'gpt-5.4' },
        route: 'in-history',
        tools: [],
        headerSeq: 0,
        messages: [
          {
            message: { role: 'user', content: [{ type: 'text', text: 'go' }] },
            sourceSeqs: [1],
            origin: 'surface',
          },
        ],
      },
      { stream: false },
    )
    for (const stream of [false, true]) {
      const reply = await adapter.send(built, { stream, headers })
      expect(reply.message).toEqual(script)
      expect(reply.stopReason).toBe('tool-calls')
      expect(reply.responseId).toMatch(/^resp_/)
    }
  })

  it('surfaces a 429 with its retry-after-ms header', async () => {
    mock.context.faults.push({ kind: 'rate-limit', retryAfterMs: 1500 })
    const failure = await client.responses.create(params('gpt-5.4', conversation(1))).catch((error) => error)
    expect(failure).toBeInstanceOf(OpenAI.APIError)
    expect(failure.status).toBe(429)
    expect(failure.headers.get('retry-after-ms')).toBe('1500')
    expect(failure.error).toMatchObject({ code: 'rate_limit_exceeded' })

    mock.context.faults.push({ kind: 'rate-limit', retryAfterMs: 2500 })
    const built = {
      provider: 'openai-responses' as const,
      api: 'openai-responses' as const,
      body: params('gpt-5.4', conversation(1)),
      sources: { system: [], tools: [], messages: [] },
    }
    await expect(adapter.send(built, { stream: false, headers: {} })).rejects.toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 2500,
    })
  })

  it('turns an overloaded or failing provider and a broken stream into retryable provider errors', async () => {
    const built = {
      provider: 'openai-responses' as const,
      api: 'openai-responses' as const,
      body: params('gpt-5.4', conversation(1)),
      sources: { system: [], tools: [], messages: [] },
    }
    const cases = [
      { fault: { kind: 'overloaded' as const }, stream: false, status: 503 },
      { fault: { kind: 'server-error' as const }, stream: true, status: 500 },
      { fault: { kind: 'stream-error' as const }, stream: true, status: undefined },
      { fault: { kind: 'stream-cut' as const, afterFrames: 3 }, stream: true, status: undefined },
    ]
    for (const { fault, stream, status } of cases) {
      mock.context.faults.push(fault)
      const failure = await adapter.send(built, { stream, headers: {} }).catch((error) => error)
      expect(failure, fault.kind).toBeInstanceOf(ProviderError)
      expect(failure.status, fault.kind).toBe(status)
      expect(failure.retryable, fault.kind).toBe(true)
    }
  })

  it('rejects a request without input the way the API does', async () => {
    await expect(
      client.responses.create({ model: 'gpt-5.4' } as OpenAI.Responses.ResponseCreateParamsNonStreaming),
    ).rejects.toMatchObject({ status: 400 })
  })
})
