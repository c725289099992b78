// The baseline gate. Every session of the baseline must be in the run, and the run must not be worse:
// no warm hit ratio more than a tolerance lower, no cost more than a tolerance higher, no new break and no
// break grown beyond a token threshold, no failed scenario claim, no impossible row. Changes for the
// better are listed for a baseline refresh and fail only when strict. A number a side does not know (a
// request answered without usage) is neither worse nor better: it is a note.

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
      /** The session's model in the baseline and in the run, where they differ. */
      models?: ModelChange
    }
  | {
      kind: 'cost'
      key: SessionKey
      baseline: number
      run: number
      deltaPercent: number
      /** The session's model in the baseline and in the run, where they differ: the prices changed with it. */
      models?: ModelChange
    }
  | { kind: 'new-break'; entry: BreakRow }
  | { kind: 'break-gone'; entry: BreakRow }
  | { kind: 'break-changed'; baseline: BreakRow; run: BreakRow }
  | { kind: 'claim'; claim: ClaimResult }
  | { kind: 'row'; problem: string }
  | {
      kind: 'usage-not-reported'
      key: SessionKey
      /** Requests answered without usage, of all requests, on each side. */
      baseline: { unreported: number; requests: number }
      run: { unreported: number; requests: number }
      /** What was not compared because of them (`cost`, `warm hit ratio`, `2 breaks`). */
      unknown: string[]
    }

/** A session's model in the baseline and in the run. */
export interface ModelChange {
  baseline: string
  run: string
}

/** The verdict. */
export interface GateResult {
  /** Baseline sessions checked. */
  checked: number
  options: GateOptions
  /** What fails the gate. */
  failures: Finding[]
  /** Changes that only mean the baseline is stale (they fail under `strict`). */
  changes: Finding[]
  /** What the gate could not compare and says so (requests answered without usage); never a failure. */
  notes: Finding[]
  passed: boolean
}

/** Check a run against a baseline. */
export function checkBaseline(input: GateInput): GateResult {
  const { options } = input
  const failures: Finding[] = []
  const changes: Finding[] = []
  const unknown = new Map<string, string[]>()
  const note = (key: SessionKey, what: string) => {
    const id = sessionKeyString(key)
    unknown.set(id, [...(unknown.get(id) ?? []), what])
  }
  const run = new Map(input.run.summary.map((row) => [sessionKeyString(row), row]))
  const baselineKeys = new Set(input.baseline.summary.map((row) => sessionKeyString(row)))
  for (const baseline of input.baseline.summary) {
    const key = keyOf(baseline)
    const current = run.get(sessionKeyString(key))
    if (current === undefined) {
      failures.push({ kind: 'missing-session', key })
      continue
    }
    compareRatio(baseline, current, input, failures, changes, note)
    compareCost(baseline, current, options, failures, changes, note)
  }
  for (const row of input.run.summary) {
    if (!baselineKeys.has(sessionKeyString(row))) changes.push({ kind: 'new-session', key: keyOf(row) })
  }
  if (input.baseline.breaks !== undefined && input.run.breaks !== undefined) {
    compareBreaks(
      input.baseline.breaks,
      input.run.breaks,
      baselineKeys,
      options,
      failures,
      changes,
      unreportedSteps(input.baseline.steps, input.run.steps),
      note,
    )
  }
  for (const claim of input.claims) if (claim.status === 'fails') failures.push({ kind: 'claim', claim })
  for (const problem of input.rowProblems) failures.push({ kind: 'row', problem })
  const notes = usageNotes(input, unknown)
  const passed = failures.length === 0 && !(options.strict && changes.length > 0)
  return { checked: input.baseline.summary.length, options, failures, changes, notes, passed }
}

/** What one side of the gate says of the requests it answered without usage. */
const unreportedOf = (row: SummaryRow | undefined) => ({
  unreported: row?.usageNotReported ?? 0,
  requests: row?.requests ?? 0,
})

/** One note per session with requests answered without usage on either side, naming what was not compared. */
function usageNotes(input: GateInput, unknown: ReadonlyMap<string, string[]>): Finding[] {
  const baseline = new Map(input.baseline.summary.map((row) => [sessionKeyString(row), row]))
  const notes: Finding[] = []
  for (const row of input.run.summary) {
    const id = sessionKeyString(row)
    const before = baseline.get(id)
    if (!baseline.has(id) || ((row.usageNotReported ?? 0) === 0 && (before?.usageNotReported ?? 0) === 0))
      continue
    notes.push({
      kind: 'usage-not-reported',
      key: keyOf(row),
      baseline: unreportedOf(before),
      run: unreportedOf(row),
      unknown: unknown.get(id) ?? [],
    })
  }
  return notes
}

/** The session's model on each side, where they differ. */
function modelChange(baseline: SummaryRow, current: SummaryRow): { models?: ModelChange } {
  return baseline.model === current.model ? {} : { models: { baseline: baseline.model, run: current.model } }
}

