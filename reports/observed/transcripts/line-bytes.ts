// A transcript file's lines as bytes: read a chunk at a time (a plain file into one buffer read into again
// for every chunk, a `.zstd` file decompressed as it streams), a line past the limit cut there, and split
// where readline splits. No file is ever held whole and nothing is decoded here: the caller decodes what
// it uses (lines.ts).

import { closeSync, createReadStream, openSync, readSync } from 'node:fs'
import { Transform, type TransformCallback } from 'node:stream'

/**
 * The longest line read as a record: a transcript line holds one message (an image in base64 included);
 * a longer one is a problem at its line, never a string too large to hold.
 */
export const MAX_LINE_BYTES = 128 * 2 ** 20

/** What an over-long line is cut to end with: a NUL, which JSON text never holds unescaped. */
export const TOO_LONG_MARK = Buffer.from('\u0000cachelab:line-too-long')
const NEWLINE = Buffer.from('\n')

/** Whether a path names a zstd-compressed transcript. */
export function isZstd(file: string): boolean {
  return file.endsWith('.zstd') || file.endsWith('.zst')
}

/** Where reading a file broke off: the file itself, or the compressed data in it. */
export interface ReadFailure {
  kind: 'read' | 'zstd'
  error: Error
}

/**
 * Buffers a plain file is read into, kept for the next file. A fresh buffer for every chunk made the
 * kernel hand over (and zero) new pages for every byte read, and V8 collect for the memory held outside
 * its heap: as much time again as the reading.
 */
const spare: Buffer[] = []

/**
 * The bytes of a file, chunk by chunk. A plain file's chunk is a view of one buffer that the next chunk is
 * read into: the caller is done with it (or has copied what it keeps) before asking for the next. A read
 * that fails ends the chunks and is kept in `failure`; the chunks before it stand.
 */
export class FileChunks {
  failure: ReadFailure | undefined

  constructor(
    private readonly file: string,
    private readonly chunkBytes: number,
  ) {}

  async *chunks(): AsyncGenerator<Buffer> {
    if (isZstd(this.file)) yield* this.decompressed()
    else yield* this.plain()
  }

  private *plain(): Generator<Buffer> {
    let handle: number
    try {
      handle = openSync(this.file, 'r')
    } catch (error) {
      this.failure = { kind: 'read', error: error as Error }
      return
    }
    const index = spare.findIndex((buffer) => buffer.length === this.chunkBytes)
    const buffer =
      index >= 0 ? (spare.splice(index, 1)[0] as Buffer) : Buffer.allocUnsafeSlow(this.chunkBytes)
    try {
      for (;;) {
        let size: number
        try {
          size = readSync(handle, buffer, 0, buffer.length, null)
        } catch (error) {
          this.failure = { kind: 'read', error: error as Error }
          return
        }
        if (size === 0) return
        yield buffer.subarray(0, size)
      }
    } finally {
      closeSync(handle)
      if (spare.length < 4) spare.push(buffer)
    }
  }

  private async *decompressed(): AsyncGenerator<Buffer> {
    // The decompressor is loaded for the first compressed file, not by every import.
    const { Decompress } = await import('fzstd')
    const source = createReadStream(this.file, { highWaterMark: this.chunkBytes })
    const decompressed = zstdDecompressor(Decompress)
    source.on('error', (error) => {
      this.failure ??= { kind: 'read', error }
      // Ends the chunks once what was decompressed is read: those lines stand; the one the stream broke in
      // is not read.
      if (!decompressed.writableEnded && !decompressed.destroyed) decompressed.end()
    })
    source.pipe(decompressed)
    try {
      for await (const chunk of decompressed as AsyncIterable<Buffer>) yield chunk
    } catch (error) {
      this.failure ??= { kind: 'zstd', error: error as Error }
    } finally {
      decompressed.destroy()
      source.destroy()
    }
  }
}

/** A transform that decompresses a zstd stream chunk by chunk. */
function zstdDecompressor(Decompress: typeof import('fzstd').Decompress): Transform {
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
 * A line past `maxLineBytes` cut there and marked (`TOO_LONG_MARK`), the rest of it dropped up to its
 * newline, as the chunks pass: no line grows into a string V8 cannot hold.
 */
export class LineLimit {
  /** Bytes of the current line so far, and whether the rest of an over-long line is being dropped. */
  private lineBytes = 0
  private dropping = false

  constructor(private readonly maxLineBytes: number) {}

  /** The chunk with any line past the limit cut (the chunk itself when none is). */
  cut(chunk: Buffer): Buffer {
    const limit = this.maxLineBytes
    if (!this.dropping) {
      // Most chunks end no line past the limit: passed on as they are.
      const first = chunk.indexOf(0x0a)
      const last = first === -1 ? -1 : chunk.lastIndexOf(0x0a)
      const rest = chunk.length - last - 1
      if (
        first === -1
          ? this.lineBytes + chunk.length <= limit
          : this.lineBytes + first <= limit && rest <= limit && last - first <= limit
      ) {
        this.lineBytes = first === -1 ? this.lineBytes + chunk.length : rest
        return chunk
      }
    }
    const kept: Buffer[] = []
    let start = 0
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start)
      const end = newline === -1 ? chunk.length : newline
      if (!this.dropping) {
        const room = limit - this.lineBytes
        if (end - start > room) {
          kept.push(chunk.subarray(start, start + room), TOO_LONG_MARK)
          this.dropping = true
        } else kept.push(chunk.subarray(start, end))
        this.lineBytes += end - start
      }
      if (newline === -1) break
      kept.push(NEWLINE)
      this.lineBytes = 0
      this.dropping = false
      start = newline + 1
    }
    return kept.length === 1 ? (kept[0] as Buffer) : Buffer.concat(kept)
  }
}

/**
 * Lines of a byte stream, chunk by chunk, split where readline splits them: at `\n`, `\r\n` and a lone
 * `\r` (a `\r\n` split across two chunks is one break). Each line is its bytes: a view of the chunk, or
 * the pieces of a line across chunks joined. Splitting bytes (neither byte occurs inside a UTF-8 sequence)
 * costs far less than decoding every chunk and matching a regular expression over it, and a reader that
 * needs only some of a line need not decode the rest. A line's view lasts as long as its chunk's bytes:
 * the start of a line the chunk does not end is copied, for the chunk's buffer may be read into again.
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
    if (start < chunk.length) this.carried.push(Buffer.from(chunk.subarray(start)))
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
