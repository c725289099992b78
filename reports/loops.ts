// The model loop beside DSH's real loop: for every session both ran, request by request (same turn, step
// and attempt), whether the two wire requests agree segment for segment, the first node where they
// differ, the settings that differ, and each side's usage and break. Written as loops.csv, shown in
// report.html and summed up in the terminal.

import { stringify } from 'csv-stringify/sync'
import type { ProviderId } from '../harness/types.ts'
import type { RequestDigest } from '../providers/wire/digest.ts'
import type { BreakCause, StepRow } from './types.ts'
import { changedSettings } from './wire-attribution.ts'

/** One loop's session: its rows and, per row, its request's digest and its break's event type. */
export interface LoopSession {
  rows: readonly StepRow[]
  digests: ReadonlyArray<RequestDigest | undefined>
  breakEventTypes: ReadonlyArray<string | undefined>
}

/** How the two requests of one step compare. */
export type Agreement =
  /** Every prompt segment the same, in the same order. */
  | 'same'
  /** A segment differs, or one request has segments the other lacks. */
  | 'differs'
  /** Only the model loop sent this step. */
  | 'model-only'
  /** Only DSH sent this step. */
  | 'dsh-only'
  /** A request of the step failed on either side: nothing to compare. */
  | 'failed'

/** One side of a step. */
export interface LoopSide {
  inputTokens: number
  cacheReadTokens: number
  breakCause: BreakCause | undefined
  breakEventSeq: number | undefined
  /** DSH only: the type of the event its break is attributed to. */
  breakEventType: string | undefined
}

/** One step of the side-by-side. */
export interface LoopStep {
  turn: number
  step: number
  attempt: number
  agreement: Agreement
  /** The first wire node where the requests differ (`messages[3].0`, `tools[1]`). */
  firstDifference: string | undefined
  /** Request settings (model, max tokens, thinking) that differ, by wire name. */
  differingSettings: string[]
  model: LoopSide | undefined
  dsh: LoopSide | undefined
}

/** One session both loops ran. */
export interface LoopComparison {
  scenario: string
  variant: string
  provider: ProviderId
  steps: LoopStep[]
}

/**
 * The first segment where two requests differ: its node in `b` when `b` has it, else in `a`; undefined
 * when they agree segment for segment.
 */
export function firstDifference(a: RequestDigest, b: RequestDigest): string | undefined {
  const length = Math.max(a.segments.length, b.segments.length)
  for (let index = 0; index < length; index += 1) {
    const left = a.segments[index]
    const right = b.segments[index]
    if (left?.[1] !== right?.[1]) return (right ?? left)?.[0]
  }
  return undefined
}

function side(row: StepRow, breakEventType: string | undefined): LoopSide {
  return {
    inputTokens: row.inputTokens,
    cacheReadTokens: row.cacheReadTokens,
    breakCause: row.breakCause,
    breakEventSeq: row.breakEventSeq,
    breakEventType,
  }
}

const stepKey = (row: Pick<StepRow, 'turn' | 'step' | 'attempt'>) => `${row.turn}.${row.step}.${row.attempt}`

