// What `cachelab import` prints and writes beside the run's files: the rewrites table (rewrites.csv and
// its terminal lines), the cost with a 1-hour lifetime, the counterfactual of `--as`, which agents' folders
// were read and what the import left out.

import type { AsProviderTarget, CounterfactualSession } from './as-provider.ts'
import { csvText } from './csv.ts'
import type { ImportResult } from './import.ts'
import type { AgentFolder } from './observed/transcripts/discover.ts'
import type { TranscriptProblem } from './observed/transcripts/types.ts'
import { hourTtlCost, type ObservedRow, type RewriteSummary } from './observed-rows.ts'
import { standInLines } from './stand-ins.ts'
import { alignedTable, countText, dollarText, percentText } from './text-table.ts'
import type { SummaryRow } from './types.ts'

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
  return csvText([
    REWRITE_COLUMNS,
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
export function rewritesText(table: readonly RewriteSummary[]): string[] {
  return [
    'what the cache writes and misses were for (write tokens, their share, tokens the previous request left cached and this one missed, what that cost):',
    ...table.map(
      (entry) =>
        `  ${entry.class.padEnd(16)} ${String(entry.requests).padStart(6)} requests  ${countText(entry.writeTokens).padStart(12)} written (${percentText(entry.writeShare).padStart(7)})  ${countText(entry.missedTokens).padStart(12)} missed  ${dollarText(entry.lostUsd)}`,
    ),
  ]
}

/** Per session, the cost as recorded and with a 1-hour lifetime, summed as the rows arrive. */
export class HourTtlTally {
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
export function hourTtlText(tally: HourTtlTally): string[] {
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
export function counterfactualText(
  sessions: readonly CounterfactualSession[],
  target: AsProviderTarget,
): string[] {
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

/** Which agents' folders were read, and how many files of each. */
export function foundText(found: readonly AgentFolder[], files: ImportResult['files']): string {
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
export function skippedText(result: ImportResult): string[] {
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
  if (result.copies.count > 0)
    lines.push(
      `${result.copies.count} request${result.copies.count === 1 ? '' : 's'} read again in another session's file (a fork's or resume's copy, first at ${result.copies.first ?? '?'}): counted once, where made`,
    )
  for (const entry of result.unrecorded)
    lines.push(
      `unrecorded in the transcript: ${entry.format} · ${entry.session}: ${dollarText(entry.agentUsd - entry.recordedUsd)} of the agent's own ${dollarText(entry.agentUsd)}${entry.tokens === undefined ? '' : ` (${countText(entry.tokens.cacheRead)} read, ${countText(entry.tokens.cacheWrite)} written, ${countText(entry.tokens.input)} uncached, ${countText(entry.tokens.output)} output tokens)`}: requests it made and did not write down (compaction summaries, titles)`,
    )
  return lines
}

/** What `import --json` prints: the sessions, the rewrites table and what the transcripts left unrecorded. */
export interface ImportJsonInput {
  result: ImportResult
  outDir: string
  /** One row per session, as summary.csv holds them. */
  summaries: readonly SummaryRow[]
  rewrites: readonly RewriteSummary[]
  /** The files written into `outDir`. */
  written: readonly string[]
  /** What the terminal would print beside the tables (`--ttl 1h`, `--as`, `--policy`, stand-in prices). */
  lines: readonly string[]
}

/** The import as two-space JSON with a final newline: no message text, as in every other output. */
export function importJson(input: ImportJsonInput): string {
  const { result } = input
  const document = {
    format: 'cachelab-import',
    version: 1,
    runId: result.runId,
    outDir: input.outDir,
    written: input.written,
    requests: result.requests,
    costUsd: result.costUsd,
    files: result.files,
    sessions: input.summaries,
    rewrites: input.rewrites,
    unrecorded: result.unrecorded.map((entry) => ({
      ...entry,
      unrecordedUsd: entry.agentUsd - entry.recordedUsd,
    })),
    skipped: {
      lines: result.problems,
      notImported: result.notes,
      outOfRange: result.outOfRange,
      copies: result.copies,
    },
    standIns: result.standIns,
    lines: input.lines,
  }
  return `${JSON.stringify(document, null, 2)}\n`
}

/** How the import priced and predicted what it could not take as recorded. */
export function pricingText(result: ImportResult): string[] {
  const lines: string[] = []
  lines.push(...standInLines(result.standIns, result.costUsd))
  if (result.withoutTools > 0)
    lines.push(
      `no predicted read or write for ${result.withoutTools} requests rebuilt without the tool schemas they were sent with (the transcript records none): the simulator's read would fall short by the tools, which is no provider gap; --as replays them, marked estimated`,
    )
  return lines
}
