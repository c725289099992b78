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
