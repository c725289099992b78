import { describe, expect, it } from 'vitest'
import { contentHash } from '../providers/capture/digest.ts'
import type { CapturedExchange } from '../providers/capture/tracker.ts'
import { captureRows } from './capture-rows.ts'

const SEGMENT_TOKENS = 1000

/** An Anthropic exchange of `segments` system blocks (each its own hash), answered with `read`. */
function exchange(
  seq: number,
  segments: string[],
  read: number,
  extra: Partial<CapturedExchange> = {},
): CapturedExchange {
  const total = segments.length * SEGMENT_TOKENS
  return {
    seq,
    session: 's',
    identity: 'continuation',
    time: '2026-11-30T00:00:00.000Z',
    at: seq,
    api: 'anthropic-messages',
    provider: 'anthropic',
    model: 'claude-sonnet-4-6',
    stream: false,
    status: 200,
    latencyMs: 10,
    turn: seq,
    step: 1,
    attempt: 0,
    usage: { input: total, uncached: total - read, cacheRead: read, cacheWrite: 0, output: 5, raw: {} },
    digest: {
      segments: segments.map(
        (text, index) => [`system[${index}]`, contentHash(text), SEGMENT_TOKENS] as const,
      ),
      trailing: 0,
      total,
      items: [],
      config: { model: 'claude-sonnet-4-6' },
    },
    ...extra,
  }
}

/** A failed attempt: no usage reached the client. */
function withoutUsage(failed: CapturedExchange): CapturedExchange {
  const { usage: _usage, ...rest } = failed
  return rest
}

const counts = (read: number) => ({
  input: 3000,
  read,
  write: 0,
  write5m: 0,
  write1h: 0,
  uncached: 3000 - read,
  output: 5,
})

describe('rows of captured traffic', () => {
  it('take the ideal from the recorded counterfactual and the break from the wire', () => {
    const rows = captureRows(
      [
        exchange(1, ['a', 'b'], 0),
        exchange(2, ['A', 'b', 'c'], 0, {
          simulation: { counts: counts(0), counterfactual: { ideal: 2000, warm: 2000 }, predicted: false },
        }),
      ],
      { runId: 'r', scenario: 'capture' },
    )
    expect(rows[0]).toMatchObject({ cold: true, breakCause: undefined, lostTokens: 0 })
    expect(rows[1]).toMatchObject({
      cold: false,
      idealCacheReadTokens: 2000,
      lostTokens: 2000,
      breakNode: 'system[0]',
      breakCause: 'system-replace',
      predictedCacheReadTokens: undefined,
    })
  })

  it('leave a failed attempt out of the comparison and show a live prediction beside the usage', () => {
    const rows = captureRows(
      [
        exchange(1, ['a'], 0),
        withoutUsage(exchange(2, ['a', 'b'], 0, { status: 529 })),
        exchange(3, ['a', 'b'], 1000, {
          attempt: 1,
          simulation: { counts: counts(1000), counterfactual: { ideal: 1000, warm: 1000 }, predicted: true },
        }),
      ],
      { runId: 'r', scenario: 'capture' },
    )
    expect(rows.map((row) => row.ok)).toEqual([true, false, true])
    expect(rows[1]?.inputTokens).toBe(0)
    expect(rows[2]).toMatchObject({ attempt: 1, breakCause: undefined, predictedCacheReadTokens: 1000 })
  })

  it('count a live provider that reads less than predicted as a gap beside the prediction, not a client loss', () => {
    const [, extended] = captureRows(
      [
        exchange(1, ['a'], 0),
        exchange(2, ['a', 'b'], 0, {
          simulation: { counts: counts(1000), counterfactual: { ideal: 1000, warm: 1000 }, predicted: true },
        }),
      ],
      { runId: 'r', scenario: 'capture' },
    )
    expect(extended).toMatchObject({
      cacheReadTokens: 0,
      predictedCacheReadTokens: 1000,
      idealCacheReadTokens: 0,
      lostTokens: 0,
      breakCause: undefined,
    })
  })
})