/** Whether either side has requests of the session whose usage was not reported. */
const anyUnreported = (baseline: SummaryRow, current: SummaryRow): boolean =>
  (baseline.usageNotReported ?? 0) > 0 || (current.usageNotReported ?? 0) > 0

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
  note: (key: SessionKey, what: string) => void,
): void {
  // Ratios over different sets of requests (one side left some out, answered without usage) do not
  // compare: unknown, neither fallen nor risen.
  if (anyUnreported(baseline, current)) {
    note(keyOf(baseline), 'warm hit ratio')
    return
  }
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
    ...modelChange(baseline, current),
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
  note: (key: SessionKey, what: string) => void,
): void {
  // A cost that leaves out requests answered without usage is not the session's cost: not compared.
  if (anyUnreported(baseline, current)) {
    note(keyOf(baseline), 'cost')
    return
  }
  if (baseline.costUsd <= 0) return
  const deltaPercent = ((current.costUsd - baseline.costUsd) / baseline.costUsd) * 100
  const finding = {
    kind: 'cost' as const,
    key: keyOf(baseline),
    baseline: baseline.costUsd,
    run: current.costUsd,
    deltaPercent,
    ...modelChange(baseline, current),
  }
  if (deltaPercent > options.costTolerancePercent + EPSILON) failures.push(finding)
  else if (-deltaPercent > options.costTolerancePercent + EPSILON) changes.push(finding)
}

/** Where a row or break sits: its session and (turn, step, attempt). */
const positionOf = (entry: SessionKey & { turn: number; step: number; attempt: number }): string =>
  `${sessionKeyString(entry)}\u0000${entry.turn}.${entry.step}.${entry.attempt}`

/** The positions of requests answered without usage, on either side: a break there is not known either way. */
function unreportedSteps(
  baseline: readonly StepRow[] | undefined,
  run: readonly StepRow[] | undefined,
): Set<string> {
  const positions = new Set<string>()
  for (const row of [...(baseline ?? []), ...(run ?? [])])
    if (row.usageNotReported === true) positions.add(positionOf(row))
  return positions
}

/** Breaks keyed by session and (turn, step, attempt), repeats told apart by occurrence. */
function indexBreaks(entries: readonly BreakRow[]): Map<string, BreakRow> {
  const seen = new Map<string, number>()
  const indexed = new Map<string, BreakRow>()
  for (const entry of entries) {
    const position = positionOf(entry)
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
  unreported: ReadonlySet<string>,
  note: (key: SessionKey, what: string) => void,
): void {
  const threshold = options.breakThresholdTokens
  const baseline = indexBreaks(baselineBreaks)
  const run = indexBreaks(runBreaks)
  const unknownBreaks = new Map<string, { key: SessionKey; count: number }>()
  // A break where the other side answered without usage is not known to be new or gone.
  const unknownAt = (entry: BreakRow): boolean => {
    if (!unreported.has(positionOf(entry))) return false
    const id = sessionKeyString(entry)
    const known = unknownBreaks.get(id) ?? { key: keyOf(entry), count: 0 }
    known.count += 1
    unknownBreaks.set(id, known)
    return true
  }
  for (const [position, entry] of run) {
    // A session the baseline does not hold is a new session, listed once as such.
    if (!baselineSessions.has(sessionKeyString(entry))) continue
    const before = baseline.get(position)
    if (before === undefined) {
      if (unknownAt(entry)) continue
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
    if (!run.has(position) && baselineSessions.has(sessionKeyString(entry)) && !unknownAt(entry))
      changes.push({ kind: 'break-gone', entry })
  }
  for (const { key, count } of unknownBreaks.values())
    note(key, `${count} ${count === 1 ? 'break' : 'breaks'}`)
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
          : `${percentText(finding.baseline)} → ${percentText(finding.run)} (${pointsText(finding.deltaPoints)} pp${modelText(finding.models)})`
      return `${sessionLabel(finding.key)}: warm hit ratio ${change}${stepsText(finding.fallenSteps)}`
    }
    case 'cost':
      return `${sessionLabel(finding.key)}: cost ${dollarText(finding.baseline)} → ${dollarText(finding.run)} (${finding.deltaPercent >= 0 ? '+' : ''}${finding.deltaPercent.toFixed(2)}%${modelText(finding.models)})`
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
    case 'usage-not-reported': {
      const side = (counts: { unreported: number; requests: number }, name: string) =>
        counts.unreported === 0
          ? []
          : [`${countText(counts.unreported)} of ${countText(counts.requests)} requests in the ${name}`]
      const sides = [...side(finding.baseline, 'baseline'), ...side(finding.run, 'run')].join(' and ')
      const unknown =
        finding.unknown.length === 0 ? '' : `: ${finding.unknown.join(', ')} unknown, not compared`
      return `${sessionLabel(finding.key)}: usage not reported for ${sides}${unknown}`
    }
  }
}

/** A model change beside a finding: `, model claude-sonnet-4-6 → gpt-4.1`, or nothing. */
function modelText(models: ModelChange | undefined): string {
  return models === undefined ? '' : `, model ${models.baseline} → ${models.run}`
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
  if (result.notes.length > 0) {
    if (lines.length > 0) lines.push('')
    lines.push('not known, so not compared (neither a regression nor an improvement):')
    for (const finding of result.notes) lines.push(`  ${findingLine(finding)}`)
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
