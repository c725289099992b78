// One writer per run folder: a lock file beside the folder (in its parent) naming the writer's pid. It is
// made whole by a hard link, so it is never seen half written; a lock whose pid is no longer running is
// taken over (notes/2026-12-02-run-folders.md).

import { randomBytes } from 'node:crypto'
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { CachelabError } from '../harness/errors.ts'

/** What a lock file holds. */
export interface LockHolder {
  /** The process writing the folder. */
  pid: number
  /** Unique to one acquisition: tells this holder from a later one with the same pid. */
  token: string
  /** The command writing (`run`, `report`, ...). */
  writer: string
  /** When the lock was taken (ISO 8601). */
  started: string
}

/** Whether a process is running: signal 0 tests without sending; EPERM means it runs as another user. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The lock file of a folder: hidden, in its parent, named after it. */
export function lockFileOf(dir: string): string {
  return join(dirname(dir), `.${basename(dir)}.cachelab-lock`)
}

/** A held lock on a folder. */
export class FolderLock {
  readonly file: string
  private readonly holder: LockHolder

  private constructor(file: string, holder: LockHolder) {
    this.file = file
    this.holder = holder
  }

  /**
   * Take the lock on `dir` (its parent must exist). A lock held by a running process is a usage error
   * naming the pid and the lock file; one whose process is gone is taken over.
   */
  static acquire(dir: string, writer: string, alive: (pid: number) => boolean = processAlive): FolderLock {
    const file = lockFileOf(dir)
    const holder: LockHolder = {
      pid: process.pid,
      token: randomBytes(8).toString('hex'),
      writer,
      started: new Date().toISOString(),
    }
    const draft = `${file}.${holder.token}`
    writeFileSync(draft, `${JSON.stringify(holder)}\n`)
    try {
      // A few rounds: each round either takes the lock, refuses, or clears one stale lock.
      for (let round = 0; round < 5; round += 1) {
        try {
          linkSync(draft, file)
          return new FolderLock(file, holder)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw lockError(dir, error)
        }
        const current = readHolder(file)
        if (current === 'gone') continue
        if (current === 'unreadable')
          throw new CachelabError(
            'usage',
            `${dir} is locked by ${file}, which is not a cachelab lock: remove it if no cachelab is writing there`,
          )
        if (alive(current.pid)) throw heldError(dir, file, current)
        // Stale: move it aside under a name of our own. Of two processes taking it over, one rename wins.
        const aside = `${file}.stale-${holder.token}`
        try {
          renameSync(file, aside)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue
          throw lockError(dir, error)
        }
        const moved = readHolder(aside)
        if (typeof moved === 'object' && moved.token !== current.token && alive(moved.pid)) {
          // Another process took the stale lock over between our read and our rename: give it back.
          try {
            linkSync(aside, file)
          } catch {}
          rmSync(aside, { force: true })
          throw heldError(dir, file, moved)
        }
        rmSync(aside, { force: true })
      }
      throw new CachelabError('usage', `${dir}: could not take ${file}; another cachelab keeps taking it`)
    } finally {
      rmSync(draft, { force: true })
    }
  }

  /** Whether the lock file is still this holder's (not taken over by another process meanwhile). */
  holds(): boolean {
    const current = readHolder(this.file)
    return typeof current === 'object' && current.token === this.holder.token
  }

  /** Remove the lock file, if it is still this holder's. */
  release(): void {
    if (this.holds()) rmSync(this.file, { force: true })
  }
}

function readHolder(file: string): LockHolder | 'gone' | 'unreadable' {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone'
    return 'unreadable'
  }
  try {
    const value = JSON.parse(text) as Partial<LockHolder>
    if (typeof value.pid === 'number' && typeof value.token === 'string')
      return {
        pid: value.pid,
        token: value.token,
        writer: String(value.writer ?? ''),
        started: String(value.started ?? ''),
      }
  } catch {}
  return 'unreadable'
}

function heldError(dir: string, file: string, holder: LockHolder): CachelabError {
  return new CachelabError(
    'usage',
    `${dir} is being written by another cachelab ${holder.writer} (pid ${holder.pid}, since ${holder.started}; lock ${file}): wait for it to finish or write elsewhere`,
  )
}

function lockError(dir: string, error: unknown): CachelabError {
  return new CachelabError(
    'input',
    `cannot lock ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
  )
}
