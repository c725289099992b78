// The baseline gate. Every baseline session the run planned must be in the run, and the run must not be
// worse: no warm hit ratio more than a tolerance lower, no cost more than a tolerance higher, no new break
// and no break grown beyond a token threshold, no failed scenario claim, no impossible row. Changes for the
// better are listed for a baseline refresh and fail only when strict. A number a side does not know (a
// request answered without usage) is neither worse nor better: it is a note. The verdict is computed
// once, per session; the text, JSON, JUnit and GitHub outputs render it (gate-text.ts, gate-json.ts,
// gate-junit.ts, gate-github.ts).

import { breakTokens } from './breaks.ts'
import { type RunPlan, standing } from './plan.ts'
import { type SessionKey, sessionKeyString } from './session-key.ts'
import { sessionNotes } from './session-notes.ts'
import type { BreakCause, BreakChange, BreakRow, ClaimResult, StepRow, SummaryRow } from './types.ts'

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
  /**
   * The run's plan (plan.json), when its folder has one: only the baseline sessions it planned are judged.
   * Without one (a capture, an import, a run of an older cachelab) every baseline session is.
   */
  plan?: RunPlan | undefined
}

/** An impossible row of the run: the session it is in, and what is wrong (see sanity.ts). */
export interface RowProblem {
  key: SessionKey
  /** `append-only · default · anthropic 1.2: lost_tokens -5 is outside 0..input (1000)`. */
  text: string
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
  /** Impossible rows of the run (see sanity.ts), with their session where known. */
  rowProblems: readonly (string | RowProblem)[]
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
  | {
      kind: 'missing-session'
      key: SessionKey
      /**
       * `absent`: the run planned the session (or has no plan) and has no row of it; `not-planned`: the
       * run's selection covers it, yet the run did not plan it (a variant its model cannot serve, a
       * scenario or variant it no longer has), with the plan's reason where it gives one.
       */
      why: 'absent' | 'not-planned'
      reason?: string
    }
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
  | { kind: 'row'; problem: string; key?: SessionKey }
  | {
      kind: 'usage-not-reported'
      key: SessionKey
      /** Requests answered without usage, of all requests, on each side. */
      baseline: { unreported: number; requests: number }
      run: { unreported: number; requests: number }
      /** What was not compared because of them (`cost`, `warm hit ratio`, `2 breaks`). */
      unknown: string[]
    }
  /**
   * What the run's session did not ask for (`sessionNotes`: nothing marked for caching, no prompt above the
   * model's caching minimum): a warning, never a failure by itself (a session that lost the caching its
   * baseline had fails on its hit ratio).
   */
  | { kind: 'client-note'; key: SessionKey; note: string }

/** A session's model in the baseline and in the run. */
export interface ModelChange {
  baseline: string
  run: string
}

/** The verdict on one baseline session the run planned. */
export interface SessionVerdict {
  key: SessionKey
  /** `fails` when any finding of the session fails the gate (its changes too, under `strict`). */
  status: 'holds' | 'fails'
  failures: Finding[]
  changes: Finding[]
  notes: Finding[]
}

/**
 * Baseline sessions of one scenario and provider that a capture did not name as the baseline did, beside
 * the run's sessions the baseline lacks: most often a name that changes every run.
 */
export interface UnmatchedSessions {
  scenario: string
  provider: SessionKey['provider']
  /** The baseline's sessions absent from the run. */
  missing: SessionKey[]
  /** The run's sessions absent from the baseline. */
  unmatched: SessionKey[]
  /**
   * How the run's sessions got their names: `first-message` (no header, no agent session id: a hash of
   * the first message, `c-…`), `agent-session` (the agent's own session id, new every run), `named` (an
   * `x-cachelab-session` header or a conversation key, which differ from the baseline's).
   */
  naming: 'first-message' | 'agent-session' | 'named'
}

/** Which baseline sessions the gate judged. */
export interface GateScope {
  /** The run's plan, where its folder has one; without one every baseline session is judged. */
  plan: RunPlan | undefined
  /** Baseline sessions the run's plan leaves out (`--scenario` and the like on run): not judged. */
  outside: SessionKey[]
}

/** The verdict. */
export interface GateResult {
  /** Baseline sessions judged: those the run planned (every one, without a plan). */
  checked: number
  options: GateOptions
  /** One verdict per judged baseline session, in the baseline's order. */
  sessions: SessionVerdict[]
  scope: GateScope
  /** The run's scenario claims as given, holding or not (a failed one is also in `failures`). */
  claims: ClaimResult[]
  /** Captured sessions the run named otherwise than the baseline, and how they were named. */
  unmatched: UnmatchedSessions[]
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
  const judged: SessionKey[] = []
  const outside: SessionKey[] = []
  // Sessions on both sides, whose breaks are compared.
  const compared = new Set<string>()
  const { plan } = input.run
  for (const baseline of input.baseline.summary) {
    const key = keyOf(baseline)
    const standsAs = plan === undefined ? ({ kind: 'planned' } as const) : standing(plan, key)
    if (standsAs.kind === 'outside') {
      outside.push(key)
      continue
    }
    judged.push(key)
    if (standsAs.kind === 'not-planned') {
      failures.push({
        kind: 'missing-session',
        key,
        why: 'not-planned',
        ...(standsAs.reason !== undefined ? { reason: standsAs.reason } : {}),
      })
      continue
    }
    const current = run.get(sessionKeyString(key))
    if (current === undefined) {
      failures.push({ kind: 'missing-session', key, why: 'absent' })
      continue
    }
    compared.add(sessionKeyString(key))
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
      compared,
      options,
      failures,
      changes,
      unreportedSteps(input.baseline.steps, input.run.steps),
      note,
    )
  }
  for (const claim of input.claims) if (claim.status === 'fails') failures.push({ kind: 'claim', claim })
  for (const problem of input.rowProblems)
    failures.push(
      typeof problem === 'string'
        ? { kind: 'row', problem }
        : { kind: 'row', problem: problem.text, key: problem.key },
    )
  const notes = [...usageNotes(input, unknown), ...clientNotes(input.run.summary, judged)]
  const passed = failures.length === 0 && !(options.strict && changes.length > 0)
  return {
    checked: judged.length,
    options,
    sessions: sessionVerdicts(judged, failures, changes, notes, options.strict),
    scope: { plan, outside },
    claims: [...input.claims],
    unmatched: plan === undefined ? unmatchedSessions(failures, changes, input.run.summary) : [],
    failures,
    changes,
    notes,
    passed,
  }
}

