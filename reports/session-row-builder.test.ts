import { describe, expect, it } from 'vitest'
import type { LlmCall, RequestRecord } from '../harness/ports.ts'
import type { Usage } from '../harness/types.ts'
import { PromptBuilder } from '../providers/sim/prompt.ts'
import { TokenCounter } from '../providers/sim/tokens.ts'
import type { SimTrace } from '../providers/sim/types.ts'
import { costUsd, idealCostUsd } from './cost.ts'
import { type Observation, SessionRowBuilder } from './session-row-builder.ts'

const prices = { input: 3, cacheRead: 0.3, cacheWrite5m: 3.75, cacheWrite1h: 6, output: 15 }
const counter = new TokenCounter()
const COUNTS = { input: 0, read: 0, write: 0, write5m: 0, write1h: 0, uncached: 0, output: 0 }

function prompt(...texts: string[]) {
  const builder = new PromptBuilder(counter, 1)
  for (const [index, text] of texts.entries())
    builder.add({ frame: 'user||', text, framing: 3, contentTokens: 1000, node: { part: 'messages', index } })
  return builder.build(0)
}

function record(at: number, usage: Usage, messages: number, step = 1): RequestRecord {
  const call = {
    request: {
      sessionId: 's',
      config: { provider: 'anthropic', model: 'm' },
      route: 'unsupported',
      tools: [],
      headerSeq: 1,
      messages: [],
    },
    scripted: { role: 'assistant', content: [] },
    at,
    turn: 1,
    step,
    attempt: 0,
    purpose: 'step',
  } as LlmCall
  return {
    sessionId: 's',
    call,
    route: 'unsupported',
    logLength: 10,
    outcome: {
      ok: true,
      message: { role: 'assistant', content: [] },
      usage,
      latencyMs: 1,
      wire: {
        body: { model: 'm' },
        sources: {
          system: [],
          tools: [],
          messages: Array.from({ length: messages }, (_, index) => [index + 2]),
        },
      },
    },
  }
}

const usage = (uncached: number, read: number, write: number): Usage => ({
  input: uncached + read + write,
  uncached,
  cacheRead: read,
  cacheWrite: write,
  cacheWrite5m: write,
  output: 10,
  raw: null,
})

const trace = (tokens: number, liveUntil: number, extra: Partial<SimTrace> = {}): SimTrace => ({
  carry: { tokens, liveUntil },
  matched: 0,
  ...extra,
})

function builder() {
  return new SessionRowBuilder({
    runId: 'r',
    scenario: 's',
    variant: 'v',
    provider: 'anthropic',
    model: 'm',
    prices,
    log: [],
  })
}

