// `cachelab report CAPTURE_DIR [--out DIR]`: a capture of a client's traffic (serve --record) turned into
// the same steps.csv, summary.csv, breaks.csv, claims.csv and report.html as a run, so `check` gates it
// like one (bin/report.ts reads the capture).

import { relative, resolve } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import { breakLines, breaksOf } from '../reports/breaks.ts'
import { CAPTURE_SCENARIO } from '../reports/capture-rows.ts'
import { FIXED_EPOCH_MS } from '../reports/otel.ts'
import { standInLines, standInUses } from '../reports/stand-ins.ts'
import { summaryTable, wantsColour } from '../reports/table.ts'
import { writeRunFiles } from '../scenarios/run-files.ts'
import { parse } from './args.ts'
import { REPORT_FLAGS } from './commands.ts'
import { exportForCommand, exportLine, otelExport } from './otel-option.ts'
import { type CaptureReport, reportCapture } from './report.ts'

/** How many conversations of each kind, in how many sessions, told apart how. */
export function conversationsLine(report: Pick<CaptureReport, 'identities' | 'kinds'>): string {
  const { kinds, identities } = report
  const conversations = Object.values(kinds).reduce((sum, count) => sum + count, 0)
  const sessions = Object.values(identities).reduce((sum, count) => sum + count, 0)
  const byKind = (Object.entries(kinds) as Array<[string, number]>)
    .filter(([, count]) => count > 0)
    .map(([kind, count]) => `${count} ${kind}`)
  const told = [
    [identities.header, 'by header'],
    [identities.agent, "by the agent's session id"],
    [identities['conversation-key'], 'by conversation key'],
    [identities.new + identities.continuation, 'by conversation'],
  ]
    .filter(([count]) => (count as number) > 0)
    .map(([count, how]) => `${count} ${how}`)
  return `conversations: ${conversations} (${byKind.join(', ') || 'none'}) in ${sessions} session${sessions === 1 ? '' : 's'} (${told.join(', ') || 'none'})`
}

export async function reportCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, REPORT_FLAGS, true)
  const [dir] = positionals
  if (dir === undefined || positionals.length !== 1)
    throw new CachelabError(
      'usage',
      `report needs one capture directory, got ${positionals.length}: cachelab report CAPTURE_DIR [--out DIR]`,
    )
  const report = reportCapture(dir, values.scenario ?? CAPTURE_SCENARIO)
  // A capture's virtual time counts from when recording began: its spans sit at the real times.
  const started = Date.parse(report.started)
  const otel = otelExport(values, Number.isFinite(started) ? started : FIXED_EPOCH_MS)
  const outDir = resolve(values.out ?? dir)
  const { summaries } = writeRunFiles(outDir, {
    runId: report.runId,
    rows: report.rows,
    scenarios: [],
    writer: 'report',
  })
  const breaks = breaksOf(report.rows)
  const succeeded = report.rows.filter((row) => row.ok).length
  const unreported = report.rows.filter((row) => row.usageNotReported === true).length
  const lines = [summaryTable(summaries, { colour: wantsColour(process.stdout, process.env) }), '']
  if (breaks.length > 0) lines.push('breaks:', ...breaks.flatMap((entry) => breakLines(entry)), '')
  const standIns = standInUses(report.rows)
  lines.push(...standInLines(standIns.uses, standIns.totalUsd))
  lines.push(
    conversationsLine(report),
    `capture ${report.runId}: ${succeeded} requests${unreported > 0 ? ` (${unreported} with usage not reported)` : ''}, ${report.rows.length - succeeded} failed attempts; wrote ${relative(process.cwd(), outDir) || '.'}/{steps.csv,summary.csv,breaks.csv,claims.csv,report.html}`,
  )
  if (otel !== undefined) lines.push(exportLine(await exportForCommand(report.rows, otel)))
  process.stdout.write(`${lines.join('\n')}\n`)
  for (const where of report.torn)
    process.stderr.write(`cachelab report: ${where}: torn last line (not read)\n`)
  return 0
}
