import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { type LoopbackServer, type ServeLogRecord, startLoopback } from './loopback.ts'

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

  it('answers unknown paths with 404', async () => {
    const response = await fetch(`${server.url}/nowhere`, { method: 'POST', body: '{}' })
    expect(response.status).toBe(404)
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
    } finally {
      await proxy.close()
      await upstream.close()
    }
  })
})
