// `cachelab import FILE|DIR... [--format auto|claude-code|codex|dsh|pi] [--out DIR] [--lenient] [--ttl 1h]`:
// an agent's own session files as the run's files (steps.csv, summary.csv, breaks.csv, report.html) plus
// rewrites.csv, the table of what every cache write and miss was for; the summary and that table printed.

import { writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { stringify } from 'csv-stringify/sync'
import { CachelabError } from '../harness/errors.ts'
import { detectFormat, predictObserved, READERS } from '../providers/transcripts/index.ts'
import { TRANSCRIPT_FORMATS, type TranscriptFormat } from '../providers/transcripts/types.ts'
import {
  costWithHourTtl,
  type ObservedRow,
  type RewriteSummary,
  rewritesTable,
} from '../reports/observed-rows.ts'
import { summaryTable } from '../reports/table.ts'
import { countText, dollarText, percentText } from '../reports/text-table.ts'
import { parse } from './args.ts'
import { type ImportOptions, importTranscripts } from './import.ts'
import { exportForCommand, exportLine, OTEL_FLAGS, otelExport } from './otel-option.ts'
import { timestamp, writeRunFiles } from './run.ts'

/** The `rewrites.csv` columns, in order. */
export const REWRITE_COLUMNS = [
  'class',
  'requests',
  'write_tokens',
  'write_share',
  'missed_tokens',
  'lost_usd',
] as const

/** The rewrites table as CSV. */
export function rewritesCsv(table: readonly RewriteSummary[]): string {
  return stringify([
    [...REWRITE_COLUMNS],
    ...table.map((entry) => [
      entry.class,
      String(entry.requests),
      String(entry.writeTokens),
      entry.writeShare.toFixed(6),
      String(entry.missedTokens),
      entry.lostUsd.toFixed(8),
    ]),
  ])
}

/** The rewrites table as the terminal shows it. */
function rewritesText(table: readonly RewriteSummary[]): string[] {
  return [
    'what the cache writes and misses were for (write tokens, their share, tokens the previous request left cached and this one missed, what that cost):',
    ...table.map(
      (entry) =>
        `  ${entry.class.padEnd(16)} ${String(entry.requests).padStart(6)} requests  ${countText(entry.writeTokens).padStart(12)} written (${percentText(entry.writeShare).padStart(7)})  ${countText(entry.missedTokens).padStart(12)} missed  ${dollarText(entry.lostUsd)}`,
    ),
  ]
}

/** Per session, the cost as recorded and with a 1-hour lifetime. */
function hourTtlText(entries: readonly ObservedRow[]): string[] {
  const sessions = new Map<string, ObservedRow[]>()
  for (const entry of entries) {
    const key = `${entry.row.scenario} · ${entry.row.variant} · ${entry.row.provider}`
    sessions.set(key, [...(sessions.get(key) ?? []), entry])
  }
  const lines = [
    'with every Anthropic prefix living 1 hour (--ttl 1h; writes at the 1-hour price, expiries under an hour read):',
  ]
  let actual = 0
  let hour = 0
  for (const [key, rows] of sessions) {
    const recorded = rows.reduce((sum, entry) => sum + entry.row.costUsd, 0)
    const withHour = costWithHourTtl(rows)
    actual += recorded
    hour += withHour
    lines.push(`  ${key}: ${dollarText(recorded)} recorded, ${dollarText(withHour)} with 1h`)
  }
  lines.push(
    `  all: ${dollarText(actual)} recorded, ${dollarText(hour)} with 1h (${dollarText(hour - actual)})`,
  )
  return lines
}

export async function importCommand(
  argv: string[],
  defaults: Pick<ImportOptions, 'readers' | 'detect' | 'predict'> = {
    readers: READERS,
    detect: detectFormat,
    predict: predictObserved,
  },
): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      format: { type: 'string' },
      out: { type: 'string' },
      lenient: { type: 'boolean' },
      ttl: { type: 'string' },
      ...OTEL_FLAGS,
    },
    true,
  )
  if (positionals.length === 0)
    throw new CachelabError(
      'usage',
      'import needs at least one transcript file or directory: cachelab import FILE|DIR...',
    )
  const format = values.format ?? 'auto'
  if (format !== 'auto' && !TRANSCRIPT_FORMATS.includes(format as TranscriptFormat))
    throw new CachelabError('usage', `--format must be auto, ${TRANSCRIPT_FORMATS.join(', ')}, not ${format}`)
  if (values.ttl !== undefined && values.ttl !== '1h')
    throw new CachelabError('usage', `--ttl takes 1h (the counterfactual lifetime), not ${values.ttl}`)
  // Imported rows keep Unix time: the spans sit at the recorded times.
  const otel = otelExport(values, 0)
  const result = await importTranscripts(positionals, {
    ...defaults,
    format: format as TranscriptFormat | 'auto',
    lenient: values.lenient === true,
  })
  const rows = result.entries.map((entry) => entry.row)
  const outDir = resolve(values.out ?? join('reports', 'out', `import-${timestamp()}`))
  const { summaries } = writeRunFiles(outDir, { runId: result.runId, rows, scenarios: [] })
  const table = rewritesTable(result.entries)
  writeFileSync(join(outDir, 'rewrites.csv'), rewritesCsv(table))
  const lines = [summaryTable(summaries), '', ...rewritesText(table), '']
  if (values.ttl === '1h') lines.push(...hourTtlText(result.entries), '')
  if (result.mappedModels.size > 0)
    lines.push(
      `models priced as the nearest catalog model: ${[...result.mappedModels].map(([from, to]) => `${from} as ${to}`).join(', ')}`,
    )
  if (result.problems.length > 0)
    lines.push(
      `${result.problems.length} lines skipped (--lenient): ${result.problems
        .slice(0, 3)
        .map((problem) => `${problem.where}: ${problem.message}`)
        .join('; ')}${result.problems.length > 3 ? '; …' : ''}`,
    )
  lines.push(
    `import ${result.runId}: ${rows.length} requests from ${result.files.length} files; wrote ${relative(process.cwd(), outDir) || '.'}/{steps.csv,summary.csv,breaks.csv,rewrites.csv,report.html}`,
  )
  if (otel !== undefined) lines.push(exportLine(await exportForCommand(rows, otel)))
  process.stdout.write(`${lines.join('\n')}\n`)
  return 0
}
