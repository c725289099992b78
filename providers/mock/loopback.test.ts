import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import { CacheSimulators } from '../sim/index.ts'
import type { CapturedExchange } from '../wire/exchange.ts'
import { type LoopbackServer, type ServeLogRecord, startLoopback } from './loopback.ts'
import { loopbackRoutes } from './loopback-routes.ts'

const secret = 'sk-test-loopback-secret-0123456789abcdefghij'
const system = fillerText(3000, 'loopback-system')
let server: LoopbackServer
const log: ServeLogRecord[] = []

beforeAll(async () => {
  server = await startLoopback({ upstream: 'sim', port: 0, log: (record) => log.push(record) })
})
afterAll(async () => server.close())

describe('cachelab serve on loopback', () => {
  it('gives the openai SDK cached tokens that grow across an append-only conversation', async () => {
    const client = new OpenAI({ apiKey: secret, baseURL: server.baseURLs.openai, maxRetries: 0 })
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'system', content: system }]
    const cached: number[] = []
    for (const question of ['first question', 'second question', 'third question']) {
      messages.push({ role: 'user', content: `${question} ${fillerText(200, question)}` })
      const reply = await client.chat.completions.create({
        model: 'gpt-5.4',
        messages,
        prompt_cache_key: 'conversation-1',
      })
      cached.push(reply.usage?.prompt_tokens_details?.cached_tokens ?? -1)
      messages.push({ role: 'assistant', content: reply.choices[0]?.message.content ?? '' })
    }
    expect(cached[0]).toBe(0)
    expect(cached[1]).toBeGreaterThan(2900)
    expect(cached[2]).toBeGreaterThan(cached[1] as number)
  })

  it('gives the Anthropic SDK cache reads that grow, streamed', async () => {
    const client = new Anthropic({ apiKey: secret, baseURL: server.baseURLs.anthropic, maxRetries: 0 })
    const messages: Anthropic.MessageParam[] = []
    const reads: number[] = []
    for (const question of ['one', 'two', 'three']) {
      messages.push({ role: 'user', content: `${question} ${fillerText(300, question)}` })
      const stream = client.messages.stream({
        model: 'claude-sonnet-4-6',
        max_tokens: 64,
        system,
        messages,
        cache_control: { type: 'ephemeral' },
      })
      const final = await stream.finalMessage()
      reads.push(final.usage.cache_read_input_tokens ?? -1)
      messages.push({
        role: 'assistant',
        content:
          final.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('') || 'ok',
      })
    }
    expect(reads[0]).toBe(0)
    expect(reads[1]).toBeGreaterThan(3000)
    expect(reads[2]).toBeGreaterThan(reads[1] as number)
  })

  it('logs usage per request and session, never the key', () => {
    expect(log.length).toBeGreaterThanOrEqual(6)
    expect(log.filter((record) => record.session === 'conversation-1')).toHaveLength(3)
    expect(log.every((record) => record.usage !== undefined)).toBe(true)
    expect(JSON.stringify(log)).not.toContain(secret)
  })

  it('answers a path outside every prefix with a 404 naming it and the prefixes it accepts', async () => {
    for (const path of ['/nowhere', '/openai/chat/completions']) {
      const response = await fetch(`${server.url}${path}`, { method: 'POST', body: '{}' })
      expect(response.status).toBe(404)
      const { error } = (await response.json()) as { error: { message: string } }
      expect(error.message).toBe(
        `no provider API at POST ${path}; cachelab serve answers under /anthropic/v1, /anthropic, /openai/v1, /deepseek/v1, /deepseek, /bedrock, /gemini, /xai/v1, /kimi/v1, /openrouter/v1, /mistral/v1, /qwen/v1, /glm/v1, /deepseek-anthropic/v1, /deepseek-anthropic, /kimi-anthropic/v1, /kimi-anthropic, /glm-anthropic/v1, /glm-anthropic`,
      )
    }
  })

  it("answers an unknown endpoint under a vendor's prefix with a 404 listing what it serves there", async () => {
    // The official Anthropic SDK given a base URL that already ends in /v1 posts here.
    const response = await fetch(`${server.url}/anthropic/v1/v1/messages`, { method: 'POST', body: '{}' })
    expect(response.status).toBe(404)
    const { error } = (await response.json()) as { error: { message: string } }
    expect(error.message).toBe(
      'no anthropic API at POST /anthropic/v1/v1/messages; under /anthropic/v1 and /anthropic the simulator serves POST /messages, GET /models, GET /models/{model}',
    )
  })

  it('lists the catalog models under every prefix of a vendor', async () => {
    const ids = async (path: string) => {
      const response = await fetch(`${server.url}${path}`)
      expect(response.status).toBe(200)
      return ((await response.json()) as { data: Array<{ id: string }> }).data.map(({ id }) => id)
    }
    expect(await ids('/anthropic/models')).toEqual(await ids('/anthropic/v1/models'))
    expect(await ids('/anthropic/v1/models')).toContain('claude-sonnet-4-6')
    expect(await ids('/deepseek/models')).toEqual(['deepseek-flash', 'deepseek-v4-pro'])
    expect(await ids('/deepseek/v1/models')).toEqual(['deepseek-flash', 'deepseek-v4-pro'])
    const model = await new OpenAI({ apiKey: secret, baseURL: server.baseURLs.openai }).models.retrieve(
      'gpt-5.4',
    )
    expect(model.id).toBe('gpt-5.4')
  })

  it("reaches every vendor its routes name: each route lists the models (a request is offered its own vendor's handlers)", async () => {
    const listed = await Promise.all(
      loopbackRoutes()
        .filter(({ vendor }) => vendor !== 'bedrock' && vendor !== 'gemini')
        .map(async ({ prefix }) => [prefix, (await fetch(`${server.url}${prefix}/models`)).status]),
    )
    expect(listed.length).toBeGreaterThan(10)
    expect(listed.filter(([, status]) => status !== 200)).toEqual([])
    expect((await fetch(`${server.url}/gemini/v1beta/models`)).status).toBe(200)
  })

  it('logs API calls only, not model listings', () => {
    expect(log.every((record) => !record.path.includes('/models'))).toBe(true)
  })
})

