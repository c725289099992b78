// Streamed JSON-lines reading for transcript files: one record per JSON object, each named by `file:line`.
// A line holding two objects back to back (a writer that lost a newline), a corrupt line, or a last line
// torn off by a writer that was still writing, fails unless `lenient`; then it is reported, and the objects
// run together are each read while a corrupt or torn line is skipped. `.zstd` files are decompressed as they stream; no file is ever held whole.

import { createReadStream } from 'node:fs'
import { Transform, type TransformCallback } from 'node:stream'
import { Decompress } from 'fzstd'
import { CachelabError, unreachable } from '../../../harness/errors.ts'
import { type JsonPicker, pickJson } from './json-pick.ts'
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

/** A JSON object (not an array, not null), as the transcript formats write each record. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

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

/** A transform that decompresses a zstd stream chunk by chunk. */
function zstdDecompressor(): Transform {
  const transform: Transform = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      try {
        decompressor.push(chunk)
        callback()
      } catch (error) {
        callback(error instanceof Error ? error : new Error(String(error)))
      }
    },
    flush(callback: TransformCallback) {
      try {
        decompressor.push(new Uint8Array(0), true)
        callback()
      } catch (error) {
        callback(error instanceof Error ? error : new Error(String(error)))
      }
    },
  })
  // fzstd may hand out views of a buffer it reuses: copy each chunk before passing it on.
  const decompressor = new Decompress((data) => {
    transform.push(Buffer.from(data))
  })
  return transform
}

/**
 * The longest line read as a record: a transcript line holds one message (an image in base64 included);
 * a longer one is a problem at its line, never a string too large to hold.
 */
export const MAX_LINE_BYTES = 128 * 2 ** 20

/** What an over-long line is cut to end with: a NUL, which JSON text never holds unescaped. */
const TOO_LONG_MARK = Buffer.from('\u0000cachelab:line-too-long')
const NEWLINE = Buffer.from('\n')

/** Whether a path names a zstd-compressed transcript. */
export function isZstd(file: string): boolean {
  return file.endsWith('.zstd') || file.endsWith('.zst')
}

/**
 * Lines of a byte stream, chunk by chunk, split where readline splits them: at `\n`, `\r\n` and a lone
 * `\r` (a `\r\n` split across two chunks is one break). Each line is its bytes (a view of the chunk, or
 * the pieces of a line across chunks joined): splitting bytes (neither byte occurs inside a UTF-8
 * sequence) costs far less than decoding every chunk and matching a regular expression over it, and a
 * reader that needs only some of a line need not decode the rest.
 */
export class LineSplitter {
  /** The start of the current line, from earlier chunks. */
  private carried: Buffer[] = []
  /** The last chunk ended with `\r`: a `\n` opening the next belongs to that break. */
  private afterReturn = false

  /** The lines the chunk completes. */
  push(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = []
    let start = 0
    if (this.afterReturn && chunk.length > 0) {
      this.afterReturn = false
      if (chunk[0] === 0x0a) start = 1
    }
    let newline = chunk.indexOf(0x0a, start)
    let carriage = chunk.indexOf(0x0d, start)
    while (newline !== -1 || carriage !== -1) {
      let end: number
      let next: number
      if (carriage !== -1 && (newline === -1 || carriage < newline)) {
        end = carriage
        next = carriage + 1
        if (next === chunk.length) this.afterReturn = true
        else if (chunk[next] === 0x0a) next += 1
      } else {
        end = newline
        next = newline + 1
      }
      lines.push(this.line(chunk, start, end))
      start = next
      if (newline !== -1 && newline < start) newline = chunk.indexOf(0x0a, start)
      if (carriage !== -1 && carriage < start) carriage = chunk.indexOf(0x0d, start)
    }
    if (start < chunk.length) this.carried.push(chunk.subarray(start))
    return lines
  }

  /** The last line, when the stream does not end with a line break. */
  end(): Buffer | undefined {
    if (this.carried.length === 0) return undefined
    return this.line(Buffer.alloc(0), 0, 0)
  }

