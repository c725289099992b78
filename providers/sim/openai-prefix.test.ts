import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { floorToIncrement, OpenAICacheSimulator } from './openai.ts'

const reply: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }

const textOf = (count: number, seed: string | number = 'alpha') => fillerText(count, seed)

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

  it('still reads a prefix another request keeps for 24h after a 5-minute request over it has gone idle', () => {
    const sim = new OpenAICacheSimulator()
    const system = textOf(3000)
    sim.simulate('chat', { body: body(system, 'a', { prompt_cache_retention: '24h' }), at: 0, output: reply })
    // The same message objects, as a session's next request carries them (the linearizer reuses their segments).
    const second = body(system, 'b')
    const extended = { ...second, messages: [...second.messages, { role: 'user', content: 'more' }] }
    sim.simulate('chat', { body: second, at: 10, output: reply })
    const late = sim.simulate('chat', { body: extended, at: 410, output: reply })
    expect(late.counts.read).toBeGreaterThanOrEqual(2944)
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

describe('OpenAI caches per model', () => {
  it('never serves one model a prefix another model cached on the same machine', () => {
    const messages = [
      { role: 'system', content: textOf(3000) },
      { role: 'user', content: 'hi' },
    ]
    // Find a cache key that routes both models to the same machine.
    let key = ''
    for (let index = 0; index < 2000 && key === ''; index += 1) {
      const probe = new OpenAICacheSimulator()
      const one = probe.simulate('chat', {
        body: { model: 'gpt-5.4', messages, prompt_cache_key: `k${index}` },
        at: 0,
        output: reply,
      })
      const two = probe.simulate('chat', {
        body: { model: 'gpt-5.4-mini', messages, prompt_cache_key: `k${index}` },
        at: 0,
        output: reply,
      })
      if (one.trace.machine === two.trace.machine) key = `k${index}`
    }
    expect(key).not.toBe('')
    const sim = new OpenAICacheSimulator()
    sim.simulate('chat', {
      body: { model: 'gpt-5.4', messages, prompt_cache_key: key },
      at: 0,
      output: reply,
    })
    const other = sim.simulate('chat', {
      body: { model: 'gpt-5.4-mini', messages, prompt_cache_key: key },
      at: 1,
      output: reply,
    })
    expect(other.counts.read).toBe(0)
  })
})

// ── Properties over random append-only conversations ──────────────────────────────────────────────

interface Step {
  userTokens: number
  replyTokens: number
  toolCall: boolean
  /** Idle seconds after the step, within the 300-second idle eviction. */
  gap: number
  seed: number
}

const step: fc.Arbitrary<Step> = fc.record({
  userTokens: fc.integer({ min: 1, max: 700 }),
  replyTokens: fc.integer({ min: 1, max: 200 }),
  toolCall: fc.boolean(),
  gap: fc.integer({ min: 0, max: 290 }),
  seed: fc.integer({ min: 0, max: 1_000_000 }),
})
const conversations = fc.record({
  systemTokens: fc.integer({ min: 0, max: 2500 }),
  key: fc.constantFrom(undefined, 'session-a', 'session-b'),
  steps: fc.array(step, { minLength: 1, maxLength: 8 }),
})

/** Simulate a Chat conversation where each request extends the previous one by its reply and a new message. */
function converse(
  sim: OpenAICacheSimulator,
  model: string,
  conversation: { systemTokens: number; key: string | undefined; steps: Step[] },
) {
  const messages: Array<Record<string, unknown>> = []
  if (conversation.systemTokens > 0)
    messages.push({ role: 'system', content: textOf(conversation.systemTokens, 'property') })
  let at = 0
  return conversation.steps.map((current, index) => {
    messages.push({ role: 'user', content: textOf(current.userTokens, current.seed) })
    const text = textOf(current.replyTokens, current.seed + 1)
    const output: AssistantMessage = {
      role: 'assistant',
      content: [
        { type: 'text', text },
        ...(current.toolCall
          ? [{ type: 'tool-call' as const, callId: `call_${index}`, name: 'grep', arguments: '{}' }]
          : []),
      ],
    }
    const request = {
      model,
      messages: [...messages],
      ...(conversation.key !== undefined ? { prompt_cache_key: conversation.key } : {}),
    }
    const simulation = sim.simulate('chat', { body: request, at, output })
    messages.push({
      role: 'assistant',
      content: text,
      ...(current.toolCall
        ? {
            tool_calls: [
              { id: `call_${index}`, type: 'function', function: { name: 'grep', arguments: '{}' } },
            ],
          }
        : {}),
    })
    if (current.toolCall) messages.push({ role: 'tool', tool_call_id: `call_${index}`, content: 'no match' })
    at += current.gap
    return simulation
  })
}

for (const model of ['gpt-5.4', 'gpt-5.6-sol']) {
  describe(`OpenAI simulator properties (${model})`, () => {
    it('splits every request into buckets that sum to its input', () => {
      fc.assert(
        fc.property(conversations, (conversation) => {
          for (const { counts } of converse(new OpenAICacheSimulator(), model, conversation)) {
            expect(counts.read + counts.write + counts.uncached).toBe(counts.input)
            expect(Math.min(counts.read, counts.write, counts.uncached)).toBeGreaterThanOrEqual(0)
          }
        }),
        { numRuns: 30 },
      )
    })

    it('gives identical usage for identical input', () => {
      fc.assert(
        fc.property(conversations, (conversation) => {
          const one = converse(new OpenAICacheSimulator(), model, conversation).map((result) => result.counts)
          const two = converse(new OpenAICacheSimulator(), model, conversation).map((result) => result.counts)
          expect(two).toEqual(one)
        }),
        { numRuns: 20 },
      )
    })

    it("never reads less than the previous request's carry on an append-only step within the TTL", () => {
      fc.assert(
        fc.property(conversations, (conversation) => {
          const results = converse(new OpenAICacheSimulator(), model, conversation)
          for (let index = 1; index < results.length; index += 1) {
            const carry = results[index - 1]?.trace.carry.tokens ?? 0
            expect(results[index]?.counts.read).toBeGreaterThanOrEqual(carry)
          }
        }),
        { numRuns: 30 },
      )
    })
  })
}
