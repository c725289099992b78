// Faults and virtual time in process (`cachelab/msw`), as a user's test uses them: the schedule given to
// `startCachelabMocks`, an idle gap made with `mocks.advance`, the official SDKs at their default hosts.

import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { fillerText } from '../harness/filler.ts'
import { startCachelabMocks } from './msw.ts'

const mocks = startCachelabMocks({
  faults: [
    {
      session: '*',
      sessionRequest: 2,
      provider: 'openai-chat',
      fault: { kind: 'rate-limit', retryAfterMs: 5 },
    },
  ],
})
afterAll(() => mocks.close())
beforeEach(() => {
  mocks.recorder.clear()
  mocks.context.reset()
})

const system = fillerText(2000, 'msw-faults-system')

describe('cachelab/msw faults and virtual time', () => {
  it('fails the second request of each session as scheduled; the SDK retries it and the rows show both attempts', async () => {
    const client = new OpenAI({ apiKey: 'test-key' })
    for (const name of ['first', 'second']) {
      const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
        { role: 'system', content: `${name} ${system}` },
      ]
      for (const turn of [1, 2]) {
        messages.push({ role: 'user', content: `${name} question ${turn}` })
        const reply = await client.chat.completions.create({ model: 'gpt-5.4', messages })
        messages.push({ role: 'assistant', content: reply.choices[0]?.message.content ?? '' })
      }
    }
    const rows = mocks.recorder.rows()
    expect(mocks.recorder.sessions()).toHaveLength(2)
    expect(
      rows.map(
        (row) => `${row.variant === rows[0]?.variant ? 'A' : 'B'} ${row.turn}.${row.step}/${row.attempt}`,
      ),
    ).toEqual(['A 1.1/0', 'A 2.1/0', 'A 2.1/1', 'B 1.1/0', 'B 2.1/0', 'B 2.1/1'])
    expect(mocks.recorder.exchanges().map((exchange) => exchange.status)).toEqual([
      200, 429, 200, 200, 429, 200,
    ])
  })

  it('expires the 5-minute Anthropic cache when the test advances the clock 6 minutes, and only then', async () => {
    const client = new Anthropic({ apiKey: 'test-key' })
    const conversation = async (idle: number) => {
      const messages: Anthropic.MessageParam[] = []
      for (const turn of [1, 2]) {
        if (turn === 2) mocks.advance(idle)
        messages.push({ role: 'user', content: `Question ${turn} after ${idle} seconds` })
        const reply = await client.messages.create({
          model: 'claude-sonnet-4-6',
          max_tokens: 64,
          system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
          messages: [...messages],
        })
        messages.push({ role: 'assistant', content: reply.content })
      }
      return mocks.recorder.rows().at(-1)
    }
    expect(await conversation(0)).toMatchObject({ providerCause: undefined })
    mocks.context.reset()
    expect(await conversation(360)).toMatchObject({ cacheReadTokens: 0, providerCause: 'ttl-expired' })
    expect(mocks.context.advanced).toBe(360)
  })

  it('fails a request with an x-cachelab-fault header once, and the SDK retry is served', async () => {
    const client = new Anthropic({ apiKey: 'test-key' })
    await client.messages.create(
      { model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-cachelab-fault': '529' } },
    )
    expect(mocks.recorder.exchanges().map((exchange) => [exchange.status, exchange.attempt])).toEqual([
      [529, 0],
      [200, 1],
    ])
  })
})
