// Streamed JSON-lines reading for transcript files: one record per JSON object, each named by `file:line`.
// A line holding two objects back to back (a writer that lost a newline), a corrupt line, or a last line
// torn off by a writer that was still writing, fails unless `lenient`; then it is reported, and the objects
// run together are each read while a corrupt or torn line is skipped. The bytes come from line-bytes.ts
// (`.zstd` files decompressed as they stream; no file is ever held whole).

import { CachelabError, unreachable } from '../../../harness/errors.ts'
import { isRecord } from '../../../harness/json-fields.ts'
import { type JsonPicker, pickJson } from './json-pick.ts'
import { FileChunks, LineLimit, LineSplitter, MAX_LINE_BYTES, TOO_LONG_MARK } from './line-bytes.ts'
import type { ReadOptions } from './types.ts'

/** One JSON object of a transcript and where it sits. */
export interface JsonRecord {
  /** The object (one of several when a line holds more than one). */
  value: Record<string, unknown>
  /** 1-based line number in the file (after decompression). */
  line: number
  /** `file:line`: how sources and problems name the record. */
  where: string
}

/** What one line of text holds. */
export type LineContent =
  | { kind: 'blank' }
  /** One object, or several written back to back on one line. */
  | { kind: 'objects'; values: Array<Record<string, unknown>> }
  /** Not JSON objects: the reason, in a few words. */
  | { kind: 'corrupt'; reason: string }

/**
 * Split text into the top-level JSON values written back to back in it (`{…}{…}`), by tracking nesting
 * outside strings. Undefined when the text ends inside a value (torn) or holds something between values.
 */
export function splitJsonValues(text: string): string[] | undefined {
  const values: string[] = []
  let depth = 0
  let inString = false
  let escaped = false
  let start = -1
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index]
    if (inString) {
      if (escaped) escaped = false
      else if (character === '\\') escaped = true
      else if (character === '"') inString = false
      continue
    }
    if (depth === 0) {
      if (character === ' ' || character === '\t' || character === '\r') continue
      if (character !== '{' && character !== '[') return undefined
      start = index
    }
    if (character === '"') inString = true
    else if (character === '{' || character === '[') depth += 1
    else if (character === '}' || character === ']') {
      depth -= 1
      if (depth === 0) values.push(text.slice(start, index + 1))
    }
  }
  return depth === 0 && !inString && values.length > 0 ? values : undefined
}

/**
 * The parser's complaint without the excerpt of the line V8 quotes in some messages: a transcript line
 * holds the user's messages, which reach no output without being asked for.
 */
function parseFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.replace(/, ".*" is not valid JSON$/s, '')
}

/** Parse one line: blank, one or more JSON objects, or corrupt with a reason. */
export function parseLine(text: string): LineContent {
  if (text.trim() === '') return { kind: 'blank' }
  try {
    const value: unknown = JSON.parse(text)
    return isRecord(value)
      ? { kind: 'objects', values: [value] }
      : { kind: 'corrupt', reason: 'not a JSON object' }
  } catch (error) {
    const pieces = splitJsonValues(text)
    if (pieces === undefined || pieces.length < 2)
      return {
        kind: 'corrupt',
        reason: `not JSON (${parseFailure(error)})`,
      }
    const values: Array<Record<string, unknown>> = []
    for (const piece of pieces) {
      try {
        const value: unknown = JSON.parse(piece)
        if (!isRecord(value)) return { kind: 'corrupt', reason: 'holds a JSON value that is not an object' }
        values.push(value)
      } catch {
        return { kind: 'corrupt', reason: 'holds several JSON values, not all of them valid' }
      }
    }
    return { kind: 'objects', values }
  }
}

/**
 * A line a reader cannot use: fail with `FILE:LINE: message` (kind `input`), or, when `lenient`, tell
 * `onProblem` and let the caller skip it.
 */
/**
 * Records a reader passes over for a reason that is no error (a provider cachelab does not model, an
 * aborted request), counted by reason and told to `onNote` once the file is read.
 */
export class SkipTally {
  private readonly reasons = new Map<string, { count: number; where: string }>()

  /** Count one record passed over at `where`; gives the nothing a reader yields for it. */
  add(where: string, reason: string): [] {
    const known = this.reasons.get(reason)
    if (known === undefined) this.reasons.set(reason, { count: 1, where })
    else known.count += 1
    return []
  }

  /** Each reason as one note, `<count> <noun>s <reason>`, at the first place it was seen. */
  report(options: ReadOptions, noun = 'request'): void {
    for (const [reason, { count, where }] of this.reasons)
      options.onNote?.({ where, message: `${count} ${noun}${count === 1 ? '' : 's'} ${reason}` })
  }
}

/** A record a reader cannot use: an input error naming `where`, or under `lenient` a problem told on. */
export function recordProblem(options: ReadOptions, where: string, message: string): [] {
  if (!options.lenient) throw new CachelabError('input', `${where}: ${message}`)
  options.onProblem({ where, message })
  return []
}

export function lineProblem(file: string, line: number, message: string, options: ReadOptions): void {
  const where = `${file}:${line}`
  if (!options.lenient)
    throw new CachelabError('input', `${where}: ${message} (--lenient skips such lines and counts them)`, {
      location: { file, line },
    })
  options.onProblem({ where, message })
}

/** How `readJsonRecords` reads a file. */
export interface JsonLinesOptions {
  /** A line longer than this is a problem at its line (default `MAX_LINE_BYTES`). */
  maxLineBytes?: number
  /**
   * Build only these fields of each line that is one valid JSON object (json-pick.ts); any other line is
   * parsed whole, so a corrupt one is told as it would be without.
   */
  pick?: JsonPicker
  /** Bytes read at a time (default 1 MiB): less for a reader that stops after a few lines. */
  chunkBytes?: number
}

