import { describe, expect, it } from 'vitest'
import { breaksOf } from './breaks.ts'
import { checkBaseline, type GateOptions, type GateSide, gateReport } from './gate.ts'
import { summarize } from './summary.ts'
import { sessionRows } from './testing.ts'
import type { ClaimResult, StepRow } from './types.ts'

const options: GateOptions = {
  tolerancePoints: 0.5,
  costTolerancePercent: 1,
  breakThresholdTokens: 1024,
  strict: false,
}

const steps = [
  ...sessionRows({ scenario: 'append-only' }, [
    { uncached: 1000 },
    { read: 900, uncached: 100, turn: 1, step: 2 },
    { read: 950, uncached: 50, turn: 2, step: 1 },
  ]),
  ...sessionRows({ scenario: 'system-change' }, [
    { uncached: 20_000 },
    { read: 19_000, uncached: 1000, turn: 2, step: 1 },
    {
      uncached: 5_000,
      write: 16_000,
      lost: 2000,
      breakCause: 'system-replace',
      breakNode: 'system[0]',
      turn: 3,
    },
  ]),
]

const side = (rows: readonly StepRow[]): GateSide => ({
  summary: summarize(rows),
  breaks: breaksOf(rows),
  steps: rows,
})

function gate(baseline: readonly StepRow[], run: readonly StepRow[], more: Partial<GateOptions> = {}) {
  return checkBaseline({
    baseline: side(baseline),
    run: side(run),
    claims: [],
    rowProblems: [],
    options: { ...options, ...more },
  })
}

/** The rows with one step of one session replaced. */
function withStep(
  rows: readonly StepRow[],
  scenario: string,
  turn: number,
  step: number,
  change: Partial<StepRow>,
): StepRow[] {
  return rows.map((row) =>
    row.scenario === scenario && row.turn === turn && row.step === step ? { ...row, ...change } : row,
  )
}

