import { GoogleGenAI } from '@google/genai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { DEFAULT_BASE_URLS, lateBoundFetch, SIMULATED_KEY, simulatedEndpoint } from '../endpoints.ts'
import { buildGeminiRequest, geminiAdapter, SKIP_THOUGHT_SIGNATURE } from '../gemini.ts'
import { derivedRequest, surfaceMessage, userText } from '../testing.ts'
import { encodeScript, SCRIPT_HEADER, TIME_HEADER } from './script.ts'
import { type MockProviders, startMockProviders } from './server.ts'

let mock: MockProviders
const client = new GoogleGenAI({
  apiKey: SIMULATED_KEY,
  httpOptions: { baseUrl: DEFAULT_BASE_URLS.gemini, fetch: lateBoundFetch },
})
const adapter = geminiAdapter(simulatedEndpoint('gemini'))

beforeAll(() => {
  mock = startMockProviders()
})
afterAll(() => mock.close())
beforeEach(() => mock.context.reset())

const system = fillerText(3000, 'gemini-system')

/** An append-only conversation of `turns` user turns, each answered with `OK.` but the last. */
function contents(turns: number) {
  const list: Array<{ role: string; parts: Array<{ text: string }> }> = []
  for (let turn = 0; turn < turns; turn += 1) {
    if (turn > 0) list.push({ role: 'model', parts: [{ text: 'OK.' }] })
    list.push({ role: 'user', parts: [{ text: `Question ${turn + 1}. ${fillerText(150, turn)}` }] })
  }
  return list
}

const at = (seconds: number) => ({ httpOptions: { headers: { [TIME_HEADER]: String(seconds) } } })

