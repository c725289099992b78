import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { CompatibleProviderId } from '../../harness/types.ts'
import { compatibleProvider, SHIPPED_COMPATIBLE_IDS } from '../compatible.ts'
import { type LoopbackServer, type ServeLogRecord, startLoopback } from './loopback.ts'
import { TIME_HEADER } from './script.ts'

let server: LoopbackServer
const log: ServeLogRecord[] = []

beforeAll(async () => {
  server = await startLoopback({ upstream: 'sim', port: 0, log: (record) => log.push(record) })
})
afterAll(() => server.close())

const client = (base: string) =>
  new Anthropic({ apiKey: 'cachelab-simulated-key', baseURL: base, maxRetries: 0 })
const system = fillerText(1500, 'compatible-system')

/** A growing conversation: `turns` user messages, the system text marked for caching. */
function conversation(turns: number, marked: boolean): Anthropic.MessageCreateParamsNonStreaming {
  const messages: Anthropic.MessageParam[] = []
  for (let turn = 0; turn < turns; turn += 1) {
    if (turn > 0) messages.push({ role: 'assistant', content: 'OK.' })
    messages.push({ role: 'user', content: `Question ${turn}. ${fillerText(100, `turn-${turn}`)}` })
  }
  return {
    model: 'deepseek-flash',
    max_tokens: 64,
    system: [
      { type: 'text', text: system, ...(marked ? { cache_control: { type: 'ephemeral' as const } } : {}) },
    ],
    messages,
  }
}

describe('the vendors’ Anthropic-compatible endpoints under serve', () => {
  it('ships each with an id ending in -anthropic, the messages wire and sources', () => {
    const ids = SHIPPED_COMPATIBLE_IDS.filter((id) => id.endsWith('-anthropic'))
    expect(ids).toEqual(['deepseek-anthropic', 'kimi-anthropic', 'glm-anthropic'])
    for (const id of ids) {
      const provider = compatibleProvider(id as CompatibleProviderId)
      expect(provider.wire).toBe('messages')
      expect(provider.sources.length).toBeGreaterThan(0)
      expect(server.baseURL(provider.id)).toBe(`${server.url}/${id}`)
    }
  })

  it('DeepSeek: the Anthropic SDK gets the automatic prefix cache in 64-token units, cache_control ignored', async () => {
    const deepseek = client(`${server.url}/deepseek-anthropic`)
    const first = await deepseek.messages.create(conversation(1, false), { headers: { [TIME_HEADER]: '0' } })
    // Nothing cached yet, and no write is reported: DeepSeek bills no writes.
    expect(first.usage.cache_read_input_tokens).toBe(0)
    expect(first.usage.cache_creation_input_tokens).toBe(0)
    const second = await deepseek.messages.create(conversation(2, false), {
      headers: { [TIME_HEADER]: '10' },
    })
    const read = second.usage.cache_read_input_tokens ?? 0
    expect(read).toBeGreaterThan(first.usage.input_tokens - 64)
    expect(read % 64).toBe(0)
    expect(second.usage.cache_creation_input_tokens).toBe(0)
    // The same requests with a cache mark on the system text read exactly the same: the mark is ignored.
    const again = await deepseek.messages.create(conversation(2, true), { headers: { [TIME_HEADER]: '20' } })
    expect(again.usage.cache_read_input_tokens).toBe(Math.floor((read + second.usage.input_tokens) / 64) * 64)
    expect(again.usage.cache_creation_input_tokens).toBe(0)
  })

  it('Anthropic’s own endpoint, beside it, writes the marked prefix and reads nothing unmarked', async () => {
    const anthropic = client(`${server.url}/anthropic`)
    const body = { ...conversation(1, true), model: 'claude-sonnet-4-6' }
    const marked = await anthropic.messages.create(body, { headers: { [TIME_HEADER]: '0' } })
    expect(marked.usage.cache_creation_input_tokens).toBeGreaterThan(1000)
    const plain = { ...conversation(1, false), model: 'claude-haiku-4-5' }
    await anthropic.messages.create(plain, { headers: { [TIME_HEADER]: '1' } })
    const unmarked = await anthropic.messages.create(plain, { headers: { [TIME_HEADER]: '2' } })
    expect(unmarked.usage.cache_read_input_tokens).toBe(0)
  })

  it('logs the request under the provider, with usage normalized from Anthropic’s fields', async () => {
    const glm = client(`${server.url}/glm-anthropic`)
    await glm.messages.create(
      { ...conversation(1, true), model: 'glm-4.6' },
      { headers: { [TIME_HEADER]: '0' } },
    )
    const record = log.find((entry) => entry.vendor === 'glm-anthropic')
    expect(record?.status).toBe(200)
    expect(record?.usage?.cacheRead).toBe(0)
    expect(record?.usage?.uncached).toBeGreaterThan(1000)
  })

  it('Claude Code’s billing block costs the prefix at DeepSeek, where Anthropic strips it', async () => {
    const billed = (cch: string, model: string): Anthropic.MessageCreateParamsNonStreaming => ({
      ...conversation(1, true),
      model,
      system: [
        {
          type: 'text',
          text: `x-anthropic-billing-header: cc_version=2.1.328.abc; cc_entrypoint=cli; cch=${cch};`,
        },
        { type: 'text', text: system, cache_control: { type: 'ephemeral' } },
      ],
    })
    const reads = async (base: string, model: string, at: number) => {
      const api = client(`${server.url}/${base}`)
      await api.messages.create(billed('aaaaa', model), { headers: { [TIME_HEADER]: String(at) } })
      const second = await api.messages.create(billed('bbbbb', model), {
        headers: { [TIME_HEADER]: String(at + 1) },
      })
      return second.usage.cache_read_input_tokens ?? 0
    }
    // Another conversation's block (another cch) shares the whole system text after it.
    expect(await reads('deepseek-anthropic', 'deepseek-v4-pro', 100)).toBe(0)
    expect(await reads('anthropic', 'claude-opus-4-8', 100)).toBeGreaterThan(1000)
  })
})
