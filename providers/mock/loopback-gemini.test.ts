import { GoogleGenAI } from '@google/genai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { type LoopbackServer, type ServeLogRecord, startLoopback } from './loopback.ts'

const secret = 'AIzaSy-test-loopback-secret-0123456789abcdef'
const system = fillerText(3000, 'gemini-loopback-system')
let server: LoopbackServer
const log: ServeLogRecord[] = []

beforeAll(async () => {
  server = await startLoopback({ upstream: 'sim', port: 0, log: (record) => log.push(record) })
})
afterAll(async () => server.close())

describe('cachelab serve for the Gemini SDK', () => {
  it('answers under /gemini with cached tokens that grow over a five-turn conversation, streamed or not', async () => {
    const client = new GoogleGenAI({ apiKey: secret, httpOptions: { baseUrl: server.baseURLs.gemini } })
    const contents: Array<{ role: string; parts: Array<{ text: string }> }> = []
    const cached: number[] = []
    for (const [turn, question] of ['one', 'two', 'three', 'four', 'five'].entries()) {
      contents.push({ role: 'user', parts: [{ text: `${question} ${fillerText(200, question)}` }] })
      const request = { model: 'gemini-2.5-flash', contents, config: { systemInstruction: system } }
      let text = ''
      let usage: { cachedContentTokenCount?: number } | undefined
      if (turn % 2 === 0) {
        const response = await client.models.generateContent(request)
        text = response.text ?? ''
        usage = response.usageMetadata
      } else {
        for await (const chunk of await client.models.generateContentStream(request)) {
          text += chunk.text ?? ''
          usage = chunk.usageMetadata
        }
      }
      cached.push(usage?.cachedContentTokenCount ?? 0)
      contents.push({ role: 'model', parts: [{ text }] })
    }
    expect(cached[0]).toBe(0)
    expect(cached[1]).toBeGreaterThan(2900)
    for (let index = 2; index < cached.length; index += 1)
      expect(cached[index]).toBeGreaterThan(cached[index - 1] as number)
    const calls = log.filter((record) => record.vendor === 'gemini')
    expect(calls).toHaveLength(5)
    expect(calls.every((record) => record.model === 'gemini-2.5-flash')).toBe(true)
    expect(calls.at(-1)?.usage?.cacheRead).toBe(cached.at(-1))
    expect(JSON.stringify(log)).not.toContain(secret)
  })

  it('lists the catalog models and serves explicit caches under the same prefix', async () => {
    const client = new GoogleGenAI({ apiKey: secret, httpOptions: { baseUrl: server.baseURLs.gemini } })
    const models: string[] = []
    for await (const model of await client.models.list()) models.push(model.name ?? '')
    expect(models).toContain('models/gemini-2.5-flash')
    const cache = await client.caches.create({
      model: 'gemini-2.5-flash',
      config: { systemInstruction: system },
    })
    const response = await client.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'What does it say?',
      config: { cachedContent: cache.name ?? '' },
    })
    expect(response.usageMetadata?.cachedContentTokenCount).toBe(cache.usageMetadata?.totalTokenCount)
  })
})

/** A Gemini SDK client on a server that keeps the bodies it sends. */
function recordingClient(on: LoopbackServer) {
  const sent: Array<{ contents: Array<{ role: string; parts: Array<Record<string, unknown>> }> }> = []
  const client = new GoogleGenAI({
    apiKey: secret,
    httpOptions: {
      baseUrl: on.baseURLs.gemini,
      fetch: async (input, init) => {
        if (typeof init?.body === 'string') sent.push(JSON.parse(init.body))
        return fetch(input, init)
      },
    },
  })
  return { client, sent }
}

const readFile = {
  tools: [
    {
      functionDeclarations: [
        {
          name: 'read_file',
          description: 'Read a file.',
          parametersJsonSchema: {
            type: 'object',
            properties: { path: { type: 'string' } },
            required: ['path'],
          },
        },
      ],
    },
  ],
}

/** The error body of a request the SDK threw for. */
async function refusal(request: Promise<unknown>): Promise<unknown> {
  const error = await request.then(
    () => undefined,
    (thrown: unknown) => thrown as { status?: number; message: string },
  )
  expect(error?.status).toBe(400)
  return JSON.parse(error?.message ?? '{}')
}

/** A two-step tool loop in the SDK's chat: a call of `read_file`, its result, then the answer. */
async function toolLoop(on: LoopbackServer, model: string, stream: boolean) {
  const { client, sent } = recordingClient(on)
  const chat = client.chats.create({ model, config: readFile })
  const turn = async (message: Parameters<typeof chat.sendMessage>[0]['message']) => {
    if (!stream) return [await chat.sendMessage({ message })]
    const chunks = []
    for await (const chunk of await chat.sendMessageStream({ message })) chunks.push(chunk)
    return chunks
  }
  const first = await turn('Read the README.')
  const call = first
    .flatMap((chunk) => chunk.candidates?.[0]?.content?.parts ?? [])
    .find((part) => part.functionCall)
  const second = await turn([
    {
      functionResponse: {
        id: call?.functionCall?.id ?? '',
        name: 'read_file',
        response: { output: '# cachelab' },
      },
    },
  ])
  return { call, answer: second.map((chunk) => chunk.text ?? '').join(''), sent }
}