describe('cachelab serve --upstream live', () => {
  it('forwards to the provider, streams the answer back, and records usage without the key', async () => {
    const upstream = await startLoopback({ upstream: 'sim', port: 0 })
    const records: ServeLogRecord[] = []
    const proxy = await startLoopback({
      upstream: 'live',
      port: 0,
      liveBaseURLs: upstream.baseURLs,
      log: (record) => records.push(record),
    })
    try {
      const client = new OpenAI({ apiKey: secret, baseURL: proxy.baseURLs.openai, maxRetries: 0 })
      const stream = await client.chat.completions.create({
        model: 'gpt-5.4',
        messages: [{ role: 'user', content: 'hello' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      let usage: OpenAI.CompletionUsage | undefined | null
      for await (const chunk of stream) usage = chunk.usage ?? usage
      expect(usage?.prompt_tokens).toBeGreaterThan(0)
      expect(records[0]?.usage?.input).toBe(usage?.prompt_tokens)
      expect(JSON.stringify(records)).not.toContain(secret)

      // Every accepted prefix reaches the same real endpoint, and model listings pass through.
      const anthropic = await fetch(`${proxy.url}/anthropic/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': secret },
        body: JSON.stringify({
          model: 'claude-sonnet-4-6',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      })
      expect(anthropic.status).toBe(200)
      expect(records.at(-1)).toMatchObject({ vendor: 'anthropic', path: '/anthropic/messages', status: 200 })
      const models = await new OpenAI({
        apiKey: secret,
        baseURL: proxy.baseURLs.openai,
        maxRetries: 0,
      }).models.list()
      expect(models.data.map(({ id }) => id)).toContain('gpt-5.4')
    } finally {
      await proxy.close()
      await upstream.close()
    }
  })
})

describe('a model the catalog lacks', () => {
  it('is simulated as a named stand-in, told once and in every log record', async () => {
    const told: Array<[string, string]> = []
    const records: ServeLogRecord[] = []
    const standing = await startLoopback({
      upstream: 'sim',
      port: 0,
      log: (record) => records.push(record),
      onStandIn: (model, standIn) => told.push([model, standIn]),
    })
    try {
      const client = new Anthropic({ apiKey: secret, baseURL: standing.baseURLs.anthropic, maxRetries: 0 })
      for (const model of ['claude-opus-9-9', 'claude-opus-9-9', 'claude-sonnet-4-6'])
        await client.messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })
    } finally {
      await standing.close()
    }
    expect(told).toHaveLength(1)
    expect(told[0]?.[0]).toBe('claude-opus-9-9')
    expect(told[0]?.[1]).toMatch(/^claude-opus-/)
    expect(records.map((record) => record.simulatedAs)).toEqual([told[0]?.[1], told[0]?.[1], undefined])
  })
})

describe('keys a request carries besides its key headers', () => {
  it('are kept out of the capture, the session names, the log and a refusal that echoes them', async () => {
    const headerKey = 'plain-header-key-0001'
    const bodyKey = 'plain-body-key-0002'
    // An upstream that refuses the key, quoting it as OpenAI's 401 does.
    const echoing = createServer((request, response) => {
      request.resume()
      response.writeHead(401, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({
          error: { message: `Incorrect API key provided: ${request.headers.authorization}` },
        }),
      )
    })
    await new Promise<void>((resolve) => echoing.listen(0, '127.0.0.1', resolve))
    const echoingURL = `http://127.0.0.1:${(echoing.address() as AddressInfo).port}`
    const upstream = await startLoopback({ upstream: 'sim', port: 0 })
    const exchanges: CapturedExchange[] = []
    const records: ServeLogRecord[] = []
    const linearizer = new CacheSimulators()
    const proxy = await startLoopback({
      upstream: 'live',
      port: 0,
      liveBaseURLs: { ...upstream.baseURLs, deepseek: echoingURL },
      log: (record) => records.push(record),
      capture: new CaptureTracker({
        linearize: (api, body) => linearizer.linearize(api, body),
        keepBodies: true,
        keepAnswers: true,
        sink: (exchange) => exchanges.push(exchange),
      }),
    })
    try {
      const answers: string[] = []
      for (const [path, body] of [
        [
          '/openai/v1/chat/completions',
          {
            model: 'gpt-5.4',
            messages: [{ role: 'user', content: 'hello' }],
            api_key: bodyKey,
            extra_headers: { Authorization: `Bearer ${bodyKey}` },
            prompt_cache_key: bodyKey,
          },
        ],
        [
          '/anthropic/v1/messages',
          {
            model: 'claude-sonnet-4-6',
            max_tokens: 8,
            metadata: { user_id: headerKey },
            messages: [{ role: 'user', content: 'hi' }],
          },
        ],
        [
          '/deepseek/chat/completions',
          { model: 'deepseek-flash', messages: [{ role: 'user', content: 'hi' }] },
        ],
      ] as const) {
        const response = await fetch(`${proxy.url}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${headerKey}`,
            'x-api-key': headerKey,
          },
          body: JSON.stringify(body),
        })
        answers.push(`${response.status} ${await response.text()}`)
      }
      expect(answers.map((answer) => answer.slice(0, 3))).toEqual(['200', '200', '401'])
      expect(answers[2]).toContain('Incorrect API key provided: Bearer [redacted]')
      expect(exchanges).toHaveLength(3)
      expect(exchanges[0]?.request).toMatchObject({ api_key: '[redacted]', prompt_cache_key: '[redacted]' })
      expect(exchanges.map((exchange) => exchange.session)).toEqual([
        expect.stringMatching(/^key-[0-9a-f]{16}$/),
        expect.stringMatching(/^user-[0-9a-f]{16}$/),
        expect.any(String),
      ])
      for (const text of [JSON.stringify(exchanges), JSON.stringify(records), answers.join('\n')]) {
        expect(text).not.toContain(headerKey)
        expect(text).not.toContain(bodyKey)
      }
    } finally {
      await proxy.close()
      await upstream.close()
      await new Promise<void>((resolve) => echoing.close(() => resolve()))
    }
  })
})
