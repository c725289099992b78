// The baseline gate. Every session of the baseline must be in the run, and the run must not be worse:
// no warm hit ratio more than a tolerance lower, no cost more than a tolerance higher, no new break and no
// break grown beyond a token threshold, no failed scenario claim, no impossible row. Changes for the
// better are listed for a baseline refresh and fail only when strict.

import { breakLine, breakTokens } from './breaks.ts'
import { stepLabel } from './labels.ts'
import { type SessionKey, sessionKeyString, sessionLabel } from './session-key.ts'
import { countText, dollarText, percentText, pointsText } from './text-table.ts'
import type { BreakCause, BreakRow, ClaimResult, StepRow, SummaryRow } from './types.ts'

/** The hit-ratio tolerance when none is given, in percentage points. */
export const DEFAULT_TOLERANCE_POINTS = 0.5
/** The cost tolerance when none is given, in percent of the baseline's cost. */
export const DEFAULT_COST_TOLERANCE_PERCENT = 1
/**
 * Tokens a new break must cost, or a break must grow by, to fail the gate: the smallest prefix most models
 * cache (OpenAI's minimum, Anthropic's for Sonnet and Opus), so a break that costs less than one cacheable
 * prefix is listed as a change, not a regression.
 */
export const DEFAULT_BREAK_THRESHOLD_TOKENS = 1024

// Ratios and dollars come from CSV cells with six and eight decimals; a change equal to a tolerance must not
// fail on rounding.
const EPSILON = 1e-9

/** One side of the comparison: a run directory's files. */
export interface GateSide {
  summary: readonly SummaryRow[]
  /** Every break of every session; undefined when the directory has no breaks.csv. */
  breaks: readonly BreakRow[] | undefined
  /** The step rows, when the directory has a steps.csv (the run's always has one). */
  steps?: readonly StepRow[] | undefined
}

/** How strict the gate is. */
export interface GateOptions {
  /** How far below the baseline a warm hit ratio may fall, in percentage points. */
  tolerancePoints: number
  /** How far above the baseline a session's cost may rise, in percent. */
  costTolerancePercent: number
  /** Tokens (lost plus provider-side) at which a new or grown break fails. */
  breakThresholdTokens: number
  /** Fail on changes for the better too (the baseline is stale). */
  strict: boolean
}

/** What the gate compares. */
export interface GateInput {
  baseline: GateSide
  run: GateSide
  /** The run's scenario claims (only failed ones matter). */
  claims: readonly ClaimResult[]
  /** Impossible rows of the run (see sanity.ts). */
  rowProblems: readonly string[]
  options: GateOptions
}

/** A step whose hit ratio fell by more than the tolerance against the same (turn, step, attempt). */
export interface FallenStep {
  turn: number
  step: number
  attempt: number
  baselineHitRatio: number
  runHitRatio: number
  deltaPoints: number
  breakCause: BreakCause | undefined
}

/** One thing the gate found. */
export type Finding =
  | { kind: 'missing-session'; key: SessionKey }
  | { kind: 'new-session'; key: SessionKey }
  | {
      kind: 'hit-ratio'
      key: SessionKey
      baseline: number
      /** Undefined when the run has no warm request in the session. */
      run: number | undefined
      deltaPoints: number | undefined
      fallenSteps: FallenStep[] | undefined
    }
  | { kind: 'cost'; key: SessionKey; baseline: number; run: number; deltaPercent: number }
  | { kind: 'new-break'; entry: BreakRow }
  | { kind: 'break-gone'; entry: BreakRow }
  | { kind: 'break-changed'; baseline: BreakRow; run: BreakRow }
  | { kind: 'claim'; claim: ClaimResult }
  | { kind: 'row'; problem: string }

/** The verdict. */
export interface GateResult {
  /** Baseline sessions checked. */
  checked: number
  options: GateOptions
  /** What fails the gate. */
  failures: Finding[]
  /** Changes that only mean the baseline is stale (they fail under `strict`). */
  changes: Finding[]
  passed: boolean
}

/** Check a run against a baseline. */
export function checkBaseline(input: GateInput): GateResult {
  const { options } = input
  const failures: Finding[] = []
  const changes: Finding[] = []
  const run = new Map(input.run.summary.map((row) => [sessionKeyString(row), row]))
  const baselineKeys = new Set(input.baseline.summary.map((row) => sessionKeyString(row)))
  for (const baseline of input.baseline.summary) {
    const key = keyOf(baseline)
    const current = run.get(sessionKeyString(key))
    if (current === undefined) {
      failures.push({ kind: 'missing-session', key })
      continue
    }
    compareRatio(baseline, current, input, failures, changes)
    compareCost(baseline, current, options, failures, changes)
  }
  for (const row of input.run.summary) {
    if (!baselineKeys.has(sessionKeyString(row))) changes.push({ kind: 'new-session', key: keyOf(row) })
  }
  if (input.baseline.breaks !== undefined && input.run.breaks !== undefined) {
    compareBreaks(input.baseline.breaks, input.run.breaks, baselineKeys, options, failures, changes)
  }
  for (const claim of input.claims) if (claim.status === 'fails') failures.push({ kind: 'claim', claim })
  for (const problem of input.rowProblems) failures.push({ kind: 'row', problem })
  const passed = failures.length === 0 && !(options.strict && changes.length > 0)
  return { checked: input.baseline.summary.length, options, failures, changes, passed }
}

