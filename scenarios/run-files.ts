// A run's folder written whole: its rows through the writer (run-files-writer.ts), its scenarios' claims
// evaluated on them, and the library and loop comparisons as CSV beside them.

import { resolve } from 'node:path'
import { librariesCsv, libraryStepsCsv } from '../reports/libraries.ts'
import { loopsCsv } from '../reports/loops.ts'
import { RUN_FILES, RunFolder } from '../reports/run-folder.ts'
import { summarize, withClaims } from '../reports/summary.ts'
import type { StepRow } from '../reports/types.ts'
import { evaluateClaims } from './claims.ts'
import { type RunFiles, type RunFilesRest, RunFilesWriter } from './run-files-writer.ts'
import type { Scenario } from './types.ts'

export { type RunFiles, type RunFilesRest, RunFilesWriter } from './run-files-writer.ts'

/** What a run folder is written from. */
export interface RunFilesInput extends Omit<RunFilesRest, 'claims'> {
  /** Its rows. */
  rows: readonly StepRow[]
  /** The scenarios whose claims are evaluated on the rows. */
  scenarios: readonly Scenario[]
  /** The command recorded in the folder's manifest; `run` when absent. */
  writer?: string
}

/**
 * Write a run's files into `outDir`: steps.csv, summary.csv, breaks.csv, claims.csv and report.html (the
 * claims evaluated on the rows) and any further `files`, each atomically, then mark the folder complete.
 * A previous cachelab run's files there are replaced; a file cachelab did not write is a usage error,
 * before anything is touched.
 */
export function writeRunFiles(outDir: string, run: RunFilesInput): RunFiles {
  const folder = RunFolder.replace(resolve(outDir), {
    writer: run.writer ?? 'run',
    files: [...RUN_FILES, ...Object.keys(run.files ?? {})],
  })
  try {
    const written = writeInto(folder, run)
    folder.complete()
    return written
  } catch (error) {
    folder.abandon()
    throw error
  }
}

/** The run's files into an open folder (not yet marked complete). */
export function writeInto(folder: RunFolder, run: RunFilesInput): RunFiles {
  const writer = new RunFilesWriter(folder)
  try {
    for (const row of run.rows) writer.add(row)
    const comparisons = run.comparisons ?? []
    const compared: Record<string, string> = {
      ...(comparisons.length > 0 ? { 'loops.csv': loopsCsv(comparisons) } : {}),
      ...(run.libraries !== undefined
        ? {
            'libraries.csv': librariesCsv(run.libraries),
            'library-steps.csv': libraryStepsCsv(run.libraries),
          }
        : {}),
    }
    return writer.finish({
      ...run,
      claims: evaluateClaims(run.scenarios, run.rows),
      files: { ...compared, ...run.files },
    })
  } finally {
    writer.close()
  }
}

/** The claims evaluated on the rows, and the summaries with them counted in (a run without a folder). */
export function verdictsOf(rows: readonly StepRow[], scenarios: readonly Scenario[]): RunFiles {
  const claims = evaluateClaims(scenarios, rows)
  return { summaries: withClaims(summarize(rows), claims), claims }
}
