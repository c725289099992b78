// Report files read from disk: the one place in reports/ that touches the file system, so the commands
// and users' own tests read a steps.csv or summary.csv the same way.

import { readFileSync } from 'node:fs'
import { CachelabError } from '../harness/errors.ts'
import { parseBreaksCsv, parseReportCsv, parseStepsCsv, parseSummaryCsv, type ReportCsv } from './parse.ts'
import type { BreakRow, StepRow, SummaryRow } from './types.ts'

/** The text of a file; a missing or unreadable file is an input error naming it. */
export function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new CachelabError('input', `cannot read ${path}: ${readFailure(error)}`)
  }
}

function readFailure(error: unknown): string {
  switch ((error as { code?: unknown }).code) {
    case 'ENOENT':
      return 'no such file'
    case 'EISDIR':
      return 'a directory, not a file'
    case 'EACCES':
      return 'permission denied'
    default:
      return error instanceof Error ? error.message : String(error)
  }
}

/** Read a steps.csv or summary.csv, telling which by its header. */
export function readReportCsv(path: string): ReportCsv {
  return parseReportCsv(readText(path), path)
}

/** Read a steps.csv. */
export function readStepsCsv(path: string): StepRow[] {
  return parseStepsCsv(readText(path), path)
}

/** Read a summary.csv (a committed baseline's, for example). */
export function readSummaryCsv(path: string): SummaryRow[] {
  return parseSummaryCsv(readText(path), path)
}

/** Read a breaks.csv. */
export function readBreaksCsv(path: string): BreakRow[] {
  return parseBreaksCsv(readText(path), path)
}
