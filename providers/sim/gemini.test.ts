import { describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { findModel, type GeminiCacheRules, withCacheRules } from '../catalog.ts'
import { firstDivergence } from './counterfactual.ts'
import { GeminiCacheSimulator } from './gemini.ts'
import { linearizeGemini } from './linearize-gemini.ts'
import { describeNode } from './prompt.ts'
import { sharedTokenCounter } from './tokens.ts'
import { SimulatorRejection } from './types.ts'

const output: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'OK.' }] }
const flash = findModel('gemini', 'gemini-2.5-flash')

/** A body of `turns` user turns after a system instruction of `systemTokens` tokens. */
function body(turns: number, systemTokens = 3000, model = 'gemini-2.5-flash'): Record<string, unknown> {
  const contents: unknown[] = []
  for (let turn = 0; turn < turns; turn += 1) {
    if (turn > 0) contents.push({ role: 'model', parts: [{ text: 'OK.' }] })
    contents.push({ role: 'user', parts: [{ text: `Turn ${turn}. ${fillerText(200, turn)}` }] })
  }
  return { model, systemInstruction: { parts: [{ text: fillerText(systemTokens, 'system') }] }, contents }
}

describe('the Gemini implicit cache', () => {
  it('reads the whole previous prompt of an append-only conversation, writes nothing and bills the rest uncached', () => {
    const simulator = new GeminiCacheSimulator()
    const first = simulator.simulate({ body: body(1), at: 0, output })
    const second = simulator.simulate({ body: body(2), at: 30, output, previous: { prompt: first.prompt } })
    expect(first.counts.read).toBe(0)
    expect(second.counts.read).toBe(first.prompt.total - first.prompt.trailing)
    expect(second.counts.write).toBe(0)
    expect(second.counts.read + second.counts.uncached).toBe(second.counts.input)
    expect(second.trace.counterfactual).toEqual({ ideal: second.counts.read, warm: second.counts.read })
  })

  it('reads nothing below the model minimum, and names the minimum as the reason', () => {
    const simulator = new GeminiCacheSimulator()
    simulator.simulate({ body: body(1, 1200), at: 0, output })
    const again = simulator.simulate({ body: body(1, 1200), at: 10, output })
    expect(again.counts.read).toBe(0)
    expect(again.trace.shortfall).toBe('below-minimum')
  })

  it('follows the dated minimum the catalog is given: the launch page cached 1,024 tokens on 2.5 Flash', () => {
    const rules = flash?.cache as GeminiCacheRules
    expect(rules.minimums.map((minimum) => [minimum.date, minimum.minTokens])).toEqual([
      ['2025-05-08', 1024],
      ['2026-05-07', 1024],
      ['2026-07-07', 2048],
    ])
    const launch = withCacheRules<GeminiCacheRules>(flash as NonNullable<typeof flash>, { minTokens: 1024 })
    const simulator = new GeminiCacheSimulator({ models: [launch] })
    simulator.simulate({ body: body(1, 1200), at: 0, output })
    expect(simulator.simulate({ body: body(1, 1200), at: 10, output }).counts.read).toBeGreaterThan(1024)
  })

  it('forgets a prefix not sent for five minutes (the assumed lifetime), and renews it on every read', () => {
    const simulator = new GeminiCacheSimulator()
    const first = simulator.simulate({ body: body(1), at: 0, output })
    expect(simulator.simulate({ body: body(1), at: 290, output }).counts.read).toBeGreaterThan(0)
    expect(simulator.simulate({ body: body(1), at: 580, output }).counts.read).toBeGreaterThan(0)
    const late = simulator.simulate({ body: body(2), at: 900, output, previous: { prompt: first.prompt } })
    expect(late.counts.read).toBe(0)
    expect(late.trace.shortfall).toBe('ttl-expired')
    expect(late.trace.counterfactual?.cause).toBe('ttl-expired')
  })

  it('renews a growing session whole, and a sibling renews only the prefix it shares (the shared renewal)', () => {
    const sibling = (): Record<string, unknown> => ({
      ...body(1),
      contents: [{ role: 'user', parts: [{ text: `A sibling. ${fillerText(200, 'sibling')}` }] }],
    })
    // One session grows (each insert extends the last: the shared state), then a sibling leaves it.
    const simulator = new GeminiCacheSimulator()
    simulator.simulate({ body: body(1), at: 0, output })
    simulator.simulate({ body: body(2), at: 100, output })
    simulator.simulate({ body: body(3), at: 200, output })
    simulator.simulate({ body: sibling(), at: 250, output })
    // 290 s after the session's last request, 490 after its first: its first turns were renewed at 200.
    const renewed = simulator.simulate({ body: body(3), at: 490, output })
    expect(renewed.counts.read).toBe(renewed.prompt.total - renewed.prompt.trailing)
    // 320 s after the session's last request: only the system instruction, renewed by the sibling, lives.
    const later = new GeminiCacheSimulator()
    later.simulate({ body: body(1), at: 0, output })
    later.simulate({ body: body(2), at: 100, output })
    later.simulate({ body: body(3), at: 200, output })
    later.simulate({ body: sibling(), at: 250, output })
    const expired = later.simulate({ body: body(3), at: 520, output })
    // The same store without the growth: the session's turns, first sent at 0, have all expired.
    const headOnly = new GeminiCacheSimulator()
    headOnly.simulate({ body: body(1), at: 0, output })
    headOnly.simulate({ body: sibling(), at: 250, output })
    const expected = headOnly.simulate({ body: body(3), at: 520, output }).counts.read
    expect(expected).toBeGreaterThan(0)
    expect(expected).toBeLessThan(renewed.counts.read)
    expect(expired.counts.read).toBe(expected)
    expect(expired.trace.shortfall).toBe('ttl-expired')
  })

  it('misses a hit now and then only when seeded (no cost saving guarantee)', () => {
    const always = withCacheRules<GeminiCacheRules>(flash as NonNullable<typeof flash>, {
      implicitMissRate: 1,
    })
    const unseeded = new GeminiCacheSimulator({ models: [always] })
    unseeded.simulate({ body: body(1), at: 0, output })
    expect(unseeded.simulate({ body: body(1), at: 10, output }).counts.read).toBeGreaterThan(0)
    const seeded = new GeminiCacheSimulator({ models: [always], seed: 7 })
    seeded.simulate({ body: body(1), at: 0, output })
    const missed = seeded.simulate({ body: body(1), at: 10, output })
    expect(missed.counts.read).toBe(0)
    expect(missed.trace.shortfall).toBe('routing-miss')
  })

  it('keeps the models apart: a prefix sent to 2.5 Flash is not read on 2.5 Pro', () => {
    const simulator = new GeminiCacheSimulator()
    simulator.simulate({ body: body(1), at: 0, output })
    expect(simulator.simulate({ body: body(1, 3000, 'gemini-2.5-pro'), at: 10, output }).counts.read).toBe(0)
  })
})

