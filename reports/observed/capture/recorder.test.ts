import { describe, expect, it } from 'vitest'
import { MockContext } from '../../../providers/mock/context.ts'
import { readMockRequest } from '../../../providers/mock/request.ts'
import type { CapturedExchange } from '../../../providers/wire/exchange.ts'
import { recordContext } from './recorder.ts'

const body = (messages: unknown[]) => ({
  model: 'claude-sonnet-4-6',
  max_tokens: 64,
  system: 'You are terse. '.repeat(400),
  cache_control: { type: 'ephemeral' },
  messages,
})

async function serve(context: MockContext, payload: Record<string, unknown>) {
  const request = await readMockRequest(
    new Request('https://api.anthropic.com/v1/messages', { method: 'POST', body: JSON.stringify(payload) }),
    context,
  )
  if ('problem' in request) throw new Error(request.problem)
  return context.simulate('anthropic-messages', request)
}

describe('recording what a mock context serves', () => {
  it('tells requests into sessions before simulating them, so each has its counterfactual', async () => {
    const context = new MockContext()
    const recorded: CapturedExchange[] = []
    recordContext(context, (exchange) => recorded.push(exchange))
    await serve(context, body([{ role: 'user', content: 'first' }]))
    await serve(
      context,
      body([
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'second' },
      ]),
    )
    expect(recorded.map((exchange) => exchange.session)).toEqual([recorded[0]?.session, recorded[0]?.session])
    expect(recorded[0]?.simulation?.counterfactual).toBeUndefined()
    expect(recorded[1]?.simulation?.counterfactual?.ideal).toBe(recorded[1]?.usage?.cacheRead)
    // The usage is the one the handler answers with, read back through the vendor's parser.
    expect(recorded[1]?.usage?.cacheRead).toBe(recorded[1]?.simulation?.counts.read)
    expect(recorded[1]?.usage?.input).toBe(recorded[1]?.simulation?.counts.input)
  })

  it('records a request the provider refuses as a failed attempt', async () => {
    const context = new MockContext()
    const recorded: CapturedExchange[] = []
    recordContext(context, (exchange) => recorded.push(exchange))
    const bad = body([{ role: 'user', content: 'x' }])
    bad.cache_control = { type: 'ephemeral', ttl: '7m' } as never
    await serve(context, bad)
    expect(recorded[0]).toMatchObject({ status: 400, attempt: 0 })
    expect(recorded[0]?.usage).toBeUndefined()
  })
})
