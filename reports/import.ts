// `cachelab import` as a function: transcript files (or directories of them) read one at a time through
// their format's reader, each recorded request turned into a row by the imported-transcript port, with
// its place in the rewrites table, and handed on as it is built. Memory holds one request per session,
// running totals and the id of every request given a row (a request copied into another file is counted
// once), not the rows or the files; a file whose requests carry their body holds those requests (and the
// rows after the first of them) until its end, when the simulator's prediction fills them in.

import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import type { SeriesStartPolicy } from '../harness/policies.ts'
import { hashKey64, hashString } from '../harness/random.ts'
import type { Prediction } from './observed/transcripts/replay.ts'
import {
  type AgentTotal,
  DETECTED_AS,
  type ObservedRequest,
  TRANSCRIPT_FORMATS,
  type TranscriptFormat,
  type TranscriptProblem,
  type TranscriptReader,
} from './observed/transcripts/types.ts'
import { type ObservedRow, ObservedRowBuilder } from './observed-rows.ts'
import { StandInTally, type StandInUse } from './stand-ins.ts'
import type { StepRow } from './types.ts'

/** How to read the files. */
export interface ImportOptions {
  /** The format of every file, or `auto` to detect each one. */
  format: TranscriptFormat | 'auto'
  /** Skip (and count) corrupt lines instead of failing. */
  lenient: boolean
  /** The reader of each format. */
  readers: Readonly<Record<TranscriptFormat, TranscriptReader>>
  /** The format of a file, from its first lines; undefined when it is none of them. */
  detect: (file: string) => Promise<TranscriptFormat | undefined>
  /**
   * Runs over the requests of a file that carry their request body: the simulator's prediction of each
   * (counts and counterfactual), by request, for the rows' prediction columns, and for those in `breaks`
   * (their rows name a client-side break) what changed against the session's previous request.
   */
  predict?: (
    requests: readonly ObservedRequest[],
    breaks: ReadonlySet<ObservedRequest>,
  ) => Map<ObservedRequest, Prediction> | Promise<Map<ObservedRequest, Prediction>>
  /**
   * Told of each file's requests and their rows (`entries[i]` is the row of `requests[i]`) once the rows
   * are built: `--as` replays them on another provider's simulator.
   */
  afterFile?: (requests: readonly ObservedRequest[], entries: readonly ObservedRow[]) => void
  /** Readers that rebuild requests from events also re-derive them under this series-start policy (`--policy`). */
  seriesStart?: SeriesStartPolicy
  /** Only requests made from this time on (Unix milliseconds, `--since`); a file last changed before it is not read. */
  since?: number
  /** Only requests made before this time (Unix milliseconds, `--until`). */
  until?: number
}

/** What an agent's own total of a session counts beyond the requests its transcript recorded. */
export interface Unrecorded {
  format: TranscriptFormat
  session: string
  /**
   * The agent's own total (of a fork, what it added to the total it took over from its parent), and the
   * transcript's requests priced by the catalog.
   */
  agentUsd: number
  recordedUsd: number
  /** Tokens the agent counted and the transcript's requests do not hold, where it gives its tokens. */
  tokens?: { input: number; cacheRead: number; cacheWrite: number; output: number }
}

/** Where an import's rows go, in file order, each once its prediction (if any) is in. */
export type RowSink = (entry: ObservedRow) => void

/** What an import found. */
export interface ImportResult {
  runId: string
  /** Rows handed to the sink. */
  requests: number
  /** Files read, with their format and how many requests each gave. */
  files: Array<{ file: string; format: TranscriptFormat; requests: number }>
  /** Lines skipped under `lenient`. */
  problems: TranscriptProblem[]
  /** Records read but not turned into requests, and why (a provider cachelab does not model, copied usage). */
  notes: TranscriptProblem[]
  /** Requests left out because they were made outside `--since`/`--until`. */
  outOfRange: number
  /**
   * Requests read again in another session's file (a fork's or a resume's copy of its parent's entries)
   * and counted once, where they were made; `first` is where the first such copy was read.
   */
  copies: { count: number; first?: string }
  /**
   * Per session whose agent keeps a running total: what that total counts beyond the requests the
   * transcript recorded (requests the agent made and did not write down), when it counts more.
   */
  unrecorded: Unrecorded[]
  /** Recorded models the catalog lacks, each priced as its stand-in, with the requests and dollars on it. */
  standIns: StandInUse[]
  /** The cost of every answered row handed to the sink. */
  costUsd: number
  /**
   * Requests rebuilt without the tool schemas they were sent with (Codex rollouts record none): given no
   * predicted read or write, since the simulator's would fall short by the tools, not by a provider gap.
   */
  withoutTools: number
}