describe('thought signatures in the Gemini prompt', () => {
  /** A tool round after the system instruction: the model's call, `signature` on it, and its result. */
  function toolRound(signature?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const { systemInstruction, contents } = body(1, 5000)
    const call = {
      functionCall: { name: 'read_file', args: { path: 'README.md' } },
      ...(signature !== undefined ? { thoughtSignature: signature } : {}),
      ...extra,
    }
    return {
      model: 'gemini-3.5-flash',
      systemInstruction,
      contents: [
        ...(contents as unknown[]),
        { role: 'model', parts: [call] },
        {
          role: 'user',
          parts: [{ functionResponse: { name: 'read_file', response: { output: '# cachelab' } } }],
        },
      ],
    }
  }
  const prompt = (request: Record<string, unknown>) => linearizeGemini(request, sharedTokenCounter, 1)

  it('is content the client sends back: it costs input tokens, and the same signature gives the same prompt', () => {
    const signed = prompt(toolRound('CiQBjz1rX2E='))
    expect(signed.total).toBeGreaterThan(prompt(toolRound()).total)
    expect(prompt(toolRound('CiQBjz1rX2E='))).toEqual(signed)
  })

  it('changed by the client, breaks the prefix at its part and nowhere before', () => {
    const before = prompt(toolRound('CiQBjz1rX2E='))
    const after = prompt(toolRound('c2tpcHBlZA=='))
    const segment = after.segments[firstDivergence(before, after) ?? -1]
    expect(segment === undefined ? undefined : describeNode(segment.node)).toBe('contents[1].0')
    expect(segment?.frame).toBe('model|thoughtSignature')
  })

  it('sent back unchanged, is read from the implicit cache; changed, the read stops before it', () => {
    const simulator = new GeminiCacheSimulator()
    const first = simulator.simulate({ body: toolRound('CiQBjz1rX2E='), at: 0, output })
    const cached = first.prompt.total - first.prompt.trailing
    expect(simulator.simulate({ body: toolRound('CiQBjz1rX2E='), at: 10, output }).counts.read).toBe(cached)
    const changed = simulator.simulate({ body: toolRound('c2tpcHBlZA=='), at: 20, output })
    const index = changed.prompt.segments.findIndex((segment) => segment.frame === 'model|thoughtSignature')
    expect(changed.counts.read).toBe(changed.prompt.cumulative[index - 1])
  })

  it('is read under either of its JSON names, and any other field beside a call is prompt too', () => {
    const camel = prompt(toolRound('CiQBjz1rX2E='))
    const proto = prompt(toolRound(undefined, { thought_signature: 'CiQBjz1rX2E=' }))
    expect(proto.segments.map((segment) => segment.text)).toEqual(
      camel.segments.map((segment) => segment.text),
    )
    const extra = prompt(toolRound(undefined, { partMetadata: { source: 'cli' } }))
    expect(extra.segments.some((segment) => segment.frame === 'model|fields')).toBe(true)
    expect(extra.total).toBeGreaterThan(prompt(toolRound()).total)
  })
})

describe('Gemini explicit caches', () => {
  const resource = {
    model: 'models/gemini-2.5-flash',
    systemInstruction: body(1).systemInstruction,
    ttl: '600s',
  }

  it('are read whole by a request that names them, until their TTL ends', () => {
    const simulator = new GeminiCacheSimulator()
    const cache = simulator.createCache(resource, 0, 0)
    expect(cache.expiresAt).toBe(600)
    const request = { model: 'gemini-2.5-flash', cachedContent: cache.name, contents: body(1).contents }
    const used = simulator.simulate({ body: request, at: 400, output })
    expect(used.counts.read).toBe(cache.tokens)
    expect(() => simulator.simulate({ body: request, at: 600, output })).toThrow(/CachedContent not found/)
  })

  it('are refused below the minimum, with the API error naming both counts', () => {
    const simulator = new GeminiCacheSimulator()
    try {
      simulator.createCache({ ...resource, systemInstruction: { parts: [{ text: 'short' }] } }, 0, 0)
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(SimulatorRejection)
      expect((error as SimulatorRejection).status).toBe(400)
      expect((error as SimulatorRejection).message).toMatch(
        /total_token_count=\d+, min_total_token_count=2048/,
      )
    }
  })

  it('last an hour when the create names no lifetime', () => {
    const simulator = new GeminiCacheSimulator()
    const { ttl: _ttl, ...withoutTtl } = resource
    expect(simulator.createCache(withoutTtl, 100, 0).expiresAt).toBe(3700)
  })
})