describe('mock Gemini generateContent over the @google/genai SDK', () => {
  it('reads more cached tokens as a conversation grows, the prompt count including them', async () => {
    const cached: number[] = []
    for (let turns = 1; turns <= 5; turns += 1) {
      const response = await client.models.generateContent({
        model: 'gemini-2.5-flash',
        contents: contents(turns),
        config: { systemInstruction: { parts: [{ text: system }] }, ...at(turns * 10) },
      })
      const usage = response.usageMetadata
      cached.push(usage?.cachedContentTokenCount ?? 0)
      expect(usage?.promptTokenCount).toBeGreaterThan(usage?.cachedContentTokenCount ?? 0)
      if ((usage?.cachedContentTokenCount ?? 0) > 0) {
        expect(usage?.cacheTokensDetails).toEqual([
          { modality: 'TEXT', tokenCount: usage?.cachedContentTokenCount },
        ])
      }
    }
    expect(cached[0]).toBe(0)
    for (let index = 1; index < cached.length; index += 1) {
      expect(cached[index]).toBeGreaterThan(cached[index - 1] ?? 0)
    }
  })

  it('caches nothing below the model minimum (2,048 tokens on 2.5 Flash) and reads nothing after five idle minutes', async () => {
    const small = {
      model: 'gemini-2.5-flash',
      contents: [{ role: 'user', parts: [{ text: fillerText(1500, 1) }] }],
    }
    await client.models.generateContent({ ...small, config: at(0) })
    const again = await client.models.generateContent({ ...small, config: at(10) })
    expect(again.usageMetadata?.cachedContentTokenCount).toBeUndefined()

    const large = { model: 'gemini-2.5-flash', contents: contents(1), config: { systemInstruction: system } }
    await client.models.generateContent({ ...large, config: { ...large.config, ...at(100) } })
    const warm = await client.models.generateContent({ ...large, config: { ...large.config, ...at(200) } })
    expect(warm.usageMetadata?.cachedContentTokenCount).toBeGreaterThan(3000)
    const cold = await client.models.generateContent({ ...large, config: { ...large.config, ...at(501) } })
    expect(cold.usageMetadata?.cachedContentTokenCount).toBeUndefined()
  })

  it('streams the answer with the same usage as the JSON response', async () => {
    const request = {
      model: 'gemini-2.5-flash',
      contents: contents(2),
      config: { systemInstruction: system },
    }
    const json = await client.models.generateContent({ ...request, config: { ...request.config, ...at(0) } })
    mock.context.reset()
    let text = ''
    let usage: unknown
    for await (const chunk of await client.models.generateContentStream({
      ...request,
      config: { ...request.config, ...at(0) },
    })) {
      text += chunk.text ?? ''
      usage = chunk.usageMetadata
    }
    expect(text).toBe(json.text)
    expect(usage).toEqual(json.usageMetadata)
  })

  it('answers a scripted function call, and the adapter sends its result back as a function response', async () => {
    const script: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'tool-call', callId: 'call_1', name: 'grep', arguments: '{"pattern":"parse"}' }],
    }
    const request = derivedRequest(
      { provider: 'gemini', model: 'gemini-2.5-flash' },
      [userText('Find it.', 2)],
      {
        tools: [{ name: 'grep', description: 'Search', parameters: { type: 'object', properties: {} } }],
      },
    )
    const built = buildGeminiRequest(request, { stream: false })
    const reply = await adapter.send(built, {
      stream: false,
      headers: { [SCRIPT_HEADER]: encodeScript(script) },
    })
    expect(reply.message.content).toEqual(script.content)
    expect(reply.stopReason).toBe('tool-calls')
    const next = buildGeminiRequest(
      {
        ...request,
        messages: [
          ...request.messages,
          surfaceMessage(reply.message, 3),
          surfaceMessage({ role: 'tool', callId: 'call_1', name: 'grep', text: 'parser.ts:1' }, 4),
        ],
      },
      { stream: true },
    )
    const second = await adapter.send(next, { stream: true, headers: {} })
    expect(second.usage.input).toBeGreaterThan(0)
    expect(next.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Find it.' }] },
      {
        role: 'model',
        parts: [{ functionCall: { id: 'call_1', name: 'grep', args: { pattern: 'parse' } } }],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { id: 'call_1', name: 'grep', response: { output: 'parser.ts:1' } } }],
      },
    ])
  })

  it('signs as each model does: Gemini 3 the first of parallel calls, 2.5 the first part; streamed as in the JSON response', async () => {
    const script = {
      role: 'assistant' as const,
      content: [
        { type: 'text' as const, text: 'Reading both.' },
        { type: 'tool-call' as const, callId: 'call_a', name: 'read_file', arguments: '{"path":"a.md"}' },
        { type: 'tool-call' as const, callId: 'call_b', name: 'read_file', arguments: '{"path":"b.md"}' },
      ],
      reasoning: 'as-requested' as const,
    }
    const request = (model: string) => ({
      model,
      contents: 'Read a.md and b.md.',
      config: {
        tools: [{ functionDeclarations: [{ name: 'read_file', parametersJsonSchema: { type: 'object' } }] }],
        httpOptions: { headers: { [SCRIPT_HEADER]: encodeScript(script) } },
      },
    })
    const signed = (parts: Array<{ thoughtSignature?: string }>) =>
      parts.map((part) => part.thoughtSignature !== undefined)
    const three = await client.models.generateContent(request('gemini-3.5-flash'))
    const threeParts = three.candidates?.[0]?.content?.parts ?? []
    expect(signed(threeParts)).toEqual([false, true, false])
    const streamed = []
    for await (const chunk of await client.models.generateContentStream(request('gemini-3.5-flash')))
      streamed.push(...(chunk.candidates?.[0]?.content?.parts ?? []))
    expect(streamed.filter((part) => part.thoughtSignature !== undefined)).toEqual([threeParts[1]])

    const twoFive = await client.models.generateContent(request('gemini-2.5-flash'))
    expect(signed(twoFive.candidates?.[0]?.content?.parts ?? [])).toEqual([true, false, false])
    // Without thinking, 2.5 signs nothing.
    const off = await client.models.generateContent({
      ...request('gemini-2.5-flash'),
      config: { ...request('gemini-2.5-flash').config, thinkingConfig: { thinkingBudget: 0 } },
    })
    expect(signed(off.candidates?.[0]?.content?.parts ?? [])).toEqual([false, false, false])
  })

  it("runs the loop's tool round on Gemini 3: the adapter signs its scripted calls with the skip sentinel", async () => {
    const script: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'tool-call', callId: 'call_1', name: 'grep', arguments: '{"pattern":"parse"}' }],
    }
    const request = derivedRequest(
      { provider: 'gemini', model: 'gemini-3.1-pro-preview' },
      [userText('Find it.', 2)],
      { tools: [{ name: 'grep', description: 'Search', parameters: { type: 'object', properties: {} } }] },
    )
    await adapter.send(buildGeminiRequest(request, { stream: false }), {
      stream: false,
      headers: { [SCRIPT_HEADER]: encodeScript(script) },
    })
    const next = buildGeminiRequest(
      {
        ...request,
        messages: [
          ...request.messages,
          surfaceMessage(script, 3),
          surfaceMessage({ role: 'tool', callId: 'call_1', name: 'grep', text: 'parser.ts:1' }, 4),
        ],
      },
      { stream: true },
    )
    expect((next.body.contents as Array<{ parts: unknown[] }>)[1]?.parts).toEqual([
      {
        functionCall: { id: 'call_1', name: 'grep', args: { pattern: 'parse' } },
        thoughtSignature: SKIP_THOUGHT_SIGNATURE,
      },
    ])
    const second = await adapter.send(next, { stream: true, headers: {} })
    expect(second.message.content).toEqual([{ type: 'text', text: 'OK.' }])
  })

  it('sends the wire body the adapter built, byte for byte the simulator reads', async () => {
    const request = derivedRequest(
      { provider: 'gemini', model: 'gemini-2.5-flash', maxTokens: 100, temperature: 0 },
      [userText('Hello.', 2)],
      {
        system: { text: 'Be brief.', sourceSeq: 1 },
        tools: [{ name: 'grep', description: 'Search', parameters: { type: 'object', properties: {} } }],
      },
    )
    const built = buildGeminiRequest(request, { stream: false })
    const seen: Array<Record<string, unknown>> = []
    mock.context.observer = (call) => seen.push(call.body)
    await adapter.send(built, { stream: false, headers: {} })
    expect(seen).toEqual([built.body])
  })

  it('refuses a role other than user and model, and a function turn answered by fewer responses', async () => {
    await expect(
      client.models.generateContent({
        model: 'gemini-2.5-flash',
        contents: [{ role: 'assistant', parts: [{ text: 'Hi' }] }],
      }),
    ).rejects.toThrow(/Please use a valid role: user, model/)
    await expect(
      client.models.generateContent({
        model: 'gemini-2.5-flash',
        contents: [
          { role: 'user', parts: [{ text: 'go' }] },
          {
            role: 'model',
            parts: [{ functionCall: { name: 'a', args: {} } }, { functionCall: { name: 'b', args: {} } }],
          },
          { role: 'user', parts: [{ functionResponse: { name: 'a', response: {} } }] },
        ],
      }),
    ).rejects.toThrow(/number of function response parts is equal/)
  })
})

