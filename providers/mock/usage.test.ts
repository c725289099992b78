// GPT-5.6 usage, settled from the documentation: reads in `cached_tokens`, writes in
// `cache_write_tokens`, disjoint, both inside `prompt_tokens` / `input_tokens`. The mock must say so in
// every API shape, streamed or not, and the normalization must read it back into disjoint buckets.

import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { parseOpenAIUsage } from '../openai-chat.ts'
import type { SimCounts } from '../sim/types.ts'
import { type LoopbackServer, startLoopback } from './loopback.ts'

let server: LoopbackServer
const served: SimCounts[] = []
beforeAll(async () => {
  server = await startLoopback({ upstream: 'sim', port: 0 })
  if (server.context === undefined) throw new Error('a sim server has a context')
  server.context.observer = (call) => {
    if (call.simulation !== undefined) served.push(call.simulation.counts)
  }
})
afterAll(() => server.close())

const MODEL = 'gpt-5.6-sol'

type Details = { cached_tokens?: number; cache_write_tokens?: number }

/** Two requests of one conversation: the second reads the first's prefix and writes its own extension. */
async function twoTurns(
  send: (texts: string[]) => Promise<{ input: number; details: Details | undefined; raw: unknown }>,
) {
  const label = `usage-${served.length}`
  const first = await send([fillerText(2000, `${label}-system`), 'first question'])
  const second = await send([
    fillerText(2000, `${label}-system`),
    'first question',
    fillerText(1500, `${label}-more`),
  ])
  return [first, second]
}

describe('GPT-5.6 usage: reads and writes are disjoint parts of the input, in every API shape', () => {
  const client = () => new OpenAI({ apiKey: 'test-key', baseURL: server.baseURLs.openai, maxRetries: 0 })
  const key = { prompt_cache_key: 'usage-semantics' }

  const chat = (stream: boolean) => async (texts: string[]) => {
    const messages = texts.map((text, index) => ({
      role: index === 0 ? ('system' as const) : ('user' as const),
      content: text,
    }))
    if (!stream) {
      const reply = await client().chat.completions.create({ model: MODEL, messages, ...key })
      const usage = reply.usage
      return {
        input: usage?.prompt_tokens ?? 0,
        details: usage?.prompt_tokens_details as Details,
        raw: usage,
      }
    }
    const chunks = await client().chat.completions.create({
      model: MODEL,
      messages,
      ...key,
      stream: true,
      stream_options: { include_usage: true },
    })
    let usage: OpenAI.CompletionUsage | undefined
    for await (const chunk of chunks) usage = chunk.usage ?? usage
    return { input: usage?.prompt_tokens ?? 0, details: usage?.prompt_tokens_details as Details, raw: usage }
  }
  const responses = (stream: boolean) => async (texts: string[]) => {
    const [instructions, ...rest] = texts
    const request = {
      model: MODEL,
      instructions: instructions ?? '',
      input: rest.map((text) => ({ role: 'user' as const, content: text })),
      ...key,
    }
    const response = stream
      ? await client().responses.stream(request).finalResponse()
      : await client().responses.create(request)
    const usage = response.usage
    return { input: usage?.input_tokens ?? 0, details: usage?.input_tokens_details as Details, raw: usage }
  }

  for (const [name, send] of [
    ['Chat Completions', chat(false)],
    ['Chat Completions, streamed', chat(true)],
    ['Responses', responses(false)],
    ['Responses, streamed', responses(true)],
  ] as const) {
    it(`${name}: cached_tokens are the reads, cache_write_tokens the writes, and they never overlap`, async () => {
      const before = served.length
      const replies = await twoTurns(send)
      const counts = served.slice(before)
      expect(counts).toHaveLength(2)
      for (const [index, reply] of replies.entries()) {
        const simulated = counts[index] as SimCounts
        expect(reply.input).toBe(simulated.input)
        expect(reply.details?.cached_tokens).toBe(simulated.read)
        expect(reply.details?.cache_write_tokens).toBe(simulated.write)
        const usage = parseOpenAIUsage(reply.raw)
        expect((usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0) + usage.uncached).toBe(reply.input)
      }
      // The second request both reads and writes: the case where the two readings of the fields differ.
      const second = counts[1] as SimCounts
      expect(second.read).toBeGreaterThan(0)
      expect(second.write).toBeGreaterThan(0)
    })
  }
})
