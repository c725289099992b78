// An append-only JSON Lines file for a long-running command (`serve --log`, a capture's files): opened
// once before the command starts, so an unwritable path is a usage error at start; afterwards an append
// never throws, and each distinct write error is reported once while the command keeps running.

import { appendFileSync, closeSync, openSync, statfsSync } from 'node:fs'
import { dirname } from 'node:path'
import { CachelabError } from '../harness/errors.ts'

/** procfs's and sysfs's magic numbers (statfs(2)): file systems whose files are no place for a log. */
const KERNEL_FILE_SYSTEMS = new Set([0x9fa0, 0x62656572])

/** A JSON Lines file that is appended to, one record per line. */
export interface JsonlSink {
  /** The file's path as given. */
  readonly path: string
  /** Append one record as a line. Never throws: a failure goes to the sink's `onError`. */
  append(record: unknown): void
  /** How many records could not be written. */
  readonly lost: number
}

export interface JsonlSinkOptions {
  /** How messages name the file, for example `--log` (the path follows). */
  label: string
  /**
   * Called with a one-line message the first time each distinct error (by error code, else message)
   * fails an append; the same error again is counted in `lost`, not reported.
   */
  onError: (message: string, error: Error) => void
}

/**
 * Open `path` for appending (creating it), or throw an input error naming the reason: its directory is
 * missing, it is a directory, permission is denied. Each append reopens the file, so a file moved away
 * is recreated and one replaced by something unwritable is reported, never written to unseen.
 */
export function openJsonlSink(path: string, options: JsonlSinkOptions): JsonlSink {
  try {
    closeSync(openSync(path, 'a'))
    // The kernel's files (procfs, sysfs) open for writing, and then refuse every line.
    if (KERNEL_FILE_SYSTEMS.has(statfsSync(path).type))
      throw new CachelabError(
        'input',
        `cannot write ${options.label} ${path}: it is a kernel file (/proc, /sys), not a log; name a file on disk`,
      )
  } catch (error) {
    if (error instanceof CachelabError) throw error
    throw new CachelabError(
      'input',
      `cannot write ${options.label} ${path}: ${reasonOf(error as Error, path)}`,
    )
  }
  const reported = new Set<string>()
  let lost = 0
  return {
    path,
    get lost() {
      return lost
    },
    append(record: unknown): void {
      try {
        appendFileSync(path, `${JSON.stringify(record)}\n`)
      } catch (caught) {
        lost += 1
        const error = caught instanceof Error ? caught : new Error(String(caught))
        const key = (error as NodeJS.ErrnoException).code ?? error.message
        if (reported.has(key)) return
        reported.add(key)
        options.onError(
          `cannot write ${options.label} ${path}: ${reasonOf(error, path)} (records are being lost; this error is reported once)`,
          error,
        )
      }
    },
  }
}

/** A short reason for a file system error, naming what the user can fix. */
function reasonOf(error: Error, path: string): string {
  const code = (error as NodeJS.ErrnoException).code
  switch (code) {
    case 'ENOENT':
      return `no such directory ${dirname(path)}`
    case 'EISDIR':
      return 'it is a directory'
    case 'ENOTDIR':
      return 'a parent of it is not a directory'
    case 'EACCES':
    case 'EPERM':
      return 'permission denied'
    case 'EROFS':
      return 'read-only file system'
    case 'ENOSPC':
      return 'no space left on device'
    default:
      return code === undefined ? error.message : `${error.message} (${code})`
  }
}
