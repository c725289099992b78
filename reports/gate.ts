// The baseline gate: every (scenario, variant, provider) of a baseline must be in the run with a warm hit
// ratio no more than a tolerance below the baseline's. With both runs' steps, it names the steps that fell.

import { unreachable } from '../harness/errors.ts'
import { stepLabel } from './labels.ts'
import { type SessionKey, sessionKeyString } from './session-key.ts'
import { alignedTable, type Column, percentText, pointsText } from './text-table.ts'
import type { BreakCause, StepRow, SummaryRow } from './types.ts'

/** The tolerance when none is given, in percentage points of hit ratio. */
export const DEFAULT_TOLERANCE_POINTS = 0.5

// Ratios come from CSV cells with six decimals; a drop equal to the tolerance must not fail on rounding.
const EPSILON_POINTS = 1e-9

/** What the gate compares. */
export interface GateInput {
  /** The baseline's summary rows: the sessions that must hold. */
  baseline: readonly SummaryRow[]
  /** The checked run's summary rows. */
  run: readonly SummaryRow[]
  /** The baseline's step rows, when it has a steps.csv. */
  baselineSteps?: readonly StepRow[] | undefined
  /** The run's step rows, when it has a steps.csv. */
  runSteps?: readonly StepRow[] | undefined
  /** How far below the baseline a warm hit ratio may fall, in percentage points (0.5 = half a point). */
  tolerancePoints: number
}

/** A step whose hit ratio fell by more than the tolerance against the same (turn, step, attempt). */
export interface FallenStep {
  turn: number
  step: number
  attempt: number
  /** The baseline step's hit ratio (0–1). */
  baselineHitRatio: number
  /** The run step's hit ratio (0–1). */
  runHitRatio: number
  /** Run minus baseline, in percentage points (negative). */
  deltaPoints: number
  /** The run step's break cause, if it broke. */
  breakCause: BreakCause | undefined
}

/** A baseline session that does not hold. */
export type Regression =
  | {
      kind: 'missing'
      /** The session the run lacks. */
      key: SessionKey
      /** The baseline's warm hit ratio (0–1). */
      baselineHitRatio: number | undefined
    }
  | {
      kind: 'fell'
      /** The session that fell. */
      key: SessionKey
      /** The baseline's warm hit ratio (0–1). */
      baselineHitRatio: number
      /** The run's warm hit ratio (0–1); undefined when the run has no warm request in the session. */
      runHitRatio: number | undefined
      /** Run minus baseline in percentage points; undefined with the run's ratio. */
      deltaPoints: number | undefined
      /** Steps that fell; undefined unless both baseline and run have step rows. */
      fallenSteps: FallenStep[] | undefined
    }

/** The verdict. */
export interface GateResult {
  /** Baseline sessions checked. */
  checked: number
  /** The tolerance applied, in percentage points. */
  tolerancePoints: number
  /** The sessions that do not hold, in baseline order; empty when the gate passes. */
  regressions: Regression[]
}

/** Check a run against a baseline. */
export function checkBaseline(input: GateInput): GateResult {
  const run = new Map(input.run.map((row) => [sessionKeyString(row), row]))
  const regressions: Regression[] = []
  for (const baseline of input.baseline) {
    const key = { scenario: baseline.scenario, variant: baseline.variant, provider: baseline.provider }
    const current = run.get(sessionKeyString(key))
    if (current === undefined) {
      regressions.push({ kind: 'missing', key, baselineHitRatio: baseline.hitRatioWarm })
      continue
    }
    // A baseline session without warm requests has no ratio to hold; being present is enough.
    if (baseline.hitRatioWarm === undefined) continue
    const deltaPoints =
      current.hitRatioWarm === undefined ? undefined : (current.hitRatioWarm - baseline.hitRatioWarm) * 100
    if (deltaPoints !== undefined && !fellBeyond(deltaPoints, input.tolerancePoints)) continue
    regressions.push({
      kind: 'fell',
      key,
      baselineHitRatio: baseline.hitRatioWarm,
      runHitRatio: current.hitRatioWarm,
      deltaPoints,
      fallenSteps:
        input.baselineSteps === undefined || input.runSteps === undefined
          ? undefined
          : fallenSteps(key, input.baselineSteps, input.runSteps, input.tolerancePoints),
    })
  }
  return { checked: input.baseline.length, tolerancePoints: input.tolerancePoints, regressions }
}

function fellBeyond(deltaPoints: number, tolerancePoints: number): boolean {
  return -deltaPoints > tolerancePoints + EPSILON_POINTS
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
    if (!fellBeyond(deltaPoints, tolerancePoints)) continue
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

const COLUMNS: readonly Column[] = [
  { title: 'scenario', align: 'left' },
  { title: 'variant', align: 'left' },
  { title: 'provider', align: 'left' },
  { title: 'baseline hit warm', align: 'right' },
  { title: 'run hit warm', align: 'right' },
  { title: 'delta (pp)', align: 'right' },
  { title: 'regression', align: 'left' },
  { title: 'fallen steps (turn.step)', align: 'left' },
]

const LISTED_STEPS = 5

/** The verdict for a person: one line when the gate passes, the regressions as a table otherwise. */
export function gateReport(result: GateResult): string {
  const tolerance = `${result.tolerancePoints} pp`
  if (result.regressions.length === 0)
    return `OK: ${result.checked} of ${result.checked} baseline sessions hold (warm hit ratio within ${tolerance} of the baseline)`
  const rows = result.regressions.map((regression) => {
    const { key } = regression
    switch (regression.kind) {
      case 'missing':
        return [
          key.scenario,
          key.variant,
          key.provider,
          percentText(regression.baselineHitRatio),
          '-',
          '-',
          'missing from run',
          '-',
        ]
      case 'fell':
        return [
          key.scenario,
          key.variant,
          key.provider,
          percentText(regression.baselineHitRatio),
          percentText(regression.runHitRatio),
          pointsText(regression.deltaPoints),
          regression.runHitRatio === undefined ? 'no warm requests in run' : `fell more than ${tolerance}`,
          stepsText(regression.fallenSteps),
        ]
      default:
        return unreachable(regression)
    }
  })
  return [
    alignedTable(COLUMNS, rows),
    '',
    `check failed: ${result.regressions.length} of ${result.checked} baseline sessions regressed (tolerance ${tolerance}).`,
    "hit warm: token-weighted, cache-read tokens / input tokens of the successful requests after each session's first.",
  ].join('\n')
}

function stepsText(steps: readonly FallenStep[] | undefined): string {
  if (steps === undefined) return '- (needs steps.csv in both directories)'
  if (steps.length === 0) return 'none beyond the tolerance'
  const listed = steps.slice(0, LISTED_STEPS).map((step) => {
    const cause = step.breakCause === undefined ? '' : ` ${step.breakCause}`
    return `${stepLabel(step)} ${pointsText(step.deltaPoints)}pp${cause}`
  })
  const more = steps.length - listed.length
  return more > 0 ? `${listed.join(', ')} (+${more} more)` : listed.join(', ')
}
