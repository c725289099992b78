// A plain-text table for the terminal: the run summary as a user reads it after `cachelab run`.

import type { SummaryRow } from './types.ts'

const percent = (value: number | undefined) => (value === undefined ? '-' : `${(value * 100).toFixed(2)}%`)
const dollars = (value: number) => `$${value.toFixed(4)}`
const count = (value: number) => value.toLocaleString('en-US')

/** Render rows as aligned columns: the first `textColumns` left-aligned, the numbers after them right-aligned. */
export function renderTable(
  header: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  textColumns: number,
): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  )
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column < textColumns ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd()
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n')
}

/**
 * The summary table printed after a run, counting as summary.csv does: successful requests and failed
 * attempts apart. Hit ratios are token-weighted; "warm" excludes each session's first request.
 */
export function summaryTable(rows: readonly SummaryRow[]): string {
  return renderTable(
    [
      'scenario',
      'variant',
      'provider',
      'model',
      'requests',
      'failed attempts',
      'hit (warm)',
      'hit (all)',
      'lost tokens',
      'provider lost',
      'cost',
      'ideal cost',
      'breaks',
      'largest break',
      'claims',
    ],
    rows.map((row) => [
      row.scenario,
      row.loop === 'dsh' ? `${row.variant} (dsh loop)` : row.variant,
      row.provider,
      row.model,
      String(row.requests),
      String(row.failedAttempts),
      percent(row.hitRatioWarm),
      percent(row.hitRatioAll),
      count(row.lostTokens),
      count(row.providerLostTokens),
      dollars(row.costUsd),
      dollars(row.idealCostUsd),
      String(row.breaks),
      row.largestBreak === undefined
        ? '-'
        : `${count(row.largestBreak.lostTokens)} @${row.largestBreak.turn}.${row.largestBreak.step} ${row.largestBreak.cause ?? ''}`.trim(),
      claimsText(row),
    ]),
    4,
  )
}

/** The claims that read a session: how many hold, and the failures called out. */
function claimsText(row: SummaryRow): string {
  const total = row.claimsHeld + row.claimsFailed
  if (total === 0) return '-'
  return row.claimsFailed === 0 ? `${row.claimsHeld}/${total}` : `${row.claimsHeld}/${total} FAIL`
}