const keyOf = (row: SessionKey): SessionKey => ({
  scenario: row.scenario,
  variant: row.variant,
  provider: row.provider,
})

function compareRatio(
  baseline: SummaryRow,
  current: SummaryRow,
  input: GateInput,
  failures: Finding[],
  changes: Finding[],
): void {
  // A baseline session without warm requests has no ratio to hold; being present is enough.
  if (baseline.hitRatioWarm === undefined) return
  const tolerance = input.options.tolerancePoints
  const deltaPoints =
    current.hitRatioWarm === undefined ? undefined : (current.hitRatioWarm - baseline.hitRatioWarm) * 100
  const finding = {
    kind: 'hit-ratio' as const,
    key: keyOf(baseline),
    baseline: baseline.hitRatioWarm,
    run: current.hitRatioWarm,
    deltaPoints,
  }
  if (deltaPoints === undefined || -deltaPoints > tolerance + EPSILON) {
    const { steps: baselineSteps } = input.baseline
    const { steps: runSteps } = input.run
    failures.push({
      ...finding,
      fallenSteps:
        baselineSteps === undefined || runSteps === undefined
          ? undefined
          : fallenSteps(finding.key, baselineSteps, runSteps, tolerance),
    })
  } else if (deltaPoints > tolerance + EPSILON) {
    changes.push({ ...finding, fallenSteps: undefined })
  }
}

function compareCost(
  baseline: SummaryRow,
  current: SummaryRow,
  options: GateOptions,
  failures: Finding[],
  changes: Finding[],
): void {
  if (baseline.costUsd <= 0) return
  const deltaPercent = ((current.costUsd - baseline.costUsd) / baseline.costUsd) * 100
  const finding = {
    kind: 'cost' as const,
    key: keyOf(baseline),
    baseline: baseline.costUsd,
    run: current.costUsd,
    deltaPercent,
  }
  if (deltaPercent > options.costTolerancePercent + EPSILON) failures.push(finding)
  else if (-deltaPercent > options.costTolerancePercent + EPSILON) changes.push(finding)
}

/** Breaks keyed by session and (turn, step, attempt), repeats told apart by occurrence. */
function indexBreaks(entries: readonly BreakRow[]): Map<string, BreakRow> {
  const seen = new Map<string, number>()
  const indexed = new Map<string, BreakRow>()
  for (const entry of entries) {
    const position = `${sessionKeyString(entry)}\u0000${entry.turn}.${entry.step}.${entry.attempt}`
    const occurrence = seen.get(position) ?? 0
    seen.set(position, occurrence + 1)
    indexed.set(`${position}#${occurrence}`, entry)
  }
  return indexed
}

function compareBreaks(
  baselineBreaks: readonly BreakRow[],
  runBreaks: readonly BreakRow[],
  baselineSessions: ReadonlySet<string>,
  options: GateOptions,
  failures: Finding[],
  changes: Finding[],
): void {
  const threshold = options.breakThresholdTokens
  const baseline = indexBreaks(baselineBreaks)
  const run = indexBreaks(runBreaks)
  for (const [position, entry] of run) {
    // A session the baseline does not hold is a new session, listed once as such.
    if (!baselineSessions.has(sessionKeyString(entry))) continue
    const before = baseline.get(position)
    if (before === undefined) {
      if (breakTokens(entry) >= threshold) failures.push({ kind: 'new-break', entry })
      else changes.push({ kind: 'new-break', entry })
      continue
    }
    const grown = breakTokens(entry) - breakTokens(before)
    if (grown > threshold) failures.push({ kind: 'break-changed', baseline: before, run: entry })
    else if (
      -grown > threshold ||
      before.cause !== entry.cause ||
      before.providerCause !== entry.providerCause ||
      before.node !== entry.node
    )
      changes.push({ kind: 'break-changed', baseline: before, run: entry })
  }
  for (const [position, entry] of baseline) {
    if (!run.has(position) && baselineSessions.has(sessionKeyString(entry)))
      changes.push({ kind: 'break-gone', entry })
  }
}

