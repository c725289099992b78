// The first bytes of a transcript file, and what they tell before any record is read: whether it is a
// SQLite database (opencode's). Shared by detection and the opencode readers, so neither imports the other.

import { closeSync, openSync, readSync } from 'node:fs'

/** The first bytes of a file (none when it cannot be read). */
export function headOf(file: string, bytes = 256): Buffer {
  let handle: number | undefined
  try {
    handle = openSync(file, 'r')
    const head = Buffer.alloc(bytes)
    return head.subarray(0, readSync(handle, head, 0, bytes, 0))
  } catch {
    return Buffer.alloc(0)
  } finally {
    if (handle !== undefined) closeSync(handle)
  }
}

/** How a SQLite database file begins. */
const SQLITE_MAGIC = Buffer.from('SQLite format 3\u0000', 'latin1')

/** Whether the bytes begin as a SQLite database does. */
export const isSqliteHead = (head: Buffer) =>
  head.length >= SQLITE_MAGIC.length && head.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)

/** Whether the file starts as a SQLite database does. */
export function isSqliteFile(file: string): boolean {
  return isSqliteHead(headOf(file, SQLITE_MAGIC.length))
}
