// The append-only JSONL session store: one event per line, written as it happens, read back with
// every line validated. A torn final line (a crash mid-write) is reported and preserved, never dropped.

import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { CachelabError, logError } from './errors.ts'
import { SessionProjection } from './session.ts'
import type { SessionEvent } from './types.ts'
import { upgradeLogLine } from './upgrade.ts'
import { checkEventShape } from './validate.ts'

/** A torn final line: its 1-based number and the bytes that were there. */
export interface TornLine {
  line: number
  text: string
}

/** A log read from disk. */
export interface ReadLog {
  events: SessionEvent[]
  /** Present when the last line was cut mid-write; its events were not applied. */
  torn?: TornLine
}

/** Read and validate a session log. Errors name the file and line; a torn final line is returned, not thrown. */
export function readSessionLog(file: string): ReadLog {
  let content: string
  try {
    content = readFileSync(file, 'utf8')
  } catch (error) {
    throw new CachelabError('input', `cannot read ${file}: ${(error as Error).message}`)
  }
  return parseSessionLog(content, file)
}

/** Parse log text (the pure part of `readSessionLog`). */
export function parseSessionLog(content: string, file: string): ReadLog {
  const lines = content.split('\n')
  const endsWithNewline = content.endsWith('\n')
  if (endsWithNewline) lines.pop()
  const events: SessionEvent[] = []
  let projection: SessionProjection | undefined
  for (const [index, text] of lines.entries()) {
    const lineNumber = index + 1
    const isLast = index === lines.length - 1
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      if (isLast && !endsWithNewline) return { events, torn: { line: lineNumber, text } }
      throw logError(file, lineNumber, 'not valid JSON')
    }
    const checked = checkEventShape(upgradeLogLine(value))
    if ('problem' in checked) throw logError(file, lineNumber, checked.problem)
    const event = checked.event
    try {
      if (projection === undefined) {
        if (event.type !== 'session/start')
          throw new CachelabError('log', 'the first event must be session/start')
        projection = SessionProjection.empty(event.data.sessionId)
      }
      projection.apply(event)
    } catch (error) {
      throw logError(file, lineNumber, (error as Error).message)
    }
    events.push(event)
  }
  return { events }
}

/** One problem of a log, at its 1-based line. */
export interface LogProblem {
  line: number
  reason: string
}

/** What checking every line of a log found. */
export interface LogCheck {
  /** Lines that are well-formed events. */
  events: number
  /** Every invalid line, in order; empty when the log is valid. */
  problems: LogProblem[]
  /** A final line cut mid-write: readable logs may end so (resuming moves it aside), so not a problem. */
  torn?: TornLine
}

/**
 * Check every line of a log (the pure part of `cachelab validate`). Unlike `parseSessionLog`, which stops
 * at the first fault, each line is checked: JSON and shape on every line, and the session's own rules
 * (first event, seqs, surface ranges) up to the first line that breaks them — after that the session state
 * is unknown, so later lines are checked for shape only.
 */
export function checkSessionLog(content: string): LogCheck {
  // An empty file holds no session: a log always opens with session/start.
  if (content.trim() === '')
    return { events: 0, problems: [{ line: 1, reason: 'empty: a session log opens with session/start' }] }
  const lines = content.split('\n')
  const endsWithNewline = content.endsWith('\n')
  if (endsWithNewline) lines.pop()
  const problems: LogProblem[] = []
  let events = 0
  let projection: SessionProjection | undefined
  let projectionBroken = false
  for (const [index, text] of lines.entries()) {
    const line = index + 1
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      if (index === lines.length - 1 && !endsWithNewline) return { events, problems, torn: { line, text } }
      problems.push({ line, reason: 'not valid JSON' })
      continue
    }
    const checked = checkEventShape(value)
    if ('problem' in checked) {
      problems.push({ line, reason: checked.problem })
      continue
    }
    events += 1
    if (projectionBroken) continue
    try {
      if (projection === undefined) {
        if (checked.event.type !== 'session/start')
          throw new CachelabError('log', 'the first event must be session/start')
        projection = SessionProjection.empty(checked.event.data.sessionId)
      }
      projection.apply(checked.event)
    } catch (error) {
      projectionBroken = true
      problems.push({
        line,
        reason: `${(error as Error).message} (later lines are checked for shape only)`,
      })
    }
  }
  return { events, problems }
}

/**
 * An open log file that events are appended to, one line each, as the loop commits them. Opening an
 * existing log with a torn tail moves the torn bytes to `<file>.torn` before appending.
 */
export class JsonlSessionWriter {
  private fd: number | undefined
  readonly file: string

  private constructor(file: string, fd: number) {
    this.file = file
    this.fd = fd
  }

  /** Start a new log file (an existing file is an error: logs are never overwritten). */
  static create(file: string): JsonlSessionWriter {
    if (existsSync(file))
      throw new CachelabError('input', `${file} already exists; a session log is never overwritten`)
    return new JsonlSessionWriter(file, openSync(file, 'a'))
  }

  /** Open an existing log to continue it; returns the writer and the events already in it. */
  static resume(file: string): { writer: JsonlSessionWriter; log: ReadLog } {
    const log = readSessionLog(file)
    if (log.torn !== undefined) {
      // Save the torn bytes first, then cut them off: the intact lines are never rewritten.
      writeFileSync(`${file}.torn`, `line ${log.torn.line}: ${log.torn.text}\n`, { flag: 'a' })
      truncateSync(file, statSync(file).size - Buffer.byteLength(log.torn.text))
    }
    return { writer: new JsonlSessionWriter(file, openSync(file, 'a')), log }
  }

  append(event: SessionEvent): void {
    if (this.fd === undefined) throw new CachelabError('invariant', `${this.file} is closed`)
    writeSync(this.fd, `${JSON.stringify(event)}\n`)
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}
