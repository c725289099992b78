// `cachelab compare A.csv B.csv`: two runs side by side. Each file is a summary.csv or a steps.csv (told by
// its header; steps are summarized first). Informational, so it exits 0 whatever the numbers say.

import { CachelabError } from '../harness/errors.ts'
import { compareSummaries, comparisonTable } from '../reports/compare.ts'
import { readReportCsv } from '../reports/load.ts'
import { summarize } from '../reports/summary.ts'
import type { SummaryRow } from '../reports/types.ts'
import { parse } from './args.ts'

export function compareCommand(argv: string[]): number {
  const { positionals } = parse(argv, {}, true)
  const [pathA, pathB] = positionals
  if (positionals.length !== 2 || pathA === undefined || pathB === undefined)
    throw new CachelabError(
      'usage',
      `compare needs two files, got ${positionals.length}: cachelab compare A.csv B.csv`,
    )
  const a = load(pathA)
  const b = load(pathB)
  process.stdout.write(
    `A: ${pathA} (${a.described})\nB: ${pathB} (${b.described})\n\n${comparisonTable(compareSummaries(a.rows, b.rows))}\n`,
  )
  return 0
}

function load(path: string): { rows: SummaryRow[]; described: string } {
  const report = readReportCsv(path)
  const rows = report.kind === 'summary' ? report.rows : summarize(report.rows)
  const runIds = [...new Set(report.rows.map((row) => row.runId))]
  const runs = runIds.length === 0 ? 'no rows' : `run ${runIds.join(', ')}`
  return { rows, described: `${report.kind}.csv, ${runs}` }
}