describe('checkBaseline', () => {
  it('passes a run equal to its baseline', () => {
    const result = gate(steps, steps)
    expect(result.failures).toEqual([])
    expect(result.changes).toEqual([])
    expect(result.passed).toBe(true)
    expect(gateReport(result)).toMatch(/^OK: 2 of 2 baseline sessions hold/)
  })

  it('fails on one new break that loses far more than the threshold, though the session ratio barely moves', () => {
    // 1,000 steps of 90k tokens read at 99.9%; one of them reads nothing.
    const long = sessionRows(
      { scenario: 'long-session' },
      Array.from({ length: 1000 }, (_, index) => ({ read: 89_900, uncached: 100, turn: index + 1, step: 1 })),
    )
    const broken = withStep(long, 'long-session', 150, 1, {
      cacheReadTokens: 0,
      cacheWriteTokens: 89_900,
      hitRatio: 0,
      idealCacheReadTokens: 89_900,
      lostTokens: 89_900,
      breakCause: 'system-replace',
      breakNode: 'system[0]',
      breakEventSeq: 4242,
      idealCostUsd: 0.0003,
      costUsd: 0.3373,
    })
    const result = gate(long, broken)
    expect(result.passed).toBe(false)
    const kinds = result.failures.map((finding) => finding.kind)
    expect(kinds).toContain('new-break')
    expect(kinds).not.toContain('hit-ratio')
    const report = gateReport(result)
    expect(report).toContain(
      'FAIL  new break: long-session · default · anthropic 150.1: system-replace at system[0] (event 4242), 89,900 tokens lost ($0.3370)',
    )
  })

  it('lists a new break below the threshold as a change, failing only when strict', () => {
    const small = withStep(steps, 'append-only', 2, 1, { lostTokens: 300, breakCause: 'after-slot' })
    const lenient = gate(steps, small)
    expect(lenient.passed).toBe(true)
    expect(lenient.changes.map((finding) => finding.kind)).toEqual(['new-break'])
    expect(gate(steps, small, { strict: true }).passed).toBe(false)
  })

  it('fails when a break grew by more than the threshold, and calls a shrunk one a change', () => {
    const grown = withStep(steps, 'system-change', 3, 3, { lostTokens: 4000 })
    expect(gate(steps, grown).failures.map((finding) => finding.kind)).toEqual(['break-changed'])
    const shrunk = withStep(steps, 'system-change', 3, 3, { lostTokens: 200 })
    const result = gate(steps, shrunk)
    expect(result.passed).toBe(true)
    expect(result.changes.map((finding) => finding.kind)).toEqual(['break-changed'])
  })

  it('calls a break that went away a change, and the baseline stale under --strict', () => {
    const fixed = withStep(steps, 'system-change', 3, 3, {
      lostTokens: 0,
      breakCause: undefined,
      breakNode: undefined,
    })
    const result = gate(steps, fixed)
    expect(result.passed).toBe(true)
    expect(result.changes.map((finding) => finding.kind)).toContain('break-gone')
    expect(gateReport(result)).toContain('refresh the baseline')
    expect(gate(steps, fixed, { strict: true }).passed).toBe(false)
  })

  it('counts the provider side of a break: an idle gap that newly expires the cache fails', () => {
    const expired = withStep(steps, 'append-only', 2, 1, {
      providerCause: 'ttl-expired',
      providerLostTokens: 1500,
      providerLostUsd: 0.004,
      breakCause: 'ttl-expired',
    })
    const result = gate(steps, expired)
    expect(result.passed).toBe(false)
    expect(gateReport(result)).toContain('2.1: ttl-expired on the provider side, 1,500 tokens ($0.0040)')
  })

  it('fails when the warm hit ratio falls beyond the tolerance, naming the steps that fell', () => {
    const worse = withStep(steps, 'system-change', 2, 1, {
      cacheReadTokens: 0,
      uncachedTokens: 20_000,
      hitRatio: 0,
    })
    const result = gate(steps, worse, { breakThresholdTokens: 1e9, costTolerancePercent: 1e9 })
    expect(result.failures.map((finding) => finding.kind)).toEqual(['hit-ratio'])
    expect(gateReport(result)).toMatch(
      /system-change · default · anthropic: warm hit ratio .* steps that fell: 2\.1 -95\.00pp/,
    )
  })

  it('fails when a session costs more than the cost tolerance', () => {
    const pricier = steps.map((row) =>
      row.scenario === 'append-only' ? { ...row, costUsd: row.costUsd * 1.02 } : row,
    )
    expect(gate(steps, pricier).failures.map((finding) => finding.kind)).toEqual(['cost'])
    expect(gate(steps, pricier, { costTolerancePercent: 2.5 }).passed).toBe(true)
  })

  it('names a model change beside a cost change, so a cheaper model is not read as a cheaper prefix', () => {
    const otherModel = steps.map((row) =>
      row.scenario === 'append-only' ? { ...row, model: 'gpt-4.1', costUsd: row.costUsd * 0.76 } : row,
    )
    const result = gate(
      steps.map((row) => ({ ...row, model: 'claude-sonnet-4-6' })),
      otherModel.map((row) =>
        row.scenario === 'append-only' ? row : { ...row, model: 'claude-sonnet-4-6' },
      ),
    )
    expect(result.changes.map((finding) => finding.kind)).toEqual(['cost'])
    expect(gateReport(result)).toMatch(
      /append-only · default · anthropic: cost \$\d\.\d+ → \$\d\.\d+ \(-24\.00%, model claude-sonnet-4-6 → gpt-4\.1\)/,
    )
  })

  it('compares neither the cost nor a ratio or break a side did not report, and says what it did not compare', () => {
    const unreported = sessionRows({ scenario: 'append-only' }, [
      { uncached: 1000 },
      { unreported: { predictedRead: 900 }, turn: 1, step: 2 },
      { unreported: { predictedRead: 950 }, turn: 2, step: 1 },
    ])
    const run = [...unreported, ...steps.filter((row) => row.scenario === 'system-change')]
    const result = gate(steps, run)
    expect(result.failures).toEqual([])
    expect(result.changes).toEqual([])
    expect(result.passed).toBe(true)
    expect(result.notes).toEqual([
      {
        kind: 'usage-not-reported',
        key: { scenario: 'append-only', variant: 'default', provider: 'anthropic' },
        baseline: { unreported: 0, requests: 3 },
        run: { unreported: 2, requests: 3 },
        unknown: ['warm hit ratio', 'cost'],
      },
    ])
    expect(gateReport(result)).toContain(
      'append-only · default · anthropic: usage not reported for 2 of 3 requests in the run: warm hit ratio, cost unknown, not compared',
    )
    // A baseline break where the run answered without usage is not called gone, nor the reverse new.
    const broken = withStep(steps, 'system-change', 3, 3, { usageNotReported: true, breakCause: undefined })
    const atBreak = gate(steps, broken)
    expect(atBreak.changes.map((finding) => finding.kind)).not.toContain('break-gone')
    expect(
      atBreak.notes.flatMap((finding) => (finding.kind === 'usage-not-reported' ? finding.unknown : [])),
    ).toEqual(['warm hit ratio', 'cost', '1 break'])
    expect(gate(broken, steps).failures).toEqual([])
  })

  it('fails on a missing session and lists a session the baseline does not have as a change', () => {
    const fewer = steps.filter((row) => row.scenario === 'append-only')
    expect(gate(steps, fewer).failures.map((finding) => finding.kind)).toEqual(['missing-session'])
    const more = gate(fewer, steps)
    expect(more.passed).toBe(true)
    expect(more.changes.map((finding) => finding.kind)).toEqual(['new-session'])
  })

  it('fails on a failed claim and on an impossible row, whatever the baseline says', () => {
    const claim: ClaimResult = {
      scenario: 'idle-ttl',
      provider: 'anthropic',
      claim: 'five-minutes-expire',
      text: 'The pause expires the cache.',
      variants: ['ttl-5m'],
      status: 'fails',
      observed: 'no ttl-expired break after the gap',
    }
    const result = checkBaseline({
      baseline: side(steps),
      run: side(steps),
      claims: [claim, { ...claim, status: 'holds' }],
      rowProblems: ['append-only · default · anthropic 1.2: lost_tokens -5 is outside 0..input (1000)'],
      options,
    })
    expect(result.failures.map((finding) => finding.kind)).toEqual(['claim', 'row'])
    const report = gateReport(result)
    expect(report).toContain(
      'claim failed: idle-ttl on anthropic: The pause expires the cache. Observed: no ttl-expired',
    )
    expect(report).toContain('impossible row: append-only')
  })
})
