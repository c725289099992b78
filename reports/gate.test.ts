import { describe, expect, it } from 'vitest'
import { checkBaseline, gateReport } from './gate.ts'
import { summarize } from './summary.ts'
import { sessionRows } from './testing.ts'
import type { SummaryRow } from './types.ts'

const steps = [
  ...sessionRows({ scenario: 'append-only' }, [
    { uncached: 1000 },
    { read: 900, uncached: 100, turn: 1, step: 2 },
    { read: 950, uncached: 50, turn: 2, step: 1 },
  ]),
  ...sessionRows({ scenario: 'system-change' }, [{ uncached: 1000 }, { read: 800, uncached: 200 }]),
]
const baseline = summarize(steps)

function raised(rows: readonly SummaryRow[], scenario: string, points: number): SummaryRow[] {
  return rows.map((row) =>
    row.scenario === scenario ? { ...row, hitRatioWarm: (row.hitRatioWarm ?? 0) + points / 100 } : row,
  )
}

describe('checkBaseline', () => {
  it('passes a run equal to its baseline', () => {
    const result = checkBaseline({ baseline, run: baseline, tolerancePoints: 0.5 })
    expect(result).toEqual({ checked: 2, tolerancePoints: 0.5, regressions: [] })
    expect(gateReport(result)).toBe(
      'OK: 2 of 2 baseline sessions hold (warm hit ratio within 0.5 pp of the baseline)',
    )
  })

  it('fails, naming the session, when the baseline’s hit ratio is 5 points higher', () => {
    const result = checkBaseline({
      baseline: raised(baseline, 'system-change', 5),
      run: baseline,
      tolerancePoints: 0.5,
    })
    expect(result.regressions).toEqual([
      {
        kind: 'fell',
        key: { scenario: 'system-change', variant: 'default', provider: 'anthropic' },
        baselineHitRatio: expect.closeTo(0.85, 9),
        runHitRatio: 0.8,
        deltaPoints: expect.closeTo(-5, 9),
        fallenSteps: undefined,
      },
    ])
    expect(gateReport(result)).toMatch(/system-change\s+default\s+anthropic\s+85\.00%\s+80\.00%\s+-5\.00/)
  })

  it('holds a drop within the tolerance, including one exactly at it', () => {
    const input = { baseline: raised(baseline, 'system-change', 5), run: baseline }
    expect(checkBaseline({ ...input, tolerancePoints: 5 }).regressions).toEqual([])
    expect(checkBaseline({ ...input, tolerancePoints: 4.99 }).regressions).toHaveLength(1)
  })

  it('never fails a run for doing better than its baseline', () => {
    expect(
      checkBaseline({ baseline, run: raised(baseline, 'append-only', 9), tolerancePoints: 0 }).regressions,
    ).toEqual([])
  })

  it('fails a baseline session missing from the run', () => {
    const result = checkBaseline({ baseline, run: baseline.slice(0, 1), tolerancePoints: 0.5 })
    expect(result.regressions).toMatchObject([{ kind: 'missing', key: { scenario: 'system-change' } }])
    expect(gateReport(result)).toMatch(/system-change.*missing from run/)
  })

  it('ignores sessions the run has and the baseline does not', () => {
    expect(
      checkBaseline({ baseline: baseline.slice(0, 1), run: baseline, tolerancePoints: 0.5 }).checked,
    ).toBe(1)
  })

  it('names the steps that fell against the same turn, step and attempt', () => {
    const worse = steps.map((row) =>
      row.scenario === 'append-only' && row.turn === 2
        ? {
            ...row,
            cacheReadTokens: 0,
            uncachedTokens: 1000,
            hitRatio: 0,
            breakCause: 'ttl-expired' as const,
          }
        : row,
    )
    const result = checkBaseline({
      baseline,
      run: summarize(worse),
      baselineSteps: steps,
      runSteps: worse,
      tolerancePoints: 0.5,
    })
    expect(result.regressions).toMatchObject([
      {
        kind: 'fell',
        key: { scenario: 'append-only' },
        fallenSteps: [
          { turn: 2, step: 1, attempt: 0, baselineHitRatio: 0.95, runHitRatio: 0, breakCause: 'ttl-expired' },
        ],
      },
    ])
    expect(gateReport(result)).toContain('2.1 -95.00pp ttl-expired')
  })
})