describe('mock Gemini explicit context caches', () => {
  it('creates a cache, reads all of it from a request that names it, and forgets it once deleted', async () => {
    const cache = await client.caches.create({
      model: 'gemini-2.5-flash',
      config: { systemInstruction: system, ttl: '600s', ...at(0) },
    })
    expect(cache.name).toMatch(/^cachedContents\//)
    const tokens = cache.usageMetadata?.totalTokenCount ?? 0
    expect(tokens).toBeGreaterThan(3000)
    expect(cache.expireTime).toBe('2026-01-01T00:10:00.000Z')

    const response = await client.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: contents(1),
      config: { cachedContent: cache.name ?? '', ...at(30) },
    })
    expect(response.usageMetadata?.cachedContentTokenCount).toBe(tokens)

    await expect(
      client.models.generateContent({
        model: 'gemini-2.5-flash',
        contents: contents(1),
        config: { cachedContent: cache.name ?? '', systemInstruction: 'again', ...at(40) },
      }),
    ).rejects.toThrow(/CachedContent can not be used with GenerateContent request setting system_instruction/)

    await client.caches.delete({ name: cache.name ?? '' })
    await expect(
      client.models.generateContent({
        model: 'gemini-2.5-flash',
        contents: contents(1),
        config: { cachedContent: cache.name ?? '', ...at(50) },
      }),
    ).rejects.toThrow(/CachedContent not found/)
  })

  it('refuses a cache below the minimum and forgets one past its TTL', async () => {
    await expect(
      client.caches.create({ model: 'gemini-2.5-flash', config: { systemInstruction: 'short', ...at(0) } }),
    ).rejects.toThrow(/Cached content is too small. total_token_count=\d+, min_total_token_count=2048/)
    const cache = await client.caches.create({
      model: 'gemini-2.5-flash',
      config: { systemInstruction: system, ttl: '60s', ...at(0) },
    })
    await expect(client.caches.get({ name: cache.name ?? '', config: at(61) })).rejects.toThrow(
      /403|not found/,
    )
  })
})

