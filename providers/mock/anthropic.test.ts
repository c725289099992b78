import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { anthropicAdapter, parseAnthropicUsage } from '../anthropic.ts'
import { lateBoundFetch, SIMULATED_KEY, simulatedEndpoint } from '../endpoints.ts'
import { encodeScript, SCRIPT_HEADER, TIME_HEADER } from './script.ts'
import { type MockProviders, startMockProviders } from './server.ts'

let mock: MockProviders
const client = new Anthropic({ apiKey: SIMULATED_KEY, maxRetries: 0, fetch: lateBoundFetch })
const adapter = anthropicAdapter(simulatedEndpoint('anthropic'))

beforeAll(() => {
  mock = startMockProviders()
})
afterAll(() => mock.close())

const MODEL = 'claude-sonnet-4-6'
const system = fillerText(3000, 'anthropic-system')
const script: AssistantMessage = {
  role: 'assistant',
  content: [
    { type: 'text', text: 'Let me search for that in the repository.' },
    { type: 'tool-call', callId: 'toolu_01', name: 'grep', arguments: '{"pattern":"parse","path":"src"}' },
  ],
}

/** A conversation of `turns` user/assistant exchanges after the system prompt, cached automatically. */
function body(turns: number, extra: Record<string, unknown> = {}): Anthropic.MessageCreateParamsNonStreaming {
  const messages: Anthropic.MessageParam[] = []
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push({ role: 'user', content: [{ type: 'text', text: fillerText(200, `question-${turn}`) }] })
    if (turn < turns - 1)
      messages.push({ role: 'assistant', content: [{ type: 'text', text: `Answer ${turn}.` }] })
  }
  return {
    model: MODEL,
    max_tokens: 1024,
    system: [{ type: 'text', text: system }],
    messages,
    cache_control: { type: 'ephemeral' },
    ...extra,
  }
}

/** Send a body through the adapter (and so through toProviderError on failure). */
function send(request: Anthropic.MessageCreateParamsNonStreaming, stream: boolean, at = 0) {
  const built = {
    provider: 'anthropic' as const,
    api: 'anthropic-messages' as const,
    body: { ...request },
    sources: { system: [], tools: [], messages: [] },
  }
  return adapter.send(built, { stream, headers: headers(at) })
}

const headers = (at: number) => ({ [TIME_HEADER]: String(at), [SCRIPT_HEADER]: encodeScript(script) })

/** Every SSE frame of a raw streamed response, as text blocks. */
async function rawFrames(request: Record<string, unknown>): Promise<string[]> {
  const response = await fetch('https://api.anthropic.com/v1/messages', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': SIMULATED_KEY, ...headers(0) },
    body: JSON.stringify({ ...request, stream: true }),
  })
  const text = await response.text()
  return text.split('\n\n').filter((frame) => frame.trim() !== '')
}

