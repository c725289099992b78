// Two runs side by side: per (scenario, variant, provider), the warm hit ratio, lost tokens and cost of
// run A and run B and how B differs from A. Informational; the gate (gate.ts) is what fails a build.

import { type SessionKey, sessionKeyString } from './session-key.ts'
import {
  alignedTable,
  type Column,
  countText,
  dollarText,
  percentText,
  pointsText,
  signedDollarText,
} from './text-table.ts'
import type { SummaryRow } from './types.ts'

/** One session of either run, with its summary on each side where it has one. */
export interface ComparisonEntry {
  /** The session compared. */
  key: SessionKey
  /** Its summary in run A; undefined when only run B has it. */
  a: SummaryRow | undefined
  /** Its summary in run B; undefined when only run A has it. */
  b: SummaryRow | undefined
  /** B's warm hit ratio minus A's, in percentage points; undefined unless both have one. */
  hitDeltaPoints: number | undefined
  /** B's cost minus A's in USD; undefined unless both sides have the session. */
  costDeltaUsd: number | undefined
}

/** Pair the sessions of two runs: A's in A's order, then those only B has, in B's order. */
export function compareSummaries(a: readonly SummaryRow[], b: readonly SummaryRow[]): ComparisonEntry[] {
  const inB = new Map(b.map((row) => [sessionKeyString(row), row]))
  const inA = new Set(a.map(sessionKeyString))
  const pairs: Array<[SummaryRow | undefined, SummaryRow | undefined]> = [
    ...a.map((row): [SummaryRow, SummaryRow | undefined] => [row, inB.get(sessionKeyString(row))]),
    ...b
      .filter((row) => !inA.has(sessionKeyString(row)))
      .map((row): [undefined, SummaryRow] => [undefined, row]),
  ]
  return pairs.map(([left, right]) => {
    const labels = (left ?? right) as SummaryRow
    return {
      key: { scenario: labels.scenario, variant: labels.variant, provider: labels.provider },
      a: left,
      b: right,
      hitDeltaPoints:
        left?.hitRatioWarm === undefined || right?.hitRatioWarm === undefined
          ? undefined
          : (right.hitRatioWarm - left.hitRatioWarm) * 100,
      costDeltaUsd: left === undefined || right === undefined ? undefined : right.costUsd - left.costUsd,
    }
  })
}

const COLUMNS: readonly Column[] = [
  { title: 'scenario', align: 'left' },
  { title: 'variant', align: 'left' },
  { title: 'provider', align: 'left' },
  { title: 'hit warm A', align: 'right' },
  { title: 'hit warm B', align: 'right' },
  { title: 'delta (pp)', align: 'right' },
  { title: 'lost A', align: 'right' },
  { title: 'lost B', align: 'right' },
  { title: 'cost A', align: 'right' },
  { title: 'cost B', align: 'right' },
  { title: 'delta cost', align: 'right' },
  { title: 'note', align: 'left' },
]

/** The comparison as a terminal table, with a line stating what the hit ratio is. */
export function comparisonTable(entries: readonly ComparisonEntry[]): string {
  const rows = entries.map((entry) => {
    const { a, b } = entry
    return [
      entry.key.scenario,
      entry.key.variant,
      entry.key.provider,
      a === undefined ? '-' : percentText(a.hitRatioWarm),
      b === undefined ? '-' : percentText(b.hitRatioWarm),
      pointsText(entry.hitDeltaPoints),
      a === undefined ? '-' : countText(a.lostTokens),
      b === undefined ? '-' : countText(b.lostTokens),
      a === undefined ? '-' : dollarText(a.costUsd),
      b === undefined ? '-' : dollarText(b.costUsd),
      entry.costDeltaUsd === undefined ? '-' : signedDollarText(entry.costDeltaUsd),
      noteOf(a, b),
    ]
  })
  return [
    alignedTable(COLUMNS, rows),
    '',
    'hit warm: token-weighted, cache-read tokens / input tokens of the successful requests after each',
    "session's first; delta = B - A.",
  ].join('\n')
}

