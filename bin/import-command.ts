// `cachelab import [FILE|DIR...] [--agent NAME,…] [--since DATE] [--until DATE] [--format auto|claude-code|codex|copilot|droid|dsh|gemini-cli|kilo|opencode|pi|qwen-code]
// [--out DIR] [--lenient] [--ttl 1h] [--json]
// [--as PROVIDER [--model MODEL]] [--policy consolidate|keep-live]`: an agent's own session files (with no
// path, the standard folders of every agent found under the home: reports/observed/transcripts/discover.ts) as the
// run's files (steps.csv, summary.csv, breaks.csv, report.html) plus rewrites.csv, the table of what every
// cache write and miss was for; the summary and that table printed. `--as` adds counterfactual.csv: the
// sessions whose requests the transcript holds, replayed as another provider. `--policy` adds policy.csv
// and policy-steps.csv: DSH sessions re-derived under a series-start policy. `--json` prints the sessions,
// the rewrites table and what the transcripts left unrecorded as one JSON document instead of the tables.

import { homedir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import {
  type ImportOptions,
  type ImportResult,
  importFiles,
  requireTranscriptFiles,
} from '../reports/import.ts'
import { importExtras, predictLazily } from '../reports/import-extras.ts'
import {
  foundText,
  HourTtlTally,
  hourTtlText,
  importJson,
  pricingText,
  rewritesCsv,
  rewritesText,
  skippedText,
} from '../reports/import-output.ts'
import {
  type AgentFolder,
  agentFolders,
  DISCOVERED_AGENTS,
  type DiscoveredAgent,
  discoveredFolders,
} from '../reports/observed/transcripts/discover.ts'
import { detectFormat, READERS } from '../reports/observed/transcripts/index.ts'
import { TRANSCRIPT_FORMATS, type TranscriptFormat } from '../reports/observed/transcripts/types.ts'
import { RewritesTally } from '../reports/observed-rows.ts'
import { RUN_FILES, RunFolder, runStamp } from '../reports/run-folder.ts'
import { summaryTable, wantsColour } from '../reports/table.ts'
import type { StepRow, SummaryRow } from '../reports/types.ts'
import { RunFilesWriter } from '../scenarios/run-files-writer.ts'
import { asTarget, dateOption, parse } from './args.ts'
import { IMPORT_FLAGS } from './commands.ts'
import { POLICY_FILES, policyOption, requireDshLog } from './import-policy-option.ts'
import { exportForCommand, exportLine, otelExport } from './otel-option.ts'

/** The agents' folders under the home, the `--agent` ones only; an empty find is an input error naming where it looked. */
function discover(agents: string | undefined): AgentFolder[] {
  const wanted = agents === undefined ? DISCOVERED_AGENTS : agents.split(',').map((name) => name.trim())
  for (const name of wanted)
    if (!DISCOVERED_AGENTS.includes(name as DiscoveredAgent))
      throw new CachelabError('usage', `--agent must be ${DISCOVERED_AGENTS.join(', ')}, not ${name}`)
  const found = discoveredFolders(process.env, homedir(), wanted as DiscoveredAgent[])
  if (found.length === 0)
    throw new CachelabError(
      'input',
      `no agent transcripts found (looked in ${agentFolders(process.env, homedir())
        .filter((folder) => wanted.includes(folder.agent))
        .map((folder) => folder.path)
        .join(', ')}); name a file or directory`,
    )
  return found
}

export async function importCommand(
  argv: string[],
  defaults: Pick<ImportOptions, 'readers' | 'detect' | 'predict'> = {
    readers: READERS,
    detect: detectFormat,
    predict: predictLazily,
  },
): Promise<number> {
  const { values, positionals } = parse(argv, IMPORT_FLAGS, true)
  const since = dateOption('--since', values.since)
  const until = dateOption('--until', values.until, 1)
  const found = positionals.length === 0 ? discover(values.agent) : undefined
  if (found === undefined && values.agent !== undefined)
    throw new CachelabError(
      'usage',
      '--agent narrows the folders import finds with no path; with files or directories, name their --format',
    )
  const paths = found?.map((folder) => folder.path) ?? positionals
  const format = values.format ?? 'auto'
  if (format !== 'auto' && !TRANSCRIPT_FORMATS.includes(format as TranscriptFormat))
    throw new CachelabError('usage', `--format must be auto, ${TRANSCRIPT_FORMATS.join(', ')}, not ${format}`)
  if (values.ttl !== undefined && values.ttl !== '1h')
    throw new CachelabError('usage', `--ttl takes 1h (the counterfactual lifetime), not ${values.ttl}`)
  const target = asTarget(values.as, values.model)
  const policy = policyOption(values.policy, format as TranscriptFormat | 'auto')
  // --as and --policy load their modules (the simulators, the re-derivation) only when given.
  const extras = await importExtras(target, policy)
  // Imported rows keep Unix time: the spans sit at the recorded times.
  const otel = otelExport(values, 0)
  const files = requireTranscriptFiles(paths)
  // The folder is opened (and refused, when it is not cachelab's) before the first file is read; the rows
  // go into it as they are built and it is marked complete only once every file is in place.
  const outDir = resolve(values.out ?? join('reports', 'out', `import-${runStamp()}`))
  const folder = RunFolder.replace(outDir, {
    writer: 'import',
    files: [
      ...RUN_FILES,
      'rewrites.csv',
      ...(policy !== undefined ? POLICY_FILES : []),
      ...(target !== undefined ? ['counterfactual.csv', 'not-rebuildable.csv'] : []),
    ],
  })
  const writer = new RunFilesWriter(folder)
  const rewrites = new RewritesTally()
  const hourTtl = values.ttl === '1h' ? new HourTtlTally() : undefined
  // Only an OpenTelemetry export keeps the rows: it sends them after the import.
  const exported: StepRow[] | undefined = otel === undefined ? undefined : []
  let result: ImportResult
  let summaries: SummaryRow[]
  const extra: Record<string, string> = {}
  try {
    result = await importFiles(
      files,
      {
        ...defaults,
        ...(since !== undefined ? { since } : {}),
        ...(until !== undefined ? { until } : {}),
        format: format as TranscriptFormat | 'auto',
        lenient: values.lenient === true,
        ...(extras.afterFile !== undefined ? { afterFile: extras.afterFile } : {}),
        ...(policy !== undefined ? { seriesStart: policy } : {}),
      } satisfies ImportOptions,
      (entry) => {
        writer.add(entry.row)
        rewrites.add(entry)
        hourTtl?.add(entry)
        exported?.push(entry.row)
      },
    )
    if (policy !== undefined) requireDshLog(result.files.map((file) => file.format))
    extra['rewrites.csv'] = rewritesCsv(rewrites.result())
    Object.assign(extra, extras.files())
    summaries = writer.finish({ runId: result.runId, files: extra }).summaries
    folder.complete()
  } catch (error) {
    writer.close()
    folder.abandon()
    throw error
  }
  const table = rewrites.result()
  const written = [
    ...['steps.csv', 'summary.csv', 'breaks.csv', 'rewrites.csv', 'report.html'],
    ...Object.keys(extra).filter((name) => name !== 'rewrites.csv'),
  ]
  // What is said beside the tables, in the terminal's lines and in --json's `lines` alike.
  const beside = [
    ...(hourTtl !== undefined ? [...hourTtlText(hourTtl), ''] : []),
    ...extras.text(),
    ...pricingText(result),
  ]
  // What was skipped, and why, goes to stderr too: a script reading stdout still hears of it.
  for (const line of skippedText(result)) process.stderr.write(`cachelab import: ${line}\n`)
  const exportedLine =
    otel !== undefined && exported !== undefined
      ? exportLine(await exportForCommand(exported, otel))
      : undefined
  if (values.json === true) {
    process.stdout.write(
      importJson({
        result,
        outDir,
        summaries,
        rewrites: table,
        written,
        lines: [...beside, ...(exportedLine !== undefined ? [exportedLine] : [])].filter(
          (line) => line !== '',
        ),
      }),
    )
    return 0
  }
  const lines = [
    summaryTable(summaries, { colour: wantsColour(process.stdout, process.env) }),
    '',
    ...rewritesText(table),
    '',
    ...beside,
  ]
  if (found !== undefined) lines.push(`read ${foundText(found, result.files)}`)
  lines.push(...skippedText(result))
  lines.push(
    `import ${result.runId}: ${result.requests} requests from ${result.files.length} files; wrote ${relative(process.cwd(), outDir) || '.'}/{${written.join(',')}}`,
  )
  if (exportedLine !== undefined) lines.push(exportedLine)
  process.stdout.write(`${lines.join('\n')}\n`)
  return 0
}
