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