/**
 * Transcript files under the paths: files as given, directories walked for `*.jsonl`, `*.jsonl.zstd`,
 * `opencode.db`, Factory Droid's `droid-log-*.log`, an older Gemini CLI's `chats/session-*.json` and
 * Cline's `sessions/<session>/*.messages.json`.
 */
export function transcriptFiles(paths: readonly string[]): string[] {
  const found: string[] = []
  // Folders already walked, by their real path: a symlink back up the tree is walked once.
  const walked = new Set<string>()
  const statOf = (path: string) => {
    try {
      return statSync(path)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw new CachelabError(
        'input',
        code === 'ENOENT'
          ? `${path}: no such file or directory`
          : `${path}: cannot read (${code ?? (error as Error).message})`,
      )
    }
  }
  const walk = (path: string) => {
    const stats = statOf(path)
    if (stats.isDirectory()) {
      const real = realpathSync(path)
      if (walked.has(real)) return
      walked.add(real)
      for (const name of readdirSync(path).sort()) {
        const child = join(path, name)
        if (
          statOf(child).isDirectory() ||
          name.endsWith('.jsonl') ||
          name.endsWith('.jsonl.zstd') ||
          // An older Gemini CLI's session: one JSON object.
          (name.startsWith('session-') && name.endsWith('.json') && basename(path) === 'chats') ||
          // A Cline session's messages, and its subagents', in the session's folder under `sessions`.
          (name.endsWith('.messages.json') && basename(dirname(path)) === 'sessions') ||
          name === 'opencode.db' ||
          name === 'kilo.db' ||
          // Factory Droid's log (its session files hold no usage).
          (name.startsWith('droid-log') && name.endsWith('.log'))
        )
          walk(child)
      }
    } else found.push(path)
  }
  for (const path of paths) walk(path)
  return found
}

/** When a file was last written: a database's latest write may be in its write-ahead log beside it. */
function lastWritten(file: string): number {
  const wal = `${file}-wal`
  return Math.max(statSync(file).mtimeMs, existsSync(wal) ? statSync(wal).mtimeMs : 0)
}

/** Import the transcripts under `paths`. */
export async function importTranscripts(
  paths: readonly string[],
  options: ImportOptions,
  sink: RowSink,
): Promise<ImportResult> {
  return importFiles(requireTranscriptFiles(paths), options, sink)
}

/** The transcript files under the paths; none is an input error. */
export function requireTranscriptFiles(paths: readonly string[]): string[] {
  const files = transcriptFiles(paths)
  if (files.length === 0) throw new CachelabError('input', `no transcript files under ${paths.join(', ')}`)
  return files
}

/** The id of an import of these files. */
export function importRunId(files: readonly string[]): string {
  return `import-${hashString(JSON.stringify(files)).toString(16).padStart(8, '0')}`
}