describe('mock Messages over the @anthropic-ai/sdk', () => {
  it('reads more from cache on every request of an append-only conversation', async () => {
    mock.context.reset()
    let previous = -1
    for (let turns = 1; turns <= 4; turns += 1) {
      const message = await client.messages.create(body(turns), { headers: headers(turns * 10) })
      const read = message.usage.cache_read_input_tokens ?? 0
      expect(read).toBeGreaterThan(previous)
      if (turns > 1) expect(read).toBeGreaterThan(3000)
      previous = read
    }
  })

  it('gives the same normalized usage streamed and not streamed, and through MessageStream', async () => {
    mock.context.reset()
    await client.messages.create(body(2), { headers: headers(0) })
    const plain = await client.messages.create(body(3), { headers: headers(10) })
    mock.context.reset()
    await client.messages.create(body(2), { headers: headers(0) })
    const streamed = await client.messages.stream(body(3), { headers: headers(10) }).finalMessage()
    expect(parseAnthropicUsage(streamed.usage)).toEqual(parseAnthropicUsage(plain.usage))
    expect(streamed.content).toEqual(plain.content)
    expect(streamed.stop_reason).toBe('tool_use')

    mock.context.reset()
    await client.messages.create(body(2), { headers: headers(0) })
    const viaEvents = await send(body(3), true, 10)
    expect(viaEvents.usage).toEqual(parseAnthropicUsage(plain.usage))
    expect(viaEvents.message).toEqual(script)
    expect(viaEvents.stopReason).toBe('tool-calls')
  })

  it('names every frame with an event: line', async () => {
    mock.context.reset()
    const frames = await rawFrames(body(1) as unknown as Record<string, unknown>)
    expect(frames.length).toBeGreaterThan(6)
    for (const frame of frames) expect(frame).toMatch(/^event: [a-z_]+\ndata: \{/)
    const names = frames.map((frame) => frame.slice('event: '.length, frame.indexOf('\n')))
    expect(names[0]).toBe('message_start')
    expect(names).toContain('ping')
    expect(names.slice(-2)).toEqual(['message_delta', 'message_stop'])
  })

  it('rejects a fifth cache_control block with a 400 the SDK raises as BadRequestError', async () => {
    mock.context.reset()
    const marked = (text: string): Anthropic.TextBlockParam => ({
      type: 'text',
      text,
      cache_control: { type: 'ephemeral' },
    })
    const request = body(1, {
      system: [marked('a'), marked('b'), marked('c'), marked('d')],
      messages: [{ role: 'user', content: [marked('e')] }],
      cache_control: undefined,
    })
    const failure = await client.messages.create(request).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError)
    expect((failure as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.',
      },
    })
  })

  it('surfaces an overloaded fault as status 529, and a rate limit with its retry delay', async () => {
    mock.context.reset()
    mock.context.faults.push({ kind: 'overloaded' }, { kind: 'rate-limit', retryAfterMs: 1500 })
    const overloaded = await send(body(1), false).catch((error: unknown) => error)
    expect(overloaded).toMatchObject({ status: 529, errorType: 'overloaded_error', retryable: true })
    const limited = await send(body(1), false).catch((error: unknown) => error)
    expect(limited).toMatchObject({ status: 429, errorType: 'rate_limit_error', retryAfterMs: 1500 })
  })

  it('reports an error event inside a 200 stream as an overloaded error', async () => {
    mock.context.reset()
    mock.context.faults.push({ kind: 'stream-error' })
    const failure = await send(body(1), true).catch((error: unknown) => error)
    expect(failure).toMatchObject({ errorType: 'overloaded_error', retryable: true })
  })

  it('fails a stream cut mid-way', async () => {
    mock.context.reset()
    mock.context.faults.push({ kind: 'stream-cut', afterFrames: 3 })
    const failure = await send(body(1), true).catch((error: unknown) => error)
    expect(failure).toMatchObject({ status: undefined, retryable: true })
    expect(String((failure as Error).message)).toMatch(/connection reset|terminated|network/i)
    mock.context.faults.push({ kind: 'stream-cut', afterFrames: 3 })
    const plain = await send(body(1), false).catch((error: unknown) => error)
    expect(plain).toMatchObject({ status: 500, errorType: 'api_error' })
  })

  it('refuses a system message inside messages on a model whose route reads only the head, and takes it on one that reads history', async () => {
    mock.context.reset()
    const post = (model: string) =>
      fetch('https://api.anthropic.com/v1/messages', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers(0) },
        body: JSON.stringify({
          model,
          max_tokens: 16,
          system: 'You are a coding agent.',
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'assistant', content: 'hello' },
            { role: 'system', content: 'Build mode is on.' },
            { role: 'user', content: 'go on' },
          ],
        }),
      })
    const refused = await post('claude-sonnet-4-6')
    expect(refused.status).toBe(400)
    expect(await refused.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: "role 'system' is not supported on this model" },
    })
    expect((await post('claude-opus-4-8')).status).toBe(200)
  })

  it('answers a request without max_tokens with an invalid_request_error', async () => {
    const response = await fetch('https://api.anthropic.com/v1/messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(response.status).toBe(400)
    const error = (await response.json()) as Record<string, unknown>
    expect(error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    expect(typeof error.request_id).toBe('string')
  })
})
