// `cachelab compare A B [C …]`: runs side by side, the first the baseline. Each argument is a summary.csv
// or a steps.csv (told by its header; steps are summarized first) or a run folder (its summary.csv). Two
// runs keep the pairwise table with its deltas; more get one column per run, each against A.
// Informational, so it exits 0 whatever the numbers say.

import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import {
  compareRuns,
  compareSummaries,
  comparisonTable,
  runLabel,
  runsComparisonTable,
} from '../reports/compare.ts'
import { readReportCsv } from '../reports/load.ts'
import { summarize } from '../reports/summary.ts'
import type { SummaryRow } from '../reports/types.ts'
import { parse } from './args.ts'

export function compareCommand(argv: string[]): number {
  const { positionals } = parse(argv, {}, true)
  if (positionals.length < 2)
    throw new CachelabError(
      'usage',
      `compare needs two files or more, got ${positionals.length}: cachelab compare A.csv B.csv [C.csv …]`,
    )
  const loaded = positionals.map(load)
  const heads = loaded.map((run, index) => `${runLabel(index)}: ${run.path} (${run.described})`)
  const [a, b] = loaded
  const table =
    loaded.length === 2 && a !== undefined && b !== undefined
      ? comparisonTable(compareSummaries(a.rows, b.rows))
      : runsComparisonTable(compareRuns(loaded.map((run) => run.rows)), loaded.length)
  process.stdout.write(`${heads.join('\n')}\n\n${table}\n`)
  return 0
}

/** A run given as a CSV file or as a run folder (its summary.csv). */
function load(given: string): { path: string; rows: SummaryRow[]; described: string } {
  const path = existsSync(given) && statSync(given).isDirectory() ? join(given, 'summary.csv') : given
  const report = readReportCsv(path)
  const rows = report.kind === 'summary' ? report.rows : summarize(report.rows)
  const runIds = [...new Set(report.rows.map((row) => row.runId))]
  const runs = runIds.length === 0 ? 'no rows' : `run ${runIds.join(', ')}`
  return { path, rows, described: `${report.kind}.csv, ${runs}` }
}
