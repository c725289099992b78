import { describe, expect, it } from 'vitest'
import { breaksOf } from './breaks.ts'
import { checkBaseline, findingKey, type GateOptions, type GateSide } from './gate.ts'
import { gateReport } from './gate-text.ts'
import type { RunPlan } from './plan.ts'
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

  it("says what a session's client did not ask for (nothing marked for caching) as a note, not a failure", () => {
    const run = steps.map((row) =>
      row.scenario === 'append-only' ? { ...row, markedCostUsd: row.costUsd / 2 } : row,
    )
    const result = gate(steps, run)
    expect(result.failures).toEqual([])
    const notes = result.notes.filter((finding) => finding.kind === 'client-note')
    expect(notes.map((finding) => findingKey(finding)?.scenario)).toEqual(['append-only'])
    expect(gateReport(result)).toContain('notes (what the clients did not ask for: warnings, not failures):')
    expect(gateReport(result)).toMatch(
      /append-only · default · anthropic: nothing marked for caching on \d+ of \d+ requests: \$[\d.]+, \$[\d.]+ with a cache mark/,
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

/** A plan that set out to produce the sessions of `scenarios` among `rows`, narrowed to those scenarios. */
function planOf(rows: readonly StepRow[], scenarios: string[], leftOut: RunPlan['leftOut'] = []): RunPlan {
  const sessions = summarize(rows.filter((row) => scenarios.includes(row.scenario))).map((row) => ({
    scenario: row.scenario,
    variant: row.variant,
    provider: row.provider,
  }))
  return {
    selection: { scenarios, variants: 'all', providers: 'all', loops: ['model'] },
    sessions,
    leftOut,
  }
}

/** Many sessions of one scenario, each one with a break; the same rows on every session. */
const manySessions = (scenario: string, count: number) =>
  Array.from({ length: count }, (_, index) =>
    sessionRows({ scenario, variant: `v${index}` }, [
      { uncached: 1000 },
      { read: 900, uncached: 100, turn: 1, step: 2 },
      { write: 1000, lost: 900, breakCause: 'system-replace', breakNode: 'system[0]', turn: 2 },
    ]),
  ).flat()

describe('a gate scoped to what ran', () => {
  const whole = [...steps, ...manySessions('other', 8)]

  it("judges only the sessions the run planned: a one-scenario run is judged on that scenario's sessions", () => {
    const run = steps.filter((row) => row.scenario === 'system-change')
    const worse = withStep(run, 'system-change', 2, 1, {
      cacheReadTokens: 0,
      uncachedTokens: 20_000,
      hitRatio: 0,
    })
    const result = checkBaseline({
      baseline: side(whole),
      run: { ...side(worse), plan: planOf(worse, ['system-change']) },
      claims: [],
      rowProblems: [],
      options: { ...options, breakThresholdTokens: 1e9, costTolerancePercent: 1e9 },
    })
    expect(result.checked).toBe(1)
    expect(result.failures.map((finding) => finding.kind)).toEqual(['hit-ratio'])
    expect(result.changes).toEqual([])
    expect(result.scope.outside).toHaveLength(9)
    expect(result.sessions).toEqual([
      expect.objectContaining({
        key: expect.objectContaining({ scenario: 'system-change' }),
        status: 'fails',
      }),
    ])
    const report = gateReport(result)
    expect(report).not.toContain('missing from the run')
    expect(report).not.toContain('break gone')
    expect(report).toMatch(
      /check failed: 1 failures over 1 baseline sessions .*; 9 more baseline sessions are outside the run's plan \(run --scenario system-change\), not checked\.$/m,
    )
  })

  it('calls a planned session that has no rows missing, and one the selection covers but the run did not plan too, with why', () => {
    const run = steps.filter((row) => row.scenario === 'append-only')
    const plan = planOf(steps, ['append-only', 'system-change'])
    const absent = checkBaseline({
      baseline: side(steps),
      run: { ...side(run), plan },
      claims: [],
      rowProblems: [],
      options,
    })
    expect(absent.failures).toEqual([
      {
        kind: 'missing-session',
        key: { scenario: 'system-change', variant: 'default', provider: 'anthropic' },
        why: 'absent',
      },
    ])
    const reason = 'the variant needs system messages in history, which test-model does not accept'
    const leftOut = {
      ...plan,
      sessions: plan.sessions.filter((key) => key.scenario === 'append-only'),
      leftOut: [{ scenario: 'system-change', variant: 'default', provider: 'anthropic' as const, reason }],
    }
    const notPlanned = checkBaseline({
      baseline: side(steps),
      run: { ...side(run), plan: leftOut },
      claims: [],
      rowProblems: [],
      options,
    })
    expect(gateReport(notPlanned)).toContain(
      `FAIL  system-change · default · anthropic: not planned by the run: ${reason}`,
    )
  })

  it('says a missing session once, not once more per break it had, and groups a repeated cause under one count', () => {
    const result = gate(whole, steps)
    expect(result.changes).toEqual([])
    expect(result.failures.map((finding) => finding.kind)).toEqual(Array(8).fill('missing-session'))
    const lines = gateReport(result).split('\n')
    expect(lines.slice(0, 5)).toEqual([
      'FAIL  8 baseline sessions missing from the run:',
      '        other · v0 · anthropic: missing from the run',
      '        other · v1 · anthropic: missing from the run',
      '        other · v2 · anthropic: missing from the run',
      '        … and 5 more (every one: check --reporter json)',
    ])
  })

  it('prints the real failures before the missing sessions', () => {
    const broken = withStep(steps, 'system-change', 3, 3, { lostTokens: 9000 })
    const lines = gateReport(gate(whole, broken)).split('\n')
    expect(lines[0]).toMatch(/^FAIL {2}break changed \(\+7,000 tokens\): system-change/)
    expect(lines[1]).toBe('FAIL  8 baseline sessions missing from the run:')
  })

  it("tells a capture whose sessions are named by a first message that changed how to name them, and never advises cachelab's own npm script", () => {
    const captured = (variant: string) =>
      sessionRows({ scenario: 'capture', variant }, [
        { uncached: 1000 },
        { read: 900, uncached: 100, turn: 2 },
      ])
    const result = gate(captured('c-cf050532'), captured('c-9a8b7c6d'))
    expect(result.unmatched).toEqual([
      expect.objectContaining({ scenario: 'capture', naming: 'first-message' }),
    ])
    const report = gateReport(result)
    expect(report).toContain('FAIL  capture · c-cf050532 · anthropic: missing from the run')
    expect(report).toContain('the run has c-9a8b7c6d instead, which the baseline lacks')
    expect(report).toContain('x-cachelab-session: NAME')
    expect(report).not.toContain('npm run baseline')
    const byAgent = (variant: string) =>
      sessionRows({ scenario: 'capture', variant, agent: 'claude-code/2.1.337' }, [{ uncached: 1000 }])
    expect(gate(byAgent('4f1c0e9a-1111'), byAgent('77d2a1b0-2222')).unmatched[0]?.naming).toBe(
      'agent-session',
    )
  })

  it('names the refresh command it is given beside the changes', () => {
    const fixed = withStep(steps, 'system-change', 3, 3, {
      lostTokens: 0,
      breakCause: undefined,
      breakNode: undefined,
    })
    expect(gateReport(gate(steps, fixed), { refresh: 'npm run baseline' })).toContain(
      'refresh the baseline if intended (npm run baseline):',
    )
    expect(gateReport(gate(steps, fixed))).toContain('(cachelab check --baseline DIR --out RUN --update)')
  })
})
