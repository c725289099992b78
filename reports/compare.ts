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
  if (a.model !== b.model) return `model ${a.model} -> ${b.model}`
  return ''
}
