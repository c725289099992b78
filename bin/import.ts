// `cachelab import` as a function: transcript files (or directories of them) read one at a time through
// their format's reader, each recorded request turned into a row by the imported-transcript port, with
// its place in the rewrites table. Memory holds the rows and one request per session, not the files.

import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import type { SeriesStartPolicy } from '../harness/policies.ts'
import { hashString } from '../harness/random.ts'
import type {
  ObservedRequest,
  TranscriptFormat,
  TranscriptProblem,
  TranscriptReader,
} from '../providers/transcripts/types.ts'
import { type ObservedRow, ObservedRowBuilder } from '../reports/observed-rows.ts'

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
   * (counts and counterfactual), by request, for the rows' prediction columns.
   */
  predict?: (requests: readonly ObservedRequest[]) => Map<ObservedRequest, { read: number; write: number }>
  /**
   * Told of each file's requests and their rows (`entries[i]` is the row of `requests[i]`) once the rows
   * are built: `--as` replays them on another provider's simulator.
   */
  afterFile?: (requests: readonly ObservedRequest[], entries: readonly ObservedRow[]) => void
  /** Readers that rebuild requests from events also re-derive them under this series-start policy (`--policy`). */
  seriesStart?: SeriesStartPolicy
}

/** What an import found. */
export interface ImportResult {
  runId: string
  entries: ObservedRow[]
  /** Files read, with their format and how many requests each gave. */
  files: Array<{ file: string; format: TranscriptFormat; requests: number }>
  /** Lines skipped under `lenient`. */
  problems: TranscriptProblem[]
  /** Recorded model names priced as another catalog model. */
  mappedModels: Map<string, string>
}

/** Transcript files under the paths: files as given, directories walked for `*.jsonl` and `*.jsonl.zstd`. */
export function transcriptFiles(paths: readonly string[]): string[] {
  const found: string[] = []
  const walk = (path: string) => {
    let stats: ReturnType<typeof statSync>
    try {
      stats = statSync(path)
    } catch {
      throw new CachelabError('input', `${path}: no such file or directory`)
    }
    if (stats.isDirectory()) {
      for (const name of readdirSync(path).sort()) {
        const child = join(path, name)
        if (statSync(child).isDirectory() || name.endsWith('.jsonl') || name.endsWith('.jsonl.zstd'))
          walk(child)
      }
    } else found.push(path)
  }
  for (const path of paths) walk(path)
  return found
}

/** Import the transcripts under `paths`. */
export async function importTranscripts(
  paths: readonly string[],
  options: ImportOptions,
): Promise<ImportResult> {
  const files = transcriptFiles(paths)
  if (files.length === 0) throw new CachelabError('input', `no transcript files under ${paths.join(', ')}`)
  const runId = `import-${hashString(JSON.stringify(files)).toString(16).padStart(8, '0')}`
  const builders = new Map<string, ObservedRowBuilder>()
  const entries: ObservedRow[] = []
  const problems: TranscriptProblem[] = []
  const mappedModels = new Map<string, string>()
  const read: ImportResult['files'] = []
  for (const file of files) {
    const format = options.format === 'auto' ? await options.detect(file) : options.format
    if (format === undefined)
      throw new CachelabError(
        'input',
        `${file}: not a transcript cachelab reads (claude-code, codex, dsh, pi); name one with --format`,
      )
    const requests: ObservedRequest[] = []
    for await (const request of options.readers[format](file, {
      lenient: options.lenient,
      onProblem: (problem) => problems.push(problem),
      ...(options.seriesStart !== undefined ? { seriesStart: options.seriesStart } : {}),
    }))
      requests.push(request)
    const predicted = options.predict?.(requests)
    const fileEntries: ObservedRow[] = []
    for (const request of requests) {
      const key = `${request.format}\u0000${request.session}`
      let builder = builders.get(key)
      if (builder === undefined) {
        builder = new ObservedRowBuilder({ runId })
        builders.set(key, builder)
      }
      const entry = builder.add(request)
      const prediction = predicted?.get(request)
      if (prediction !== undefined)
        entry.row = {
          ...entry.row,
          predictedCacheReadTokens: prediction.read,
          predictedCacheWriteTokens: prediction.write,
        }
      if (entry.model.mappedFrom !== undefined)
        mappedModels.set(entry.model.mappedFrom, entry.model.entry.model)
      entries.push(entry)
      fileEntries.push(entry)
    }
    options.afterFile?.(requests, fileEntries)
    read.push({ file, format, requests: requests.length })
  }
  return { runId, entries, files: read, problems, mappedModels }
}
