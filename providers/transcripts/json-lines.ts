// The JSON lines of a transcript file, streamed: a `.jsonl` file through node:readline, a `.jsonl.zstd`
// (or `.zst`) one through fzstd's streaming decompressor first, so neither is ever held whole. A line that
// is not one JSON value fails with `file:line`, or under `lenient` is reported and skipped (two records
// run together on one line are reported and both read).

import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { pipeline, type Readable, Transform } from 'node:stream'
import { Decompress } from 'fzstd'
import { CachelabError } from '../../harness/errors.ts'
import type { ReadOptions } from './types.ts'

/** One line of a transcript: its 1-based number and its JSON value. */
export interface JsonLine {
  line: number
  value: unknown
}

/** Whether a file name says its content is Zstandard-compressed. */
export function isZstdFile(file: string): boolean {
  return file.endsWith('.zstd') || file.endsWith('.zst')
}

/**
 * A transform that decompresses a Zstandard stream block by block. fzstd keeps one frame's window (a few
 * MiB at most at the usual levels) and the compressed block in progress, never the whole file.
 */
function zstdDecompressor(): Transform {
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      try {
        decompressor.push(chunk)
        callback()
      } catch (error) {
        callback(asError(error))
      }
    },
    flush(callback) {
      try {
        decompressor.push(new Uint8Array(0), true)
        callback()
      } catch (error) {
        callback(asError(error))
      }
    },
  })
  // A block may be a view of fzstd's own buffers: copy it before queueing.
  const decompressor = new Decompress((data) => {
    if (data.length > 0) transform.push(Buffer.from(data))
  })
  return transform
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}

/** How a file is read: the size of the chunks taken from disk (tests make them tiny). */
export interface ReadChunking {
  chunkBytes?: number
}

/** The decoded byte stream of a transcript file (decompressed when its name says zstd). */
function openText(file: string, chunking: ReadChunking): Readable {
  const source = createReadStream(
    file,
    chunking.chunkBytes === undefined ? {} : { highWaterMark: chunking.chunkBytes },
  )
  if (!isZstdFile(file)) return source
  // pipeline destroys the decompressor with the file's error, so the line reader sees it.
  return pipeline(source, zstdDecompressor(), () => {})
}

/** What a line that is not one JSON value holds. */
export type LineFault =
  /** Several objects or arrays written back to back: a writer lost a newline. Each value is kept. */
  | { kind: 'run-together'; values: unknown[] }
  /** A value still open where the line ends: a write torn off. */
  | { kind: 'torn' }
  | { kind: 'not-json' }

/**
 * Why `text` (which `JSON.parse` refused) is not one JSON value. Scans for top-level objects and arrays,
 * skipping over strings, so two records run together are told apart from a torn or garbled one.
 */
export function lineFault(text: string): LineFault {
  const pieces: string[] = []
  let depth = 0
  let start = 0
  let inString = false
  let escaped = false
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index]
    if (inString) {
      if (escaped) escaped = false
      else if (character === '\\') escaped = true
      else if (character === '"') inString = false
      continue
    }
    if (depth === 0) {
      if (/\s/.test(character ?? '')) continue
      if (character !== '{' && character !== '[') return { kind: 'not-json' }
      start = index
    }
    if (character === '"') inString = true
    else if (character === '{' || character === '[') depth += 1
    else if (character === '}' || character === ']') {
      depth -= 1
      if (depth === 0) pieces.push(text.slice(start, index + 1))
    }
  }
  if (depth > 0 || inString) return { kind: 'torn' }
  try {
    return pieces.length > 1
      ? { kind: 'run-together', values: pieces.map((piece) => JSON.parse(piece)) }
      : { kind: 'not-json' }
  } catch {
    return { kind: 'not-json' }
  }
}

/** A problem in a few words: never the line's text, which holds the user's messages. */
function faultMessage(fault: LineFault): string {
  switch (fault.kind) {
    case 'run-together':
      return `${fault.values.length} JSON values run together on one line (a lost newline)`
    case 'torn':
      return 'a JSON value that breaks off (a torn write)'
    case 'not-json':
      return 'not JSON'
  }
}

/**
 * The JSON value of every non-blank line of `file`, in order. A line that is not exactly one JSON value
 * throws a `CachelabError` (kind `input`) naming `file:line`, unless `options.lenient`: then
 * `options.onProblem` hears of it, and the line is skipped — or, when it holds several values run
 * together, each is read. A file that cannot be read, or a compressed stream that breaks off, fails the
 * same way (under `lenient`, the lines before the break are kept).
 */
export async function* readJsonLines(
  file: string,
  options: ReadOptions,
  chunking: ReadChunking = {},
): AsyncGenerator<JsonLine> {
  const lines = createInterface({ input: openText(file, chunking), crlfDelay: Number.POSITIVE_INFINITY })
  let line = 0
  try {
    for await (const text of lines) {
      line += 1
      if (text.trim() === '') continue
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch {
        const where = `${file}:${line}`
        const fault = lineFault(text)
        const message = faultMessage(fault)
        if (!options.lenient) throw new CachelabError('input', `${where}: ${message}`)
        options.onProblem({ where, message })
        if (fault.kind === 'run-together') for (const each of fault.values) yield { line, value: each }
        continue
      }
      yield { line, value }
    }
  } catch (error) {
    if (error instanceof CachelabError) throw error
    const where = `${file}:${line + 1}`
    const message = `cannot read on (${asError(error).message})`
    if (!options.lenient || line === 0) throw new CachelabError('input', `${where}: ${message}`)
    options.onProblem({ where, message })
  } finally {
    lines.close()
  }
}