/** The session a finding is about, where it is about one (a claim reads several; a row names its own). */
export function findingKey(finding: Finding): SessionKey | undefined {
  switch (finding.kind) {
    case 'missing-session':
    case 'new-session':
    case 'hit-ratio':
    case 'cost':
    case 'usage-not-reported':
    case 'client-note':
      return finding.key
    case 'new-break':
    case 'break-gone':
      return keyOf(finding.entry)
    case 'break-changed':
      return keyOf(finding.run)
    case 'row':
      return finding.key
    case 'claim':
      return undefined
  }
}

/** What changed at the break a finding is about, where the break's change is known. */
export function findingChange(finding: Finding): BreakChange | undefined {
  switch (finding.kind) {
    case 'new-break':
    case 'break-gone':
      return finding.entry.change
    case 'break-changed':
      return finding.run.change
    default:
      return undefined
  }
}

/** Each judged session with its own findings. */
function sessionVerdicts(
  judged: readonly SessionKey[],
  failures: readonly Finding[],
  changes: readonly Finding[],
  notes: readonly Finding[],
  strict: boolean,
): SessionVerdict[] {
  const verdicts = new Map<string, SessionVerdict>(
    judged.map((key) => [
      sessionKeyString(key),
      { key, status: 'holds', failures: [], changes: [], notes: [] } satisfies SessionVerdict,
    ]),
  )
  const file = (findings: readonly Finding[], into: 'failures' | 'changes' | 'notes') => {
    for (const finding of findings) {
      const key = findingKey(finding)
      const verdict = key === undefined ? undefined : verdicts.get(sessionKeyString(key))
      verdict?.[into].push(finding)
    }
  }
  file(failures, 'failures')
  file(changes, 'changes')
  file(notes, 'notes')
  for (const verdict of verdicts.values())
    if (verdict.failures.length > 0 || (strict && verdict.changes.length > 0)) verdict.status = 'fails'
  return [...verdicts.values()]
}

/** A name cachelab gave a captured conversation from its first message: `c-1a2b3c4d`, `codex-c-1a2b3c4d`. */
const FIRST_MESSAGE_NAME = /(?:^|-)c-[0-9a-f]{8}(?:$|[.-])/

/**
 * Per scenario and provider, the baseline sessions absent from the run beside the run's sessions the
 * baseline lacks, and how the run named its own: what a capture needs to be matched next time.
 */
function unmatchedSessions(
  failures: readonly Finding[],
  changes: readonly Finding[],
  runSummary: readonly SummaryRow[],
): UnmatchedSessions[] {
  const groups = new Map<string, UnmatchedSessions>()
  const group = (key: SessionKey) => {
    const id = `${key.scenario}\u0000${key.provider}`
    const found = groups.get(id) ?? {
      scenario: key.scenario,
      provider: key.provider,
      missing: [],
      unmatched: [],
      naming: 'named' as const,
    }
    groups.set(id, found)
    return found
  }
  for (const finding of failures)
    if (finding.kind === 'missing-session') group(finding.key).missing.push(finding.key)
  for (const finding of changes)
    if (finding.kind === 'new-session') group(finding.key).unmatched.push(finding.key)
  const rows = new Map(runSummary.map((row) => [sessionKeyString(row), row]))
  return [...groups.values()]
    .filter((entry) => entry.missing.length > 0 && entry.unmatched.length > 0)
    .map((entry) => ({
      ...entry,
      naming: entry.unmatched.some((key) => FIRST_MESSAGE_NAME.test(key.variant))
        ? 'first-message'
        : entry.unmatched.some((key) => rows.get(sessionKeyString(key))?.agent !== undefined)
          ? 'agent-session'
          : 'named',
    }))
}

/** What one side of the gate says of the requests it answered without usage. */
const unreportedOf = (row: SummaryRow | undefined) => ({
  unreported: row?.usageNotReported ?? 0,
  requests: row?.requests ?? 0,
})

/** The notes of the run's judged sessions on what their clients did not ask for. */
function clientNotes(summary: readonly SummaryRow[], judged: readonly SessionKey[]): Finding[] {
  const wanted = new Set(judged.map(sessionKeyString))
  return summary
    .filter((row) => wanted.has(sessionKeyString(row)))
    .flatMap((row) =>
      sessionNotes(row).map((note) => ({ kind: 'client-note' as const, key: keyOf(row), note })),
    )
}

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

/** Compare the breaks of the sessions both sides hold (`compared`). */
function compareBreaks(
  baselineBreaks: readonly BreakRow[],
  runBreaks: readonly BreakRow[],
  compared: ReadonlySet<string>,
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
    if (!compared.has(sessionKeyString(entry))) continue
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
    // A session missing from the run is one failure, not one "break gone" per break it had.
    if (!run.has(position) && compared.has(sessionKeyString(entry)) && !unknownAt(entry))
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