  private line(chunk: Buffer, start: number, end: number): Buffer {
    if (this.carried.length === 0) return chunk.subarray(start, end)
    const whole = Buffer.concat([...this.carried, chunk.subarray(start, end)])
    this.carried = []
    return whole
  }
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
  const source = createReadStream(file, { highWaterMark: reading.chunkBytes ?? 2 ** 20 })
  let lastByte: number | undefined
  // Bytes of the current line so far, and whether the rest of an over-long line is being dropped.
  let lineBytes = 0
  let dropping = false
  const tail = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      if (chunk.length > 0) lastByte = chunk[chunk.length - 1]
      // A line past the limit is cut there and marked; the rest of it is dropped up to its newline, so
      // no line grows into a string V8 cannot hold.
      if (!dropping) {
        // Most chunks end no line past the limit: passed on as they are.
        const first = chunk.indexOf(0x0a)
        const last = first === -1 ? -1 : chunk.lastIndexOf(0x0a)
        const rest = chunk.length - last - 1
        if (
          first === -1
            ? lineBytes + chunk.length <= maxLineBytes
            : lineBytes + first <= maxLineBytes && rest <= maxLineBytes && last - first <= maxLineBytes
        ) {
          lineBytes = first === -1 ? lineBytes + chunk.length : rest
          callback(null, chunk)
          return
        }
      }
      const kept: Buffer[] = []
      let start = 0
      while (start < chunk.length) {
        const newline = chunk.indexOf(0x0a, start)
        const end = newline === -1 ? chunk.length : newline
        if (!dropping) {
          const room = maxLineBytes - lineBytes
          if (end - start > room) {
            kept.push(chunk.subarray(start, start + room), TOO_LONG_MARK)
            dropping = true
          } else kept.push(chunk.subarray(start, end))
          lineBytes += end - start
        }
        if (newline === -1) break
        kept.push(NEWLINE)
        lineBytes = 0
        dropping = false
        start = newline + 1
      }
      callback(null, kept.length === 1 ? kept[0] : Buffer.concat(kept))
    },
  })
  // Where the stream broke, if it did: the file itself, or the compressed data in it.
  let failure: { kind: 'read' | 'zstd'; error: Error } | undefined
  const fail = (kind: 'read' | 'zstd') => (error: Error) => {
    failure ??= { kind, error }
    // Ends the loop below once what reached `tail` is read: those lines stand; the one the stream broke in
    // is not read.
    if (!tail.writableEnded && !tail.destroyed) tail.end()
  }
  source.on('error', fail('read'))
  tail.on('error', fail('read'))
  if (isZstd(file)) {
    const decompressed = zstdDecompressor()
    decompressed.on('error', fail('zstd'))
    source.pipe(decompressed).pipe(tail)
  } else source.pipe(tail)

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
  try {
    try {
      for await (const chunk of tail as AsyncIterable<Buffer>) {
        for (const bytes of splitter.push(chunk)) {
          count += 1
          if (held !== undefined) {
            const problem = take(held.bytes, held.line, false)
            if (problem !== undefined) yield* told(problem, held.line)
          }
          held = { bytes, line: count }
        }
        if (batch.length > 0) {
          const full = batch
          batch = []
          yield full
        }
      }
      const last = failure === undefined ? splitter.end() : undefined
      if (last !== undefined) {
        count += 1
        if (held !== undefined) {
          const problem = take(held.bytes, held.line, false)
          if (problem !== undefined) yield* told(problem, held.line)
        }
        held = { bytes: last, line: count }
      }
    } catch (error) {
      if (failure === undefined) throw error
    }
    if (failure?.kind === 'read') {
      const code = (failure.error as NodeJS.ErrnoException).code
      throw new CachelabError('input', `${file}: cannot read (${code ?? failure.error.message})`)
    }
    if (failure?.kind === 'zstd') {
      if (batch.length > 0) yield batch
      // A compressed stream that breaks off: the lines before it stand; the line it broke in is one problem.
      const reason = failure.error.message || 'unexpected end'
      lineProblem(
        file,
        Math.max(count, 1),
        `the zstd stream is damaged or cut short here (${reason})`,
        options,
      )
      return
    }
    if (held !== undefined) {
      const problem = take(held.bytes, held.line, true)
      if (problem !== undefined) yield* told(problem, held.line)
    }
    if (batch.length > 0) yield batch
  } finally {
    tail.destroy()
    source.destroy()
  }
}
