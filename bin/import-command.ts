// `cachelab import [FILE|DIR...] [--agent NAME,…] [--since DATE] [--until DATE] [--format auto|claude-code|codex|dsh|gemini-cli|opencode|pi|qwen-code]
// [--out DIR] [--lenient] [--ttl 1h]
// [--as PROVIDER [--model MODEL]] [--policy consolidate|keep-live]`: an agent's own session files (with no
// path, the standard folders of every agent found under the home: providers/transcripts/discover.ts) as the
// run's files (steps.csv, summary.csv, breaks.csv, report.html) plus rewrites.csv, the table of what every
// cache write and miss was for; the summary and that table printed. `--as` adds counterfactual.csv: the
// sessions whose requests the transcript holds, replayed as another provider. `--policy` adds policy.csv
// and policy-steps.csv: DSH sessions re-derived under a series-start policy.

import { homedir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { stringify } from 'csv-stringify/sync'
import { CachelabError } from '../harness/errors.ts'
import { type BuiltInProviderId, PROVIDER_IDS } from '../harness/types.ts'
import { resolveModel } from '../providers/catalog.ts'
import {
  type AgentFolder,
  agentFolders,
  DISCOVERED_AGENTS,
  type DiscoveredAgent,
  discoveredFolders,
} from '../providers/transcripts/discover.ts'
import { detectFormat, READERS } from '../providers/transcripts/index.ts'
import {
  type ObservedRequest,
  TRANSCRIPT_FORMATS,
  type TranscriptFormat,
  type TranscriptProblem,
} from '../providers/transcripts/types.ts'
import type { AsProviderTarget, CounterfactualSession } from '../reports/as-provider.ts'
import {
  hourTtlCost,
  type ObservedRow,
  type RewriteSummary,
  RewritesTally,
} from '../reports/observed-rows.ts'
import { summaryTable, wantsColour } from '../reports/table.ts'
import { alignedTable, countText, dollarText, percentText } from '../reports/text-table.ts'
import type { StepRow, SummaryRow } from '../reports/types.ts'
import { parse } from './args.ts'
import { type ImportOptions, type ImportResult, importFiles, requireTranscriptFiles } from './import.ts'
import { POLICY_FILES, policyOption, requireDshLog } from './import-policy-option.ts'
import { exportForCommand, exportLine, OTEL_FLAGS, otelExport } from './otel-option.ts'
import { RunFilesWriter } from './run-files.ts'
import { RUN_FILES, RunFolder, runStamp } from './run-folder.ts'

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

/** Per session, the cost as recorded and with a 1-hour lifetime, summed as the rows arrive. */
class HourTtlTally {
  readonly sessions = new Map<string, { recorded: number; withHour: number }>()

  add(entry: ObservedRow): void {
    const key = `${entry.row.scenario} · ${entry.row.variant} · ${entry.row.provider}`
    const sums = this.sessions.get(key) ?? { recorded: 0, withHour: 0 }
    sums.recorded += entry.row.costUsd
    sums.withHour += hourTtlCost(entry)
    this.sessions.set(key, sums)
  }
}

/** Per session, the cost as recorded and with a 1-hour lifetime. */
function hourTtlText(tally: HourTtlTally): string[] {
  const lines = [
    'with every Anthropic prefix living 1 hour (--ttl 1h; writes at the 1-hour price, expiries under an hour read):',
  ]
  let actual = 0
  let hour = 0
  for (const [key, { recorded, withHour }] of tally.sessions) {
    actual += recorded
    hour += withHour
    lines.push(`  ${key}: ${dollarText(recorded)} recorded, ${dollarText(withHour)} with 1h`)
  }
  lines.push(
    `  all: ${dollarText(actual)} recorded, ${dollarText(hour)} with 1h (${dollarText(hour - actual)})`,
  )
  return lines
}

/** Not-rebuildable requests the terminal lists per format and reason (not-rebuildable.csv lists all). */
const LISTED_NOT_REBUILDABLE = 3

/** The counterfactual as the terminal shows it: per session, recorded beside predicted, then what was left out. */
function counterfactualText(sessions: readonly CounterfactualSession[], target: AsProviderTarget): string[] {
  const as = `as ${target.provider} ${target.entry.model}`
  const total = (pick: (session: CounterfactualSession) => number) =>
    sessions.reduce((sum, session) => sum + pick(session), 0)
  const cells = (session: CounterfactualSession): string[] => [
    `${session.format} · ${session.session}`,
    String(session.requests),
    countText(session.recorded.input),
    countText(session.recorded.read),
    countText(session.recorded.write),
    dollarText(session.recorded.costUsd),
    percentText(session.recorded.hitRatioWarm),
    countText(session.predicted.read),
    countText(session.predicted.write),
    dollarText(session.predicted.costUsd),
    percentText(session.predicted.hitRatioWarm),
  ]
  const replayed = sessions.filter((session) => session.requests > 0)
  const lines = [
    `the sessions replayed ${as} (recorded beside predicted, over the requests whose body the transcript holds):`,
    alignedTable(
      [
        { title: 'session', align: 'left' },
        { title: 'requests', align: 'right' },
        { title: 'input', align: 'right' },
        { title: 'read', align: 'right' },
        { title: 'write', align: 'right' },
        { title: 'cost', align: 'right' },
        { title: 'hit warm', align: 'right' },
        { title: 'read as', align: 'right' },
        { title: 'write as', align: 'right' },
        { title: 'cost as', align: 'right' },
        { title: 'hit warm as', align: 'right' },
      ],
      [
        ...replayed.map(cells),
        [
          'all',
          String(total((session) => session.requests)),
          countText(total((session) => session.recorded.input)),
          countText(total((session) => session.recorded.read)),
          countText(total((session) => session.recorded.write)),
          dollarText(total((session) => session.recorded.costUsd)),
          '',
          countText(total((session) => session.predicted.read)),
          countText(total((session) => session.predicted.write)),
          dollarText(total((session) => session.predicted.costUsd)),
          '',
        ],
      ],
    ),
  ]
  const rejected = total((session) => session.rejected)
  if (rejected > 0) lines.push(`${rejected} requests refused by the ${target.provider} simulator (left out)`)
  // Grouped by format and reason: a Claude Code import leaves every request out, one line per group says so.
  const groups = new Map<string, { format: string; reason: string; sources: string[] }>()
  for (const session of sessions)
    for (const entry of session.notRebuildable) {
      const key = `${session.format}\u0000${entry.reason}`
      const group = groups.get(key) ?? { format: session.format, reason: entry.reason, sources: [] }
      group.sources.push(entry.source)
      groups.set(key, group)
    }
  if (groups.size > 0) lines.push('not rebuildable (left out; every one in not-rebuildable.csv):')
  for (const group of groups.values())
    lines.push(
      `  ${group.format}: ${group.sources.length} requests, ${group.reason}: ${group.sources
        .slice(0, LISTED_NOT_REBUILDABLE)
        .join(', ')}${group.sources.length > LISTED_NOT_REBUILDABLE ? ', …' : ''}`,
    )
  return lines
}

/** The `--as` target: a provider id and its catalog model (the provider's default unless `--model`). */
function asTarget(provider: string | undefined, model: string | undefined): AsProviderTarget | undefined {
  if (provider === undefined) {
    if (model !== undefined) throw new CachelabError('usage', '--model names the model of --as PROVIDER')
    return undefined
  }
  // A transcript translates onto the built-in wires only (notes/2026-11-30-compatible-providers.md).
  if (!PROVIDER_IDS.includes(provider as BuiltInProviderId))
    throw new CachelabError('usage', `--as must be one of ${PROVIDER_IDS.join(', ')}, not ${provider}`)
  return {
    provider: provider as BuiltInProviderId,
    entry: resolveModel(provider as BuiltInProviderId, model),
  }
}

/** A date option (`2026-11-01`, `20261101` or an ISO time) as Unix milliseconds; `days` moves a day's start on. */
function dateOption(flag: string, value: string | undefined, days = 0): number | undefined {
  if (value === undefined) return undefined
  const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(value)
  const text = compact === null ? value : `${compact[1]}-${compact[2]}-${compact[3]}`
  const day = /^\d{4}-\d{2}-\d{2}$/.test(text)
  const at = Date.parse(day ? `${text}T00:00:00Z` : text)
  if (!Number.isFinite(at))
    throw new CachelabError(
      'usage',
      `${flag} takes a date (2026-11-01, 20261101) or an ISO time, not ${value}`,
    )
  // `--until 2026-11-30` includes that day: it ends at the next day's start.
  return day ? at + days * 86_400_000 : at
}

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

/** Which agents' folders were read, and how many files of each. */
function foundText(found: readonly AgentFolder[], files: ImportResult['files']): string {
  return found
    .map((folder) => {
      const count = files.filter(
        (file) => file.file === folder.path || file.file.startsWith(`${folder.path}/`),
      ).length
      return `${folder.agent} (${count} file${count === 1 ? '' : 's'} in ${folder.path})`
    })
    .join(', ')
}

/** What the import left out, counted by reason: lines skipped, records noted, requests outside the dates. */
function skippedText(result: ImportResult): string[] {
  const lines: string[] = []
  const byReason = (problems: readonly TranscriptProblem[]) => {
    const counts = new Map<string, { count: number; where: string }>()
    for (const problem of problems) {
      const seen = counts.get(problem.message)
      counts.set(problem.message, { count: (seen?.count ?? 0) + 1, where: seen?.where ?? problem.where })
    }
    return [...counts].map(([message, { count, where }]) => `${count} × ${message} (first at ${where})`)
  }
  if (result.problems.length > 0)
    lines.push(`${result.problems.length} lines skipped (--lenient): ${byReason(result.problems).join('; ')}`)
  if (result.notes.length > 0) lines.push(`not imported: ${byReason(result.notes).join('; ')}`)
  if (result.outOfRange > 0) lines.push(`${result.outOfRange} requests outside --since/--until left out`)
  for (const entry of result.unrecorded)
    lines.push(
      `unrecorded in the transcript: ${entry.format} · ${entry.session}: ${dollarText(entry.agentUsd - entry.recordedUsd)} of the agent's own ${dollarText(entry.agentUsd)}${entry.tokens === undefined ? '' : ` (${countText(entry.tokens.cacheRead)} read, ${countText(entry.tokens.cacheWrite)} written, ${countText(entry.tokens.input)} uncached, ${countText(entry.tokens.output)} output tokens)`}: requests it made and did not write down (compaction summaries, titles)`,
    )
  return lines
}

/** import's flags. */
export const IMPORT_FLAGS = {
  format: { type: 'string' },
  out: { type: 'string' },
  lenient: { type: 'boolean' },
  ttl: { type: 'string' },
  as: { type: 'string' },
  model: { type: 'string' },
  policy: { type: 'string' },
  agent: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  ...OTEL_FLAGS,
} as const

/**
 * The simulator's prediction (replay.ts's `predictObserved`), its modules loaded only once a file has
 * requests carrying their body: the simulators and their tokenizer cost a start more than reading a
 * Claude Code file does, and such files need neither.
 */
async function predictLazily(
  requests: readonly ObservedRequest[],
): Promise<Map<ObservedRequest, { read: number; write: number }>> {
  if (requests.length === 0) return new Map()
  const { predictObserved } = await import('../providers/transcripts/replay.ts')
  return predictObserved(requests)
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
  // The counterfactual's module (the simulators, their tokenizer) is loaded only for --as.
  const asProvider = target === undefined ? undefined : await import('../reports/as-provider.ts')
  const tally =
    asProvider === undefined || target === undefined ? undefined : new asProvider.CounterfactualTally(target)
  const policy = policyOption(values.policy, format as TranscriptFormat | 'auto')
  // Likewise the re-derivation's (the DeepSeek simulator, the mock providers' usage) only for --policy.
  const [seriesPolicy, policyReport] =
    policy === undefined
      ? []
      : await Promise.all([import('../reports/series-policy.ts'), import('./import-policy.ts')])
  const policyTally =
    policy === undefined || seriesPolicy === undefined ? undefined : new seriesPolicy.PolicyTally(policy)
  const afterFile = [tally, policyTally].flatMap((hook) => (hook === undefined ? [] : [hook.add.bind(hook)]))
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
        ...(afterFile.length > 0
          ? {
              afterFile: (requests, entries) => {
                for (const add of afterFile) add(requests, entries)
              },
            }
          : {}),
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
    if (policyTally !== undefined && policyReport !== undefined)
      Object.assign(extra, policyReport.policyFiles(policyTally))
    const sessions = tally?.result()
    if (sessions !== undefined && target !== undefined && asProvider !== undefined) {
      extra['counterfactual.csv'] = stringify([
        [...asProvider.COUNTERFACTUAL_COLUMNS],
        ...asProvider.counterfactualRecords(sessions, target),
      ])
      extra['not-rebuildable.csv'] = stringify([
        ['source', 'format', 'session', 'reason'],
        ...sessions.flatMap((session) =>
          session.notRebuildable.map((entry) => [
            entry.source,
            session.format,
            session.session,
            entry.reason,
          ]),
        ),
      ])
    }
    summaries = writer.finish({ runId: result.runId, files: extra }).summaries
    folder.complete()
  } catch (error) {
    writer.close()
    folder.abandon()
    throw error
  }
  const table = rewrites.result()
  const sessions = tally?.result()
  const lines = [
    summaryTable(summaries, { colour: wantsColour(process.stdout, process.env) }),
    '',
    ...rewritesText(table),
    '',
  ]
  if (hourTtl !== undefined) lines.push(...hourTtlText(hourTtl), '')
  const written = [
    ...['steps.csv', 'summary.csv', 'breaks.csv', 'rewrites.csv', 'report.html'],
    ...Object.keys(extra).filter((name) => name !== 'rewrites.csv'),
  ]
  if (sessions !== undefined && target !== undefined) lines.push(...counterfactualText(sessions, target), '')
  if (policyTally !== undefined && policyReport !== undefined)
    lines.push(...policyReport.policyText(policyTally), '')
  if (result.mappedModels.size > 0)
    lines.push(
      `models priced as the nearest catalog model: ${[...result.mappedModels].map(([from, to]) => `${from} as ${to}`).join(', ')}`,
    )
  if (result.withoutTools > 0)
    lines.push(
      `no predicted read or write for ${result.withoutTools} requests rebuilt without the tool schemas they were sent with (the transcript records none): the simulator's read would fall short by the tools, which is no provider gap; --as replays them, marked estimated`,
    )
  if (found !== undefined) lines.push(`read ${foundText(found, result.files)}`)
  lines.push(...skippedText(result))
  lines.push(
    `import ${result.runId}: ${result.requests} requests from ${result.files.length} files; wrote ${relative(process.cwd(), outDir) || '.'}/{${written.join(',')}}`,
  )
  // What was skipped, and why, goes to stderr too: a script reading stdout still hears of it.
  for (const line of skippedText(result)) process.stderr.write(`cachelab import: ${line}\n`)
  if (otel !== undefined && exported !== undefined)
    lines.push(exportLine(await exportForCommand(exported, otel)))
  process.stdout.write(`${lines.join('\n')}\n`)
  return 0
}