describe('step rows', () => {
  it('marks the first request cold and computes disjoint buckets and the hit ratio', () => {
    const rows = builder()
    const observation: Observation = { counts: COUNTS, prompt: prompt('a', 'b'), trace: trace(2000, 300) }
    const row = rows.add(record(0, usage(100, 0, 1900), 2), observation)
    expect(row.cold).toBe(true)
    expect(row.inputTokens).toBe(2000)
    expect(row.hitRatio).toBe(0)
    expect(row.lostTokens).toBe(0)
    expect(row.breakCause).toBeUndefined()
  })

  it('takes the ideal and the warm read from the simulator, and names a provider-side loss apart', () => {
    const rows = builder()
    rows.add(record(0, usage(100, 0, 1900), 2), {
      counts: COUNTS,
      prompt: prompt('a', 'b'),
      trace: trace(1900, 300),
    })
    const late = rows.add(record(400, usage(100, 0, 2000), 3), {
      counts: COUNTS,
      prompt: prompt('a', 'b', 'c'),
      trace: trace(2000, 700, { counterfactual: { ideal: 0, warm: 1900, cause: 'ttl-expired' } }),
    })
    expect(late.idealCacheReadTokens).toBe(0)
    expect(late.lostTokens).toBe(0)
    expect(late.providerLostTokens).toBe(1900)
    // 1,900 tokens written at 3.75 instead of read at 0.30 per million.
    expect(late.providerLostUsd).toBeCloseTo((1900 * (3.75 - 0.3)) / 1_000_000, 12)
    expect(late.providerCause).toBe('ttl-expired')
    expect(late.breakCause).toBe('ttl-expired')
    expect(late.breakNode).toBeUndefined()
  })

  it('names both causes when a client change and an expiry meet in one step', () => {
    const rows = builder()
    rows.add(record(0, usage(100, 0, 1900), 2), {
      counts: COUNTS,
      prompt: prompt('a', 'b'),
      trace: trace(1900, 300),
    })
    const both = rows.add(record(400, usage(100, 0, 2000), 2), {
      counts: COUNTS,
      prompt: prompt('a', 'B'),
      trace: trace(2000, 700, { counterfactual: { ideal: 0, warm: 1900, cause: 'ttl-expired' } }),
    })
    expect(both.breakNode).toBe('messages[1]')
    expect(both.breakCause).not.toBe('ttl-expired')
    expect(both.providerCause).toBe('ttl-expired')
    expect(both.providerLostTokens).toBe(1900)
    expect(both.lostTokens).toBe(0)
  })

  it('never reports an ideal below the actual read, nor a provider loss without a counterfactual', () => {
    const rows = builder()
    rows.add(record(0, usage(100, 0, 1900), 2), {
      counts: COUNTS,
      prompt: prompt('a', 'b'),
      trace: trace(1900, 300),
    })
    const row = rows.add(record(10, usage(100, 1900, 100), 3), {
      counts: COUNTS,
      prompt: prompt('a', 'b', 'c'),
      trace: trace(2000, 310, { counterfactual: { ideal: 1000, warm: 1000 } }),
    })
    expect(row.idealCacheReadTokens).toBe(1900)
    expect(row.lostTokens).toBe(0)
    expect(row.providerLostTokens).toBe(0)
    const bare = rows.add(record(20, usage(2100, 0, 0), 4), {
      counts: COUNTS,
      prompt: prompt('a', 'b', 'c', 'd'),
      trace: trace(2000, 310),
    })
    expect(bare.idealCacheReadTokens).toBe(0)
    expect(bare.breakCause).toBeUndefined()
  })

  it('names the first divergent node when the request does not extend the previous one', () => {
    const rows = builder()
    rows.add(record(0, usage(100, 0, 1900), 2), {
      counts: COUNTS,
      prompt: prompt('a', 'b'),
      trace: trace(1900, 300),
    })
    const changed = rows.add(record(10, usage(2000, 0, 0), 2), {
      counts: COUNTS,
      prompt: prompt('a', 'B'),
      trace: trace(2000, 310),
    })
    expect(changed.breakNode).toBe('messages[1]')
    expect(changed.breakEventSeq).toBe(3)
    expect(changed.lostTokens).toBe(changed.idealCacheReadTokens)
    // The built-in loop holds both requests: what changed there is on the row.
    expect(changed.breakChange).toEqual({ node: 'messages[1]', kind: 'replaced', before: 'b', after: 'B' })
  })

  it('gives failed attempts a row of zeros that does not become the previous request', () => {
    const rows = builder()
    const failed: RequestRecord = {
      ...record(0, usage(0, 0, 0), 0),
      outcome: {
        ok: false,
        error: { status: 429, type: 'rate_limit_error', message: 'x', retryable: true },
        latencyMs: 5,
      },
    }
    const row = rows.add(failed, undefined)
    expect(row.ok).toBe(false)
    expect(row.inputTokens).toBe(0)
    expect(row.hitRatio).toBeUndefined()
    const next = rows.add(record(1, usage(100, 0, 1900), 2), {
      counts: COUNTS,
      prompt: prompt('a', 'b'),
      trace: trace(1900, 300),
    })
    expect(next.cold).toBe(true)
  })
})

describe('cost', () => {
  it('prices each bucket at its rate', () => {
    expect(
      costUsd({ uncached: 1e6, read: 1e6, write5m: 1e6, write1h: 1e6, output: 1e6 }, prices),
    ).toBeCloseTo(3 + 0.3 + 3.75 + 6 + 15)
  })

  it('moves lost tokens from writes to reads for the ideal cost', () => {
    const buckets = { uncached: 0, read: 0, write5m: 1e6, write1h: 0, output: 0 }
    expect(idealCostUsd(buckets, 1e6, prices)).toBeCloseTo(0.3)
    expect(idealCostUsd(buckets, 0, prices)).toBeCloseTo(3.75)
  })
})
