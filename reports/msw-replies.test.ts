// Replies in a user's own tests: `startCachelabMocks({ replies })` answers the official SDKs at their
// default base URLs by session, turn and step — a declared session by its header, an inferred one by the
// `c-…` id the recorder gives it — and the recorder's rows count the reasoning as output.

import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { repliesFromRules } from '../providers/mock/reply-file.ts'
import { SESSION_HEADER } from '../providers/mock/script.ts'
import { startCachelabMocks } from './msw.ts'

const mocks = startCachelabMocks({
  replies: [
    { session: 'billing', turn: 1, refusal: 'I cannot share card numbers.' },
    { session: '*', turn: 1, text: 'Hello from the replies file.', reasoning: 24 },
  ],
})
afterAll(() => mocks.close())
beforeEach(() => mocks.recorder.clear())

const client = new OpenAI({ apiKey: 'test-key', maxRetries: 0 })

describe('startCachelabMocks({ replies })', () => {
  it('answers a declared session by its own rule and any other by the `*` rule', async () => {
    const ask = (session?: string) =>
      client.chat.completions.create(
        { model: 'gpt-5.4', messages: [{ role: 'user', content: 'What is on my card?' }] },
        session === undefined ? {} : { headers: { [SESSION_HEADER]: session } },
      )
    const refused = await ask('billing')
    expect(refused.choices[0]?.message.refusal).toBe('I cannot share card numbers.')
    expect(refused.choices[0]?.message.content).toBeNull()
    const other = await ask()
    expect(other.choices[0]?.message.content).toBe('Hello from the replies file.')
    expect(other.usage?.completion_tokens_details?.reasoning_tokens).toBe(24)
    expect(mocks.recorder.exchanges().map((exchange) => exchange.usage?.reasoning)).toEqual([0, 24])
  })

  it('answers an inferred session by the id the recorder gave it', async () => {
    const anthropic = new Anthropic({ apiKey: 'test-key', maxRetries: 0 })
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: 'Draft the changelog.' }]
    const first = await anthropic.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 512,
      messages: history,
    })
    const [session] = mocks.recorder.sessions()
    expect(session).toMatch(/^c-[0-9a-f]{8}$/)
    if (session === undefined) throw new Error('no session recorded')
    mocks.context.replies = repliesFromRules([{ session, turn: 2, text: 'Turn two, for this session only.' }])
    history.push({ role: 'assistant', content: first.content }, { role: 'user', content: 'Shorter.' })
    const second = await anthropic.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 512,
      messages: history,
    })
    expect(second.content).toEqual([{ type: 'text', text: 'Turn two, for this session only.' }])
    expect(mocks.recorder.rows().map((row) => `${row.turn}.${row.step}`)).toEqual(['1.1', '2.1'])
  })
})