function noteOf(a: SummaryRow | undefined, b: SummaryRow | undefined): string {
  if (a === undefined) return 'only in B'
  if (b === undefined) return 'only in A'
  const notes = a.model === b.model ? [] : [`model ${a.model} -> ${b.model}`]
  // Sums that leave requests out (answered without usage) are not the session's: said beside them.
  for (const [name, row] of [
    ['A', a],
    ['B', b],
  ] as const)
    if ((row.usageNotReported ?? 0) > 0)
      notes.push(
        `usage not reported for ${countText(row.usageNotReported ?? 0)} of ${countText(row.requests)} in ${name}`,
      )
  return notes.join('; ')
}

/** One session across N runs: its summary in each run where it has one. */
export interface RunsComparisonEntry {
  /** The session compared (its loop included, so library loops stay apart). */
  key: SessionKey
  /** Per run, in the order given; undefined where the run lacks the session. */
  summaries: Array<SummaryRow | undefined>
}

/** The letter naming the run at a position: A, B, …, Z, then R27, R28, … */
export function runLabel(index: number): string {
  return index < 26 ? String.fromCharCode(65 + index) : `R${index + 1}`
}

/** Pair the sessions of N runs: in first-seen order over the runs as given. */
export function compareRuns(runs: ReadonlyArray<readonly SummaryRow[]>): RunsComparisonEntry[] {
  const entries = new Map<string, RunsComparisonEntry>()
  for (const [index, rows] of runs.entries()) {
    for (const row of rows) {
      const id = sessionKeyString(row)
      let entry = entries.get(id)
      if (entry === undefined) {
        entry = {
          key: {
            scenario: row.scenario,
            variant: row.variant,
            provider: row.provider,
            ...(row.loop !== undefined ? { loop: row.loop } : {}),
          },
          summaries: runs.map(() => undefined),
        }
        entries.set(id, entry)
      }
      entry.summaries[index] = row
    }
  }
  return [...entries.values()]
}

/**
 * N runs as a terminal table, the first the baseline: per run its warm hit ratio (the others with their
 * difference from the baseline in points) and cost (with the difference in dollars), then which runs lack
 * the session.
 */
export function runsComparisonTable(entries: readonly RunsComparisonEntry[], runs: number): string {
  const labels = Array.from({ length: runs }, (_, index) => runLabel(index))
  const columns: Column[] = [
    { title: 'scenario', align: 'left' },
    { title: 'variant', align: 'left' },
    { title: 'provider', align: 'left' },
    ...labels.map((label): Column => ({ title: `hit warm ${label}`, align: 'right' })),
    ...labels.map((label): Column => ({ title: `cost ${label}`, align: 'right' })),
    { title: 'note', align: 'left' },
  ]
  const rows = entries.map((entry) => {
    const [baseline] = entry.summaries
    const hits = entry.summaries.map((summary, index) => {
      if (summary === undefined) return '-'
      const text = percentText(summary.hitRatioWarm)
      if (index === 0 || baseline?.hitRatioWarm === undefined || summary.hitRatioWarm === undefined)
        return text
      return `${text} (${pointsText((summary.hitRatioWarm - baseline.hitRatioWarm) * 100)})`
    })
    const costs = entry.summaries.map((summary, index) => {
      if (summary === undefined) return '-'
      if (index === 0 || baseline === undefined) return dollarText(summary.costUsd)
      return `${dollarText(summary.costUsd)} (${signedDollarText(summary.costUsd - baseline.costUsd)})`
    })
    const missing = labels.filter((_, index) => entry.summaries[index] === undefined)
    const loop = entry.key.loop === undefined || entry.key.loop === 'model' ? '' : ` (${entry.key.loop} loop)`
    return [
      entry.key.scenario,
      `${entry.key.variant}${loop}`,
      entry.key.provider,
      ...hits,
      ...costs,
      missing.length === 0 ? '' : `not in ${missing.join(', ')}`,
    ]
  })
  return [
    alignedTable(columns, rows),
    '',
    'hit warm: token-weighted, cache-read tokens / input tokens of the successful requests after each',
    "session's first; in brackets each run's difference from A (the baseline): points, dollars.",
  ].join('\n')
}