/** Import the transcript files, each row handed to `sink` as it is built. */
export async function importFiles(
  files: readonly string[],
  options: ImportOptions,
  sink: RowSink,
): Promise<ImportResult> {
  const runId = importRunId(files)
  const builders = new Map<string, ObservedRowBuilder>()
  const recorded = new RecordedTally()
  let emitted = 0
  const emit = (entry: ObservedRow) => {
    recorded.add(entry.row)
    standIns.add(entry.row)
    emitted += 1
    sink(entry)
  }
  const problems: TranscriptProblem[] = []
  const notes: TranscriptProblem[] = []
  let outOfRange = 0
  let withoutTools = 0
  const standIns = new StandInTally()
  const read: ImportResult['files'] = []
  const totals = new Map<string, { format: TranscriptFormat; total: AgentTotal }>()
  // Every running total by the request it was written after: what a fork of the session took over.
  const totalsAfter = new Map<string, AgentTotal>()
  // The sessions that copied another's requests: the session they came from and the last one copied.
  const forks = new Map<string, { from: string; lastCopy: string }>()
  // The ids of the requests given a row (with their time: a simulated provider's ids repeat across
  // servers), so that one read again in another file (a copy no reader marked) is counted once; each
  // held as a 64-bit hash, about 50 bytes a request (notes/2026-12-07-import-forks.md).
  const given = new Set<string>()
  const copies: ImportResult['copies'] = { count: 0 }
  const builderOf = (request: ObservedRequest) => {
    const key = `${request.format}\u0000${request.session}`
    let builder = builders.get(key)
    if (builder === undefined) {
      builder = new ObservedRowBuilder({ runId })
      builders.set(key, builder)
    }
    return builder
  }
  const inRange = (time: string) => {
    const at = Date.parse(time)
    return (
      (options.since === undefined || at >= options.since) &&
      (options.until === undefined || at < options.until)
    )
  }
  for (const file of files) {
    // A file last written before --since holds no request made after it.
    // (A SQLite database in WAL mode, opencode's, is written in its `-wal` file first.)
    if (options.since !== undefined && lastWritten(file) < options.since) continue
    const detected = await options.detect(file)
    const format = options.format === 'auto' ? detected : options.format
    if (format === undefined)
      throw new CachelabError(
        'input',
        `${file}: not a transcript cachelab reads (${TRANSCRIPT_FORMATS.join(', ')}); name one with --format`,
      )
    // A format named that the file plainly is not would read nothing and say nothing.
    if (detected !== undefined && detected !== format && DETECTED_AS[format] !== detected)
      throw new CachelabError(
        'input',
        `${file}: --format ${format}, but it looks like a ${detected} transcript`,
      )
    // Rows are built as the requests arrive. A request is kept past its row only where something after
    // the file needs it: the prediction (requests carrying their body) or `afterFile` (all of them).
    const requests: ObservedRequest[] = []
    const bodied: ObservedRequest[] = []
    const bodiedEntries = new Map<ObservedRequest, ObservedRow>()
    const fileEntries: ObservedRow[] = []
    // Rows from the file's first request with a body on wait for the prediction, so they leave in order.
    const waiting: ObservedRow[] = []
    let count = 0
    for await (const request of options.readers[format](file, {
      lenient: options.lenient,
      onProblem: (problem) => problems.push(problem),
      onNote: (note) => notes.push(note),
      onAgentTotal: (total) => {
        totals.set(`${format}\u0000${total.session}`, { format, total })
        if (total.after !== undefined)
          totalsAfter.set(`${format}\u0000${total.session}\u0000${total.after}`, total)
      },
      ...(options.seriesStart !== undefined ? { seriesStart: options.seriesStart } : {}),
    })) {
      // One request once: a copy (the reader says so, or its id was given a row already) is counted where
      // it was made, and is what its session's next request goes on from.
      const id =
        request.requestId === undefined
          ? undefined
          : hashKey64(`${request.format}\u0000${request.requestId}\u0000${request.time}`)
      if (request.copied !== undefined || (id !== undefined && given.has(id))) {
        copies.count += 1
        copies.first ??= request.source
        builderOf(request).follow(request)
        const from = request.copied?.from
        if (from !== undefined && request.requestId !== undefined)
          forks.set(`${request.format}\u0000${request.session}`, { from, lastCopy: request.requestId })
        continue
      }
      if (!inRange(request.time)) {
        outOfRange += 1
        continue
      }
      count += 1
      if (id !== undefined) given.add(id)
      const entry = builderOf(request).add(request)
      if (options.predict !== undefined && request.request !== undefined) {
        bodied.push(request)
        bodiedEntries.set(request, entry)
        if (request.request.withoutTools === true) withoutTools += 1
      }
      if (bodied.length > 0) waiting.push(entry)
      else emit(entry)
      if (options.afterFile !== undefined) {
        requests.push(request)
        fileEntries.push(entry)
      }
    }
    // The prediction replays the file's requests that carry their body, in file order, after its last;
    // at a client-side break it also reads what changed from the two requests it replayed.
    const breaks = new Set(
      bodied.filter((request) => {
        const row = bodiedEntries.get(request)?.row
        return row?.breakCause !== undefined && row.breakCause !== row.providerCause
      }),
    )
    const predicted = await options.predict?.(bodied, breaks)
    for (const [request, entry] of bodiedEntries) {
      const prediction = predicted?.get(request)
      if (prediction !== undefined)
        entry.row = {
          ...entry.row,
          predictedCacheReadTokens: prediction.read,
          predictedCacheWriteTokens: prediction.write,
          ...(prediction.change !== undefined ? { breakChange: prediction.change } : {}),
        }
    }
    for (const entry of waiting) emit(entry)
    options.afterFile?.(requests, fileEntries)
    read.push({ file, format, requests: count })
  }
  // A date range leaves requests out on purpose: the agent's totals are set beside the whole history only.
  const unrecorded =
    options.since === undefined && options.until === undefined
      ? unrecordedOf(totals, recorded, { totalsAfter, forks })
      : []
  return {
    runId,
    requests: emitted,
    files: read,
    problems,
    notes,
    outOfRange,
    copies,
    standIns: standIns.result(),
    costUsd: standIns.totalUsd(),
    unrecorded,
    withoutTools,
  }
}