describe('Gemini 3 thought signatures through the SDK', () => {
  it("signs a step's function call, and the SDK's chat sends the signature back and is served, streamed or not", async () => {
    for (const stream of [false, true]) {
      const { call, answer, sent } = await toolLoop(server, 'gemini-3.8-flash', stream)
      expect(call?.functionCall?.name).toBe('read_file')
      expect(call?.thoughtSignature).toMatch(/^[A-Za-z0-9+/]{43}=$/)
      expect(answer).toBe('OK.')
      const echoed = sent[1]?.contents.flatMap((content) => content.parts).find((part) => part.functionCall)
      expect(echoed?.thoughtSignature).toBe(call?.thoughtSignature)
    }
  })

  it('signs the same answers byte for byte on a fresh server', async () => {
    const again = await startLoopback({ upstream: 'sim', port: 0 })
    const fresh = await startLoopback({ upstream: 'sim', port: 0 })
    try {
      const one = await toolLoop(again, 'gemini-3.1-pro-preview', false)
      const two = await toolLoop(fresh, 'gemini-3.1-pro-preview', false)
      expect(JSON.stringify(two.sent)).toBe(JSON.stringify(one.sent))
    } finally {
      await again.close()
      await fresh.close()
    }
  })

  it('refuses a hand-built history whose current turn has an unsigned call, naming the call and its position', async () => {
    const { client } = recordingClient(server)
    const contents = [
      { role: 'user', parts: [{ text: 'Read the README.' }] },
      { role: 'model', parts: [{ functionCall: { name: 'read_file', args: { path: 'README.md' } } }] },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'read_file', response: { output: '# cachelab' } } }],
      },
    ]
    expect(
      await refusal(client.models.generateContent({ model: 'gemini-3.5-flash', contents, config: readFile })),
    ).toEqual({
      error: {
        code: 400,
        message:
          'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:read_file` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.',
        status: 'INVALID_ARGUMENT',
      },
    })
  })

  it('serves the sentinel signature in the current turn, and unsigned calls in an earlier turn', async () => {
    const { client } = recordingClient(server)
    const step = (signature?: string) => [
      { role: 'user', parts: [{ text: 'Read the README.' }] },
      {
        role: 'model',
        parts: [
          {
            functionCall: { name: 'read_file', args: { path: 'README.md' } },
            ...(signature !== undefined ? { thoughtSignature: signature } : {}),
          },
        ],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'read_file', response: { output: '# cachelab' } } }],
      },
    ]
    const sentinel = await client.models.generateContent({
      model: 'gemini-3.8-flash',
      contents: step('skip_thought_signature_validator'),
      config: readFile,
    })
    expect(sentinel.text).toBe('OK.')
    const later = await client.models.generateContent({
      model: 'gemini-3.8-flash',
      contents: [
        ...step(),
        { role: 'model', parts: [{ text: 'OK.' }] },
        { role: 'user', parts: [{ text: 'Thanks.' }] },
      ],
      config: readFile,
    })
    expect(later.functionCalls?.[0]?.name).toBe('read_file')
  })

  it('leads the answer with its thought summary when includeThoughts is set, its tokens in thoughtsTokenCount, streamed or not', async () => {
    const { client } = recordingClient(server)
    const request = {
      model: 'gemini-3-flash-preview',
      contents: 'Say OK.',
      config: { thinkingConfig: { includeThoughts: true } },
    }
    const whole = await client.models.generateContent(request)
    const parts = whole.candidates?.[0]?.content?.parts ?? []
    expect(parts.map((part) => part.thought === true)).toEqual([true, false])
    expect(parts[0]?.text?.length).toBeGreaterThan(20)
    // A Gemini 3 text answer it thought over is signed on its last part.
    expect(parts[1]).toEqual({ text: 'OK.', thoughtSignature: expect.stringMatching(/=$/) })
    expect(whole.text).toBe('OK.')
    expect(whole.usageMetadata?.thoughtsTokenCount).toBeGreaterThan(0)

    let thoughts = ''
    let answer = ''
    let usage: unknown
    for await (const chunk of await client.models.generateContentStream(request)) {
      for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
        if (part.thought === true) {
          expect(answer).toBe('')
          thoughts += part.text ?? ''
        } else answer += part.text ?? ''
      }
      usage = chunk.usageMetadata
    }
    expect(thoughts).toBe(parts[0]?.text)
    expect(answer).toBe('OK.')
    expect((usage as { thoughtsTokenCount?: number }).thoughtsTokenCount).toBe(
      whole.usageMetadata?.thoughtsTokenCount,
    )

    const without = await client.models.generateContent({ model: request.model, contents: request.contents })
    expect(without.candidates?.[0]?.content?.parts?.some((part) => part.thought)).toBe(false)
    expect(without.usageMetadata?.thoughtsTokenCount).toBe(whole.usageMetadata?.thoughtsTokenCount)
  })
})