/** Whether a line ends with the mark of a line cut at the limit. */
function cutAtLimit(bytes: Buffer): boolean {
  const offset = bytes.length - TOO_LONG_MARK.length
  if (offset < 0) return false
  for (let index = TOO_LONG_MARK.length - 1; index >= 0; index -= 1)
    if (bytes[offset + index] !== TOO_LONG_MARK[index]) return false
  return true
}

/** The UTF-8 byte order mark, which a file's first line may open with. */
const BOM = [0xef, 0xbb, 0xbf]

/**
 * The JSON objects of a JSON-lines file, in order, streamed. Blank lines are skipped. The last line is
 * held back one step so that a torn one (no newline at the end of the file) is told apart from a corrupt
 * one. A file that cannot be read at all fails whatever `lenient` says.
 */
export async function* readJsonRecords(
  file: string,
  options: ReadOptions,
  reading: JsonLinesOptions = {},
): AsyncGenerator<JsonRecord> {
  for await (const batch of readJsonRecordBatches(file, options, reading)) yield* batch
}

/**
 * `readJsonRecords` a chunk's worth at a time: one step of an async generator per record costs more than
 * reading the record does. A problem is told (or thrown) after the records of the lines before it have
 * been handed on, as one record at a time would have it.
 */
export async function* readJsonRecordBatches(
  file: string,
  options: ReadOptions,
  reading: JsonLinesOptions = {},
): AsyncGenerator<JsonRecord[]> {
  const maxLineBytes = reading.maxLineBytes ?? MAX_LINE_BYTES
  const pick = reading.pick
  const source = new FileChunks(file, reading.chunkBytes ?? 2 ** 20)
  const limit = new LineLimit(maxLineBytes)
  let lastByte: number | undefined

  /** A problem of a line, and the objects read from it all the same. */
  type LineProblem = { message: string; values: Array<Record<string, unknown>> }
  // The records of the lines read since the last batch was handed on.
  let batch: JsonRecord[] = []
  /**
   * Put the records of one line into `batch`. A problem is returned rather than told, so that the records
   * before it are handed on first.
   */
  const take = (bytes: Buffer, line: number, last: boolean): LineProblem | undefined => {
    if (cutAtLimit(bytes))
      return {
        message: `a line longer than ${maxLineBytes / 2 ** 20} MiB: not a transcript record`,
        values: [],
      }
    const bom = line === 1 && BOM.every((byte, index) => bytes[index] === byte)
    if (pick !== undefined && !bom) {
      const value = pickJson(bytes, pick)
      if (value !== undefined) {
        batch.push({ value, line, where: `${file}:${line}` })
        return undefined
      }
    }
    const text = bytes.toString('utf8')
    const content = parseLine(bom ? text.replace(/^\uFEFF/, '') : text)
    switch (content.kind) {
      case 'blank':
        return undefined
      case 'objects':
        // Records run together are damage (a writer lost a newline): a problem, though each one is read.
        if (content.values.length > 1)
          return {
            message: `${content.values.length} JSON values run together on one line (a lost newline)`,
            values: content.values,
          }
        for (const value of content.values) batch.push({ value, line, where: `${file}:${line}` })
        return undefined
      case 'corrupt': {
        const torn = last && lastByte !== 0x0a
        return {
          message: torn
            ? 'torn last line: the file ends inside a record (was it still being written?)'
            : content.reason,
          values: [],
        }
      }
      default:
        return unreachable(content)
    }
  }
  /** Hand on the batch, then tell the problem (thrown unless lenient), then keep the line's objects. */
  async function* told(problem: LineProblem, line: number): AsyncGenerator<JsonRecord[]> {
    if (batch.length > 0) {
      const full = batch
      batch = []
      yield full
    }
    lineProblem(file, line, problem.message, options)
    for (const value of problem.values) batch.push({ value, line, where: `${file}:${line}` })
  }

  let held: { bytes: Buffer; line: number } | undefined
  let count = 0
  const splitter = new LineSplitter()
  for await (const chunk of source.chunks()) {
    if (chunk.length > 0) lastByte = chunk[chunk.length - 1]
    for (const bytes of splitter.push(limit.cut(chunk))) {
      count += 1
      if (held !== undefined) {
        const problem = take(held.bytes, held.line, false)
        if (problem !== undefined) yield* told(problem, held.line)
      }
      held = { bytes, line: count }
    }
    // The line held back is kept past its chunk, whose buffer the next chunk is read into.
    if (held !== undefined) held.bytes = Buffer.from(held.bytes)
    if (batch.length > 0) {
      const full = batch
      batch = []
      yield full
    }
  }
  const failure = source.failure
  const last = failure === undefined ? splitter.end() : undefined
  if (last !== undefined) {
    count += 1
    if (held !== undefined) {
      const problem = take(held.bytes, held.line, false)
      if (problem !== undefined) yield* told(problem, held.line)
    }
    held = { bytes: last, line: count }
  }
  if (failure?.kind === 'read') {
    const code = (failure.error as NodeJS.ErrnoException).code
    throw new CachelabError('input', `${file}: cannot read (${code ?? failure.error.message})`)
  }
  if (failure?.kind === 'zstd') {
    if (batch.length > 0) yield batch
    // A compressed stream that breaks off: the lines before it stand; the line it broke in is one problem.
    const reason = failure.error.message || 'unexpected end'
    lineProblem(file, Math.max(count, 1), `the zstd stream is damaged or cut short here (${reason})`, options)
    return
  }
  if (held !== undefined) {
    const problem = take(held.bytes, held.line, true)
    if (problem !== undefined) yield* told(problem, held.line)
  }
  if (batch.length > 0) yield batch
}