/** What a session's rows add up to: its cost and token buckets, summed in row order. */
interface RecordedSums {
  costUsd: number
  uncached: number
  cacheRead: number
  cacheWrite: number
  output: number
}

/**
 * Per format and session, the sums of its rows and its subagents' (named under it): what the agent's own
 * running total is set beside.
 */
class RecordedTally {
  private readonly sessions = new Map<string, RecordedSums>()

  add(row: StepRow): void {
    this.into(row.scenario, row.variant, row)
    if (row.session !== undefined && row.session !== row.variant) this.into(row.scenario, row.session, row)
  }

  of(format: string, session: string): RecordedSums {
    return (
      this.sessions.get(`${format}\u0000${session}`) ?? {
        costUsd: 0,
        uncached: 0,
        cacheRead: 0,
        cacheWrite: 0,
        output: 0,
      }
    )
  }

  private into(format: string, session: string, row: StepRow): void {
    const key = `${format}\u0000${session}`
    const sums = this.sessions.get(key) ?? { costUsd: 0, uncached: 0, cacheRead: 0, cacheWrite: 0, output: 0 }
    sums.costUsd += row.costUsd
    sums.uncached += row.uncachedTokens
    sums.cacheRead += row.cacheReadTokens
    sums.cacheWrite += row.cacheWriteTokens
    sums.output += row.outputTokens
    this.sessions.set(key, sums)
  }
}

/**
 * The sessions whose agent counted more than their recorded requests (a sub-cent rounding is not "more").
 * A fork's total goes on from its parent's as it was after the last request the fork copied: that part is
 * the parent's, and a fork whose parent's total is not at hand is left out rather than charged with it.
 */
function unrecordedOf(
  totals: ReadonlyMap<string, { format: TranscriptFormat; total: AgentTotal }>,
  recorded: RecordedTally,
  inherited: {
    totalsAfter: ReadonlyMap<string, AgentTotal>
    forks: ReadonlyMap<string, { from: string; lastCopy: string }>
  },
): Unrecorded[] {
  const found: Unrecorded[] = []
  for (const { format, total } of totals.values()) {
    const fork = inherited.forks.get(`${format}\u0000${total.session}`)
    const base =
      fork === undefined
        ? undefined
        : inherited.totalsAfter.get(`${format}\u0000${fork.from}\u0000${fork.lastCopy}`)
    if (fork !== undefined && base === undefined) continue
    const sums = recorded.of(format, total.session)
    const recordedUsd = sums.costUsd
    const agentUsd = total.costUsd - (base?.costUsd ?? 0)
    const before = base?.tokens ?? { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }
    const tokens =
      total.tokens === undefined
        ? undefined
        : {
            input: total.tokens.input - before.input - sums.uncached,
            cacheRead: total.tokens.cacheRead - before.cacheRead - sums.cacheRead,
            cacheWrite: total.tokens.cacheWrite - before.cacheWrite - sums.cacheWrite,
            output: total.tokens.output - before.output - sums.output,
          }
    if (agentUsd - recordedUsd < 0.00005) continue
    found.push({
      format,
      session: total.session,
      agentUsd,
      recordedUsd,
      ...(tokens !== undefined ? { tokens } : {}),
    })
  }
  return found
}
