import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { lateBoundFetch, SIMULATED_KEY } from '../endpoints.ts'
import { encodeScript, SCRIPT_HEADER, TIME_HEADER } from './script.ts'
import { type MockProviders, startMockProviders } from './server.ts'

let mock: MockProviders
const client = new OpenAI({ apiKey: SIMULATED_KEY, maxRetries: 0, fetch: lateBoundFetch })

beforeAll(() => {
  mock = startMockProviders()
})
afterAll(() => mock.close())

const system = fillerText(4000, 'wire-system')

async function ask(systemPrompt: string, at: number) {
  const completion = await client.chat.completions.create(
    {
      model: 'gpt-5.4',
      messages: [
        { role: 'system', content: systemPrompt },
        { role: 'user', content: 'hello' },
      ],
    },
    { headers: { [TIME_HEADER]: String(at) } },
  )
  return completion.usage
}

describe('mock Chat Completions over the openai SDK', () => {
  it('computes cached tokens from the request it received', async () => {
    mock.context.reset()
    const first = await ask(system, 0)
    const second = await ask(system, 10)
    expect(first?.prompt_tokens_details?.cached_tokens).toBe(0)
    expect(second?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(3900)
  })

  it('reads 0 once one early byte of the system prompt changes', async () => {
    mock.context.reset()
    await ask(system, 0)
    const changed = `${system.slice(0, 5)}#${system.slice(6)}`
    const after = await ask(changed, 10)
    expect(after?.prompt_tokens_details?.cached_tokens).toBe(0)
    expect(after?.prompt_tokens).toBeGreaterThan(4000)
  })

  it('answers with the scripted message, tool calls included, streamed or not', async () => {
    mock.context.reset()
    const script = {
      role: 'assistant' as const,
      content: [
        { type: 'text' as const, text: 'Looking.' },
        { type: 'tool-call' as const, callId: 'call_1', name: 'grep', arguments: '{"pattern":"x"}' },
      ],
    }
    const headers = { [SCRIPT_HEADER]: encodeScript(script) }
    const plain = await client.chat.completions.create(
      { model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] },
      { headers },
    )
    expect(plain.choices[0]?.message.content).toBe('Looking.')
    expect(plain.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      id: 'call_1',
      function: { name: 'grep', arguments: '{"pattern":"x"}' },
    })
    expect(plain.choices[0]?.finish_reason).toBe('tool_calls')

    const stream = client.chat.completions.stream(
      {
        model: 'gpt-5.4',
        messages: [{ role: 'user', content: 'hi' }],
        stream_options: { include_usage: true },
      },
      { headers },
    )
    const final = await stream.finalChatCompletion()
    expect(final.choices[0]?.message.tool_calls?.[0]?.id).toBe('call_1')
    expect(final.usage?.prompt_tokens).toBe(plain.usage?.prompt_tokens)
  })

  it('rejects a request without messages the way the API does', async () => {
    await expect(client.chat.completions.create({ model: 'gpt-5.4', messages: [] })).rejects.toMatchObject({
      status: 400,
    })
  })

  it('leaves a queued fault for the next valid request when it rejects a request with 400', async () => {
    mock.context.reset()
    mock.context.faults.push({ kind: 'rate-limit', retryAfterMs: 1500 })
    await expect(client.chat.completions.create({ model: 'gpt-5.4', messages: [] })).rejects.toMatchObject({
      status: 400,
    })
    expect(mock.context.faults.pending).toBe(1)
    const limited = client.chat.completions.create({
      model: 'gpt-5.4',
      messages: [{ role: 'user', content: 'hi' }],
    })
    await expect(limited).rejects.toMatchObject({ status: 429 })
    expect(mock.context.faults.pending).toBe(0)
    expect((await ask(system, 10))?.prompt_tokens).toBeGreaterThan(0)
  })
})