describe('the adapter with an explicit cache (geminiCacheTtlSeconds)', () => {
  const head = {
    system: { text: system, sourceSeq: 1 },
    tools: [{ name: 'grep', description: 'Search', parameters: { type: 'object', properties: {} } }],
  }
  const request = (text: string) =>
    derivedRequest({ provider: 'gemini', model: 'gemini-2.5-flash' }, [userText(text, 2)], head)

  it('moves the head into a cache it creates once, names it in every request, and creates it again once expired', async () => {
    const explicitAdapter = geminiAdapter(simulatedEndpoint('gemini'))
    const options = { stream: false, geminiCacheTtlSeconds: 600 }
    const first = explicitAdapter.buildRequest(request('one'), options)
    const reply = await explicitAdapter.send(first, { stream: false, headers: { [TIME_HEADER]: '0' } })
    expect(first.body.systemInstruction).toBeUndefined()
    expect(first.body.tools).toBeUndefined()
    expect(first.body.cachedContent).toBe('cachedContents/sim000001')
    expect(reply.usage.cacheRead).toBeGreaterThan(3000)

    const second = explicitAdapter.buildRequest(request('two'), options)
    await explicitAdapter.send(second, { stream: false, headers: { [TIME_HEADER]: '300' } })
    expect(second.body.cachedContent).toBe('cachedContents/sim000001')

    const late = explicitAdapter.buildRequest(request('three'), options)
    const lateReply = await explicitAdapter.send(late, { stream: false, headers: { [TIME_HEADER]: '700' } })
    expect(late.body.cachedContent).toBe('cachedContents/sim000002')
    expect(lateReply.usage.cacheRead).toBe(reply.usage.cacheRead)
  })

  it('sends a head below the model minimum as is (the API refuses to cache it)', async () => {
    const explicitAdapter = geminiAdapter(simulatedEndpoint('gemini'))
    const small = derivedRequest({ provider: 'gemini', model: 'gemini-2.5-flash' }, [userText('hi', 2)], {
      system: { text: 'Be brief.', sourceSeq: 1 },
    })
    const built = explicitAdapter.buildRequest(small, { stream: false, geminiCacheTtlSeconds: 600 })
    await explicitAdapter.send(built, { stream: false, headers: {} })
    expect(built.body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] })
    expect(built.body.cachedContent).toBeUndefined()
  })
})
