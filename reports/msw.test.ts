// The in-process mocks as a user's own test uses them: the official openai SDK at its default base URL,
// no cachelab header, the recorder's rows asserted with the matchers. docs/library.md's example is
// the same loop; a system prompt rewritten in place must fail naming the node and the lost tokens.

import { getResponse } from 'msw'
import OpenAI from 'openai'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { cachelabHandlers, startCachelabMocks } from './msw.ts'
import { cachelabMatchers } from './vitest.ts'

expect.extend(cachelabMatchers)
const mocks = startCachelabMocks()
afterAll(() => mocks.close())
beforeEach(() => {
  mocks.recorder.clear()
  mocks.context.reset()
})

const instructions = 'You write release notes: short, factual, one line per change. '.repeat(120)

/** The loop under test: four turns of a chat whose history only grows. */
async function agent(client: OpenAI, system: (turn: number) => string): Promise<void> {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = []
  for (let turn = 1; turn <= 4; turn += 1) {
    messages.push({ role: 'user', content: `What changed in release ${turn}?` })
    const reply = await client.chat.completions.create({
      model: 'gpt-5.4',
      messages: [{ role: 'system', content: system(turn) }, ...messages],
    })
    messages.push({ role: 'assistant', content: reply.choices[0]?.message.content ?? '' })
  }
}

describe('cachelab/msw: the recorder under a user test', () => {
  it('records one session, a row per request, with cache reads the SDK saw', async () => {
    await agent(new OpenAI({ apiKey: 'test-key' }), () => instructions)
    const rows = mocks.recorder.rows()
    expect(mocks.recorder.sessions()).toHaveLength(1)
    expect(rows.map((row) => `${row.turn}.${row.step}`)).toEqual(['1.1', '2.1', '3.1', '4.1'])
    expect(rows).toHaveNoBreakAbove(1024)
    expect(rows).toHoldHitRatio(0.9)
    expect(rows.at(-1)).toExtendPrevious()
  })

  it('fails on a system prompt rewritten in place, naming the node and the tokens lost', async () => {
    await agent(new OpenAI({ apiKey: 'test-key' }), (turn) =>
      turn < 3 ? instructions : `Today is release day. ${instructions}`,
    )
    const rows = mocks.recorder.rows()
    let message = ''
    try {
      expect(rows).toHaveNoBreakAbove(1024)
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toMatch(
      /capture · c-[0-9a-f]{8} · openai-chat 3\.1: system-replace at messages\[0\], [\d,]+ tokens lost/,
    )
  })
})

describe('cachelab/msw: lenient mocks', () => {
  /** A DeepSeek request with a `developer` message, which DeepSeek refuses. */
  const developerMessage = () =>
    new Request('https://api.deepseek.com/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'deepseek-flash',
        messages: [
          { role: 'developer', content: 'Be brief.' },
          { role: 'user', content: 'hello' },
        ],
      }),
    })

  it('refuse what the real API refuses by default and simulate it when lenient', async () => {
    const strict = cachelabHandlers()
    expect((await getResponse(strict.handlers, developerMessage()))?.status).toBe(400)
    expect(strict.recorder.exchanges().map((exchange) => exchange.status)).toEqual([400])

    const lenient = cachelabHandlers({ lenient: true })
    expect((await getResponse(lenient.handlers, developerMessage()))?.status).toBe(200)
    expect(lenient.recorder.rows()[0]?.inputTokens).toBeGreaterThan(0)
  })
})

describe('cachelab/msw: an idle gap made with advance under a memory budget', () => {
  const system = 'You review pull requests: name the risk first, then the fix. '.repeat(200)

  /** One more turn of session `session`'s Anthropic conversation, answered by `handlers`. */
  function conversation(handlers: ReturnType<typeof cachelabHandlers>['handlers'], session: string) {
    const messages: Array<{ role: string; content: string }> = []
    return async () => {
      messages.push({ role: 'user', content: `Review change ${messages.length / 2 + 1}.` })
      const response = await getResponse(
        handlers,
        new Request('https://api.anthropic.com/v1/messages', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-cachelab-session': session },
          body: JSON.stringify({
            model: 'claude-sonnet-4-6',
            max_tokens: 64,
            system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
            messages,
          }),
        }),
      )
      const answer = (await response?.json()) as { content: Array<{ text?: string }> }
      messages.push({ role: 'assistant', content: answer.content[0]?.text ?? 'OK.' })
    }
  }

  it('removes what expired at once, as the HTTP clock does, and the next request names ttl-expired with its tokens', async () => {
    const { handlers, context, recorder } = cachelabHandlers({
      clock: () => 0,
      simulator: { memoryBytes: 64 * 1024 * 1024 },
    })
    const send = conversation(handlers, 'review')
    await send()
    await send()
    context.advance(400)
    expect(context.simulators.pruneStats.bytes).toBe(0)
    await send()
    const [, left, after] = recorder.rows('review')
    const carried = (left?.cacheReadTokens ?? 0) + (left?.cacheWriteTokens ?? 0)
    expect(carried).toBeGreaterThan(2000)
    expect(after).toMatchObject({
      cacheReadTokens: 0,
      providerCause: 'ttl-expired',
      providerLostTokens: carried,
    })
  })
})
