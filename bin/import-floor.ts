// The floor the import bench (bin/import.bench.ts) sets beside `cachelab import` and ccusage: a bare Node
// reader of a folder's JSON-lines files that reads each file in chunks, decodes every line and parses it
// with `JSON.parse`, and keeps nothing. It is what any Node program that reads every record whole pays
// before it computes anything, so it shows how much of the gap to a native peer is Node's own.

import { closeSync, openSync, readdirSync, readSync } from 'node:fs'
import { join } from 'node:path'

/** What the reader went through. */
export interface BareRead {
  files: number
  lines: number
  bytes: number
}

/** Every `.jsonl` file under `folder`, depth first in the order the folder lists them. */
function jsonLinesFiles(folder: string, into: string[] = []): string[] {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) jsonLinesFiles(path, into)
    else if (entry.isFile() && entry.name.endsWith('.jsonl')) into.push(path)
  }
  return into
}

/**
 * Read, decode and parse every non-blank line of every `.jsonl` file under `folder`; a line that is not
 * JSON throws, as `JSON.parse` does. `chunkBytes` is how much is read at a time (a longer line grows it).
 */
export function readLinesBare(folder: string, chunkBytes = 2 ** 20): BareRead {
  const read: BareRead = { files: 0, lines: 0, bytes: 0 }
  let buffer = Buffer.allocUnsafe(chunkBytes)
  for (const file of jsonLinesFiles(folder)) {
    read.files += 1
    const descriptor = openSync(file, 'r')
    try {
      // Bytes [0, held) are the start of a line the previous read left unfinished.
      let held = 0
      for (;;) {
        if (held === buffer.length) {
          const larger = Buffer.allocUnsafe(buffer.length * 2)
          buffer.copy(larger, 0, 0, held)
          buffer = larger
        }
        const count = readSync(descriptor, buffer, held, buffer.length - held, null)
        read.bytes += count
        const end = held + count
        let start = 0
        for (;;) {
          const newline = buffer.indexOf(0x0a, start)
          // The last line of a file without a final newline ends where the file does.
          const lineEnd = newline >= 0 && newline < end ? newline : count === 0 ? end : -1
          if (lineEnd < 0) break
          if (lineEnd > start) {
            const text = buffer.toString('utf8', start, lineEnd)
            if (text.trim() !== '') {
              JSON.parse(text)
              read.lines += 1
            }
          }
          start = lineEnd + 1
          if (start >= end) break
        }
        if (count === 0) break
        held = Math.max(0, end - start)
        if (held > 0) buffer.copy(buffer, 0, start, end)
      }
    } finally {
      closeSync(descriptor)
    }
  }
  return read
}
