import { describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { floorToIncrement, OpenAICacheSimulator } from './openai.ts'

const reply: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }

const textOf = (count: number, seed = 'alpha') => fillerText(count, seed)

function body(system: string, user = 'hello', extra: Record<string, unknown> = {}) {
  return {
    model: 'gpt-5.4',
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    ...extra,
  }
}

describe('OpenAI automatic prefix cache (before GPT-5.6)', () => {
  it('floors matches to the 1024-token minimum and 128-token increments', () => {
    expect(floorToIncrement(1023, 1024, 128)).toBe(0)
    expect(floorToIncrement(1024, 1024, 128)).toBe(1024)
    expect(floorToIncrement(2006, 1024, 128)).toBe(1920)
  })

  it("reproduces the guide's example: a repeated 2,006-token prompt reads 1,920", () => {
    const sim = new OpenAICacheSimulator()
    // 2,006 tokens in all: two messages of 3 framing tokens, the user text, and 3 priming tokens.
    const request = body(textOf(2006 - 3 - 3 - 1 - 3), 'hi')
    const first = sim.simulate('chat', { body: request, at: 0, output: reply })
    expect(first.counts.input).toBe(2006)
    expect(first.counts.read).toBe(0)
    const second = sim.simulate('chat', { body: request, at: 10, output: reply })
    expect(second.counts.read).toBe(1920)
    expect(second.counts.uncached).toBe(86)
  })

  it('reads nothing below 1,024 tokens', () => {
    const sim = new OpenAICacheSimulator()
    const request = body(textOf(900))
    sim.simulate('chat', { body: request, at: 0, output: reply })
    const again = sim.simulate('chat', { body: request, at: 1, output: reply })
    expect(again.counts.read).toBe(0)
    expect(again.trace.shortfall).toBe('below-minimum')
  })

  it('reads nothing when one early byte of the system prompt changes', () => {
    const sim = new OpenAICacheSimulator()
    const system = textOf(3000)
    sim.simulate('chat', { body: body(system), at: 0, output: reply })
    const changed = `X${system.slice(1)}`
    const next = sim.simulate('chat', { body: body(changed), at: 5, output: reply })
    expect(next.counts.read).toBe(0)
  })

  it('matches partway into a message when its text diverges late', () => {
    const sim = new OpenAICacheSimulator()
    const document = textOf(3000)
    sim.simulate('chat', { body: body('sys', `${document} Summarize it.`), at: 0, output: reply })
    const next = sim.simulate('chat', {
      body: body('sys', `${document} Analyze its profit.`),
      at: 5,
      output: reply,
    })
    expect(next.counts.read).toBeGreaterThanOrEqual(2944)
    expect(next.counts.read % 128).toBe(0)
  })

  it('evicts a prefix idle past the eviction time and says so', () => {
    const sim = new OpenAICacheSimulator()
    const request = body(textOf(3000))
    sim.simulate('chat', { body: request, at: 0, output: reply })
    const late = sim.simulate('chat', { body: request, at: 301, output: reply })
    expect(late.counts.read).toBe(0)
    expect(late.trace.shortfall).toBe('ttl-expired')
  })

  it("keeps a prefix for a day with prompt_cache_retention '24h'", () => {
    const sim = new OpenAICacheSimulator()
    const request = body(textOf(3000), 'hello', { prompt_cache_retention: '24h' })
    sim.simulate('chat', { body: request, at: 0, output: reply })
    const late = sim.simulate('chat', { body: request, at: 3 * 3600, output: reply })
    expect(late.counts.read).toBeGreaterThan(2900)
  })

  it('routes by prompt_cache_key: another key lands on another machine and misses', () => {
    const sim = new OpenAICacheSimulator()
    const system = textOf(3000)
    const first = sim.simulate('chat', {
      body: body(system, 'hi', { prompt_cache_key: 'a' }),
      at: 0,
      output: reply,
    })
    let other = 'b'
    for (let index = 0; index < 50; index += 1) {
      other = `b${index}`
      const probe = new OpenAICacheSimulator().simulate('chat', {
        body: body(system, 'hi', { prompt_cache_key: other }),
        at: 0,
        output: reply,
      })
      if (probe.trace.machine !== first.trace.machine) break
    }
    const miss = sim.simulate('chat', {
      body: body(system, 'hi', { prompt_cache_key: other }),
      at: 1,
      output: reply,
    })
    expect(miss.counts.read).toBe(0)
    const hit = sim.simulate('chat', {
      body: body(system, 'hi', { prompt_cache_key: 'a' }),
      at: 2,
      output: reply,
    })
    expect(hit.counts.read).toBeGreaterThan(2900)
  })
})
