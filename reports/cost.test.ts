import { describe, expect, it } from 'vitest'
import { findModel, type Prices } from '../providers/catalog.ts'
import { type Buckets, costUsd, explicitCacheUsd, idealCostUsd } from './cost.ts'

function pricesOf(vendor: 'anthropic' | 'gemini' | 'bedrock', model: string): Prices {
  const entry = findModel(vendor, model)
  if (entry === undefined) throw new Error(`${model} is not in the catalog`)
  return entry.prices
}

const none: Buckets = { uncached: 0, read: 0, write5m: 0, write1h: 0, output: 0 }

describe('price tiers', () => {
  it('bills a cache write by its lifetime: 5 minutes at 1.25×, 1 hour at 2× the input price', () => {
    const opus41 = pricesOf('anthropic', 'claude-opus-4-1')
    expect(costUsd({ ...none, write5m: 1e5 }, opus41)).toBeCloseTo(1.875, 10)
    expect(costUsd({ ...none, write1h: 1e5 }, opus41)).toBeCloseTo(3, 10)
  })

  it('bills every token of a Sonnet 4.5 request over 200k prompt tokens at the long-context rates', () => {
    const sonnet = pricesOf('anthropic', 'claude-sonnet-4-5')
    const at = { ...none, uncached: 1000, read: 150_000, write5m: 49_000, output: 1e4 }
    // 200,000 prompt tokens: the standard rates ($3 input, $0.30 read, $3.75 write, $15 output).
    expect(costUsd(at, sonnet)).toBeCloseTo((1000 * 3 + 150_000 * 0.3 + 49_000 * 3.75 + 1e4 * 15) / 1e6, 10)
    // One token more crosses: $6 input, $0.60 read, $7.50 write, $22.50 output.
    const over = { ...at, uncached: 1001 }
    expect(costUsd(over, sonnet)).toBeCloseTo(
      (1001 * 6 + 150_000 * 0.6 + 49_000 * 7.5 + 1e4 * 22.5) / 1e6,
      10,
    )
    // The ideal cost of the same request stays in its tier (its prompt length does not change).
    expect(idealCostUsd(over, 49_000, sonnet)).toBeCloseTo((1001 * 6 + 199_000 * 0.6 + 1e4 * 22.5) / 1e6, 10)
  })

  it('keeps Sonnet 4.6 at its standard rates on a 1M-token prompt', () => {
    const sonnet46 = pricesOf('anthropic', 'claude-sonnet-4-6')
    expect(costUsd({ ...none, uncached: 1e6 }, sonnet46)).toBeCloseTo(3, 10)
  })

  it('bills Haiku 5.5 at five times its rates above 100k prompt tokens', () => {
    const haiku = pricesOf('anthropic', 'claude-haiku-5-5')
    expect(costUsd({ ...none, read: 100_000, output: 1000 }, haiku)).toBeCloseTo(
      (1e5 * 0.01 + 1000 * 0.5) / 1e6,
      12,
    )
    expect(costUsd({ ...none, read: 100_001, output: 1000 }, haiku)).toBeCloseTo(
      (100_001 * 0.05 + 1000 * 2.5) / 1e6,
      12,
    )
  })

  it('bills a Gemini 2.5 Pro prompt over 200k tokens, cached tokens counted, at its long-prompt rates', () => {
    const pro = pricesOf('gemini', 'gemini-2.5-pro')
    expect(costUsd({ ...none, uncached: 100_000, read: 100_000, output: 1e4 }, pro)).toBeCloseTo(
      (1e5 * 1.25 + 1e5 * 0.125 + 1e4 * 10) / 1e6,
      10,
    )
    expect(costUsd({ ...none, uncached: 100_000, read: 100_001, output: 1e4 }, pro)).toBeCloseTo(
      (1e5 * 2.5 + 100_001 * 0.25 + 1e4 * 15) / 1e6,
      10,
    )
  })

  it('bills a Gemini explicit cache its creation and its storage by the hour, creation above 200k at the long rate', () => {
    const pro = pricesOf('gemini', 'gemini-2.5-pro')
    // 100k tokens for 2 hours: $1.25 creation + $4.50 × 2 h per million.
    expect(explicitCacheUsd(100_000, 7200, pro)).toBeCloseTo(0.125 + 0.9, 10)
    // 300k tokens for 30 minutes: creation at $2.50, storage at $4.50 per million per hour.
    expect(explicitCacheUsd(300_000, 1800, pro)).toBeCloseTo(0.75 + 0.675, 10)
    const flash = pricesOf('gemini', 'gemini-2.5-flash')
    expect(explicitCacheUsd(100_000, 3600, flash)).toBeCloseTo(0.03 + 0.1, 10)
  })

  it('bills a Bedrock request through a geographic profile 10% above the global one', () => {
    const request = { ...none, read: 50_000, write1h: 5000, uncached: 100, output: 2000 }
    const global = costUsd(request, pricesOf('bedrock', 'global.anthropic.claude-sonnet-4-6'))
    expect(global).toBeCloseTo((50_000 * 0.3 + 5000 * 6 + 100 * 3 + 2000 * 15) / 1e6, 10)
    expect(costUsd(request, pricesOf('bedrock', 'us.anthropic.claude-sonnet-4-6'))).toBeCloseTo(
      global * 1.1,
      10,
    )
    expect(costUsd(request, pricesOf('bedrock', 'eu.anthropic.claude-haiku-4-5-20251001-v1:0'))).toBeCloseTo(
      costUsd(request, pricesOf('bedrock', 'anthropic.claude-haiku-4-5-20251001-v1:0')) * 1.1,
      10,
    )
    // Nova has no regional rates in the catalog: every profile bills the same.
    expect(pricesOf('bedrock', 'us.amazon.nova-pro-v1:0')).toEqual(
      pricesOf('bedrock', 'amazon.nova-pro-v1:0'),
    )
  })
})
