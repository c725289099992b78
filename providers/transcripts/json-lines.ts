// The JSON lines of a transcript file, streamed: a `.jsonl` file through node:readline, a `.jsonl.zstd`
// (or `.zst`) one through fzstd's streaming decompressor first, so neither is ever held whole. A line that
// is not one JSON value fails with `file:line`, or is reported and skipped under `lenient`.

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

/**
 * The JSON value of every non-blank line of `file`, in order. A line that is not exactly one JSON value
 * (a torn write, two objects run together) throws a `CachelabError` (kind `input`) naming `file:line`,
 * unless `options.lenient`: then `options.onProblem` hears of it and the line is skipped. A file that
 * cannot be read, or a compressed stream that breaks off, fails the same way (under `lenient`, the lines
 * before the break are kept).
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
      } catch (error) {
        const where = `${file}:${line}`
        const message = `not one JSON value (${asError(error).message})`
        if (!options.lenient) throw new CachelabError('input', `${where}: ${message}`)
        options.onProblem({ where, message })
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