/** Compare the model loop's session with DSH's, step by step in the model's order (DSH-only steps last). */
export function compareLoops(model: LoopSession, dsh: LoopSession): LoopComparison {
  const first = model.rows[0] ?? dsh.rows[0]
  const dshByStep = new Map(dsh.rows.map((row, index) => [stepKey(row), index]))
  const steps: LoopStep[] = []
  const seen = new Set<string>()
  for (const [index, row] of model.rows.entries()) {
    const key = stepKey(row)
    seen.add(key)
    const other = dshByStep.get(key)
    const dshRow = other === undefined ? undefined : dsh.rows[other]
    const modelSide = side(row, undefined)
    if (dshRow === undefined || other === undefined) {
      steps.push({
        ...position(row),
        agreement: 'model-only',
        firstDifference: undefined,
        differingSettings: [],
        model: modelSide,
        dsh: undefined,
      })
      continue
    }
    const dshSide = side(dshRow, dsh.breakEventTypes[other])
    const a = model.digests[index]
    const b = dsh.digests[other]
    if (a === undefined || b === undefined || !row.ok || !dshRow.ok) {
      steps.push({
        ...position(row),
        agreement: 'failed',
        firstDifference: undefined,
        differingSettings: [],
        model: modelSide,
        dsh: dshSide,
      })
      continue
    }
    const node = firstDifference(a, b)
    steps.push({
      ...position(row),
      agreement: node === undefined ? 'same' : 'differs',
      firstDifference: node,
      differingSettings: changedSettings(a, b),
      model: modelSide,
      dsh: dshSide,
    })
  }
  for (const [index, row] of dsh.rows.entries()) {
    if (seen.has(stepKey(row))) continue
    steps.push({
      ...position(row),
      agreement: 'dsh-only',
      firstDifference: undefined,
      differingSettings: [],
      model: undefined,
      dsh: side(row, dsh.breakEventTypes[index]),
    })
  }
  return {
    scenario: first?.scenario ?? '',
    variant: first?.variant ?? '',
    provider: first?.provider ?? 'deepseek',
    steps,
  }
}

function position(row: StepRow): Pick<LoopStep, 'turn' | 'step' | 'attempt'> {
  return { turn: row.turn, step: row.step, attempt: row.attempt }
}

/** The loops.csv columns, in order. */
export const LOOP_COLUMNS = [
  'scenario',
  'variant',
  'provider',
  'turn',
  'step',
  'attempt',
  'agreement',
  'first_differing_node',
  'differing_settings',
  'model_input_tokens',
  'model_cache_read_tokens',
  'model_break_cause',
  'dsh_input_tokens',
  'dsh_cache_read_tokens',
  'dsh_break_cause',
  'dsh_break_event_seq',
  'dsh_break_event_type',
] as const

const cell = (value: string | number | undefined) => (value === undefined ? '' : String(value))

/** loops.csv: one line per step of every compared session. */
export function loopsCsv(comparisons: readonly LoopComparison[]): string {
  const records = comparisons.flatMap((comparison) =>
    comparison.steps.map((step) => [
      comparison.scenario,
      comparison.variant,
      comparison.provider,
      cell(step.turn),
      cell(step.step),
      cell(step.attempt),
      step.agreement,
      cell(step.firstDifference),
      step.differingSettings.join(' '),
      cell(step.model?.inputTokens),
      cell(step.model?.cacheReadTokens),
      cell(step.model?.breakCause),
      cell(step.dsh?.inputTokens),
      cell(step.dsh?.cacheReadTokens),
      cell(step.dsh?.breakCause),
      cell(step.dsh?.breakEventSeq),
      cell(step.dsh?.breakEventType),
    ]),
  )
  return stringify([[...LOOP_COLUMNS], ...records])
}

/** One line per compared session: how many steps agree, and the first difference. */
export function loopsSummaryLines(comparisons: readonly LoopComparison[]): string[] {
  return comparisons.map((comparison) => {
    const same = comparison.steps.filter((step) => step.agreement === 'same').length
    const first = comparison.steps.find((step) => step.agreement !== 'same')
    const where =
      first === undefined
        ? 'every request agrees node for node'
        : `first difference at turn ${first.turn} step ${first.step}: ${first.firstDifference ?? first.agreement}`
    const read = (pick: (step: LoopStep) => LoopSide | undefined) =>
      comparison.steps.reduce((total, step) => total + (pick(step)?.cacheReadTokens ?? 0), 0)
    return `${comparison.scenario} · ${comparison.variant} · ${comparison.provider}: ${same}/${comparison.steps.length} requests agree; ${where}; cache read model ${read((step) => step.model)}, dsh ${read((step) => step.dsh)}`
  })
}
