// `cachelab report CAPTURE_DIR [--out DIR]`: a capture of a client's traffic (serve --record) turned into
// the same steps.csv, summary.csv, breaks.csv, claims.csv and report.html as a run, so `check` gates it
// like one. Each session file is read in turn: memory holds one session's exchanges, not the capture.

import { relative, resolve } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import { openCapture } from '../providers/capture/store.ts'
import type { CapturedExchange } from '../providers/capture/tracker.ts'
import { breakLine, breaksOf } from '../reports/breaks.ts'
import { CAPTURE_SCENARIO, CaptureRowBuilder } from '../reports/capture-rows.ts'
import { summaryTable } from '../reports/table.ts'
import type { StepRow } from '../reports/types.ts'
import { parse } from './args.ts'
import { writeRunFiles } from './run.ts'

/** A capture's rows and what the report says about how its sessions were told apart. */
export interface CaptureReport {
  runId: string
  rows: StepRow[]
  /** Sessions by how they were told: header, conversation-key, continuation (joined), new. */
  identities: Record<CapturedExchange['identity'], number>
  /** Torn last lines (the server stopped mid-write), as `file:line`. */
  torn: string[]
}

/** Read a capture directory into rows. */
export function reportCapture(dir: string, scenario = CAPTURE_SCENARIO): CaptureReport {
  const capture = openCapture(dir)
  const rows: StepRow[] = []
  const torn: string[] = []
  const identities = { header: 0, 'conversation-key': 0, continuation: 0, new: 0 }
  for (const session of capture.sessions) {
    const builder = new CaptureRowBuilder({ runId: capture.manifest.id, scenario })
    const exchanges = capture.read(session, (where) => torn.push(where))
    const first = exchanges[0]
    if (first !== undefined) identities[first.identity] += 1
    for (const exchange of exchanges) rows.push(builder.add(exchange))
  }
  return { runId: capture.manifest.id, rows, identities, torn }
}

export function reportCommand(argv: string[]): number {
  const { values, positionals } = parse(argv, { out: { type: 'string' }, scenario: { type: 'string' } }, true)
  const [dir] = positionals
  if (dir === undefined || positionals.length !== 1)
    throw new CachelabError(
      'usage',
      `report needs one capture directory, got ${positionals.length}: cachelab report CAPTURE_DIR [--out DIR]`,
    )
  const report = reportCapture(dir, values.scenario ?? CAPTURE_SCENARIO)
  const outDir = resolve(values.out ?? dir)
  const { summaries } = writeRunFiles(outDir, { runId: report.runId, rows: report.rows, scenarios: [] })
  const breaks = breaksOf(report.rows)
  const succeeded = report.rows.filter((row) => row.ok).length
  const lines = [summaryTable(summaries), '']
  if (breaks.length > 0) lines.push('breaks:', ...breaks.map((entry) => `  ${breakLine(entry)}`), '')
  const { header, continuation } = report.identities
  const keyed = report.identities['conversation-key']
  lines.push(
    `sessions: ${summaries.length} (${header} by header, ${keyed} by conversation key, ${report.identities.new} by conversation${continuation > 0 ? `, ${continuation} joined` : ''})`,
    `capture ${report.runId}: ${succeeded} requests, ${report.rows.length - succeeded} failed attempts; wrote ${relative(process.cwd(), outDir) || '.'}/{steps.csv,summary.csv,breaks.csv,claims.csv,report.html}`,
  )
  process.stdout.write(`${lines.join('\n')}\n`)
  for (const where of report.torn)
    process.stderr.write(`cachelab report: ${where}: torn last line (not read)\n`)
  return 0
}