/** The session's steps that fell, matched by (turn, step, attempt) and, for repeats, by occurrence. */
function fallenSteps(
  key: SessionKey,
  baselineSteps: readonly StepRow[],
  runSteps: readonly StepRow[],
  tolerancePoints: number,
): FallenStep[] {
  const session = sessionKeyString(key)
  const index = (rows: readonly StepRow[]) => {
    const seen = new Map<string, number>()
    const indexed = new Map<string, StepRow>()
    for (const row of rows) {
      if (sessionKeyString(row) !== session) continue
      const position = `${row.turn}.${row.step}.${row.attempt}`
      const occurrence = seen.get(position) ?? 0
      seen.set(position, occurrence + 1)
      indexed.set(`${position}#${occurrence}`, row)
    }
    return indexed
  }
  const baseline = index(baselineSteps)
  const fallen: FallenStep[] = []
  for (const [position, row] of index(runSteps)) {
    const before = baseline.get(position)
    if (before?.hitRatio === undefined || row.hitRatio === undefined) continue
    const deltaPoints = (row.hitRatio - before.hitRatio) * 100
    if (-deltaPoints <= tolerancePoints + EPSILON) continue
    fallen.push({
      turn: row.turn,
      step: row.step,
      attempt: row.attempt,
      baselineHitRatio: before.hitRatio,
      runHitRatio: row.hitRatio,
      deltaPoints,
      breakCause: row.breakCause,
    })
  }
  return fallen
}

const LISTED_STEPS = 5

/** One finding as a line a person acts on. */
export function findingLine(finding: Finding): string {
  switch (finding.kind) {
    case 'missing-session':
      return `${sessionLabel(finding.key)}: missing from the run`
    case 'new-session':
      return `${sessionLabel(finding.key)}: not in the baseline`
    case 'hit-ratio': {
      const change =
        finding.run === undefined
          ? 'no warm requests in the run'
          : `${percentText(finding.baseline)} → ${percentText(finding.run)} (${pointsText(finding.deltaPoints)} pp)`
      return `${sessionLabel(finding.key)}: warm hit ratio ${change}${stepsText(finding.fallenSteps)}`
    }
    case 'cost':
      return `${sessionLabel(finding.key)}: cost ${dollarText(finding.baseline)} → ${dollarText(finding.run)} (${finding.deltaPercent >= 0 ? '+' : ''}${finding.deltaPercent.toFixed(2)}%)`
    case 'new-break':
      return `new break: ${breakLine(finding.entry)}`
    case 'break-gone':
      return `break gone: ${breakLine(finding.entry)}`
    case 'break-changed': {
      const delta = breakTokens(finding.run) - breakTokens(finding.baseline)
      return `break changed (${delta >= 0 ? '+' : '-'}${countText(Math.abs(delta))} tokens): ${breakLine(finding.run)}; baseline: ${breakLine(finding.baseline).split(': ').slice(1).join(': ')}`
    }
    case 'claim':
      return `claim failed: ${finding.claim.scenario} on ${finding.claim.provider}: ${finding.claim.text} Observed: ${finding.claim.observed}`
    case 'row':
      return `impossible row: ${finding.problem}`
  }
}

function stepsText(steps: readonly FallenStep[] | undefined): string {
  if (steps === undefined || steps.length === 0) return ''
  const listed = steps.slice(0, LISTED_STEPS).map((step) => {
    const cause = step.breakCause === undefined ? '' : ` ${step.breakCause}`
    return `${stepLabel(step)} ${pointsText(step.deltaPoints)}pp${cause}`
  })
  const more = steps.length - listed.length
  return `; steps that fell: ${listed.join(', ')}${more > 0 ? ` (+${more} more)` : ''}`
}

/** The verdict for a person: what fails, what changed, and one closing line. */
export function gateReport(result: GateResult): string {
  const { options } = result
  const tolerances = `hit ratio ${options.tolerancePoints} pp, cost ${options.costTolerancePercent}%, breaks ${countText(options.breakThresholdTokens)} tokens`
  const lines: string[] = []
  for (const finding of result.failures) lines.push(`FAIL  ${findingLine(finding)}`)
  if (result.changes.length > 0) {
    if (lines.length > 0) lines.push('')
    lines.push(
      `changed${options.strict ? ' (fails with --strict)' : ''} — refresh the baseline if intended (npm run baseline):`,
    )
    for (const finding of result.changes) lines.push(`  ${findingLine(finding)}`)
  }
  if (lines.length > 0) lines.push('')
  if (result.passed) {
    lines.push(
      `OK: ${result.checked} of ${result.checked} baseline sessions hold (tolerances: ${tolerances}), no claim fails`,
    )
  } else {
    const changed = options.strict && result.changes.length > 0 ? ` and ${result.changes.length} changes` : ''
    lines.push(
      `check failed: ${result.failures.length} failures${changed} over ${result.checked} baseline sessions (tolerances: ${tolerances}).`,
    )
  }
  lines.push(
    "hit ratios are token-weighted: cache-read tokens / input tokens of the successful requests after each session's first; break tokens are lost plus provider-side.",
  )
  return lines.join('\n')
}
