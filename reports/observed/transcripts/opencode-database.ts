// opencode's SQLite database (`~/.local/share/opencode/opencode.db`, WAL mode; its fork Kilo Code's
// `~/.local/share/kilo/kilo.db` has the same tables, and its own beside them) opened read-only with
// better-sqlite3 (notes/2026-12-02-opencode-sqlite.md): its sessions, and its messages with their
// `step-finish` parts row by row, never the whole database in memory. The user's database and its WAL
// are never written; where a read-only open cannot be made, a copy of both in a temporary folder is read.

import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type Database from 'better-sqlite3'
import { CachelabError } from '../../../harness/errors.ts'
import { installCommand } from '../../../harness/peers.ts'
import { isSqliteFile } from './file-head.ts'

/**
 * better-sqlite3, loaded when a database is first read: it is an optional peer of cachelab (a native module that
 * may not build where there is no compiler and no prebuilt binary), so everything else works without it.
 */
let sqlite: typeof Database | undefined
function loadSqlite(file: string): typeof Database {
  if (sqlite !== undefined) return sqlite
  try {
    sqlite = createRequire(import.meta.url)('better-sqlite3') as typeof Database
    return sqlite
  } catch (error) {
    throw new CachelabError(
      'input',
      `${file}: reading opencode's database needs better-sqlite3, which is not installed here (${(error as Error).message.split('\n')[0]}); install it (${installCommand(['better-sqlite3'])}), or import an \`opencode export <session>\` JSON instead`,
    )
  }
}

/** The first bytes of every SQLite 3 database file. */

/** The tables the reader needs: an opencode database has them all. */
const OPENCODE_TABLES = ['session', 'message', 'part']

/** One session row. */
export interface DatabaseSession {
  id: string
  parentId: string | undefined
  version: string | undefined
  directory: string | undefined
}

/** One message row, with the `data` of each of its `step-finish` parts in order. */
export interface DatabaseMessage {
  id: string
  sessionId: string
  /** The message's `data` JSON, as stored. */
  data: string
  steps: { id: string; timeCreated: number; data: string }[]
}

/** An opened database and how to let it go (closing it, and removing a copy made to read it). */
interface Opened {
  database: Database.Database
  close: () => void
}

/**
 * Open read-only in place: SQLite's own locking gives a consistent snapshot of the database and its WAL
 * while opencode writes, and a read-only connection never checkpoints. Where that cannot be done (a folder
 * the reader may not write its shared-memory index in), the database and its WAL are copied and the copy
 * is read.
 */
function openReadOnly(file: string): Opened {
  const Sqlite = loadSqlite(file)
  try {
    const database = new Sqlite(file, { readonly: true, fileMustExist: true })
    database.prepare('select count(*) from sqlite_master').get()
    return { database, close: () => database.close() }
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (typeof code !== 'string' || !/^SQLITE_(CANTOPEN|READONLY|PERM|BUSY)/.test(code)) throw error
  }
  const folder = mkdtempSync(join(tmpdir(), 'cachelab-opencode-'))
  const copy = join(folder, 'opencode.db')
  copyFileSync(file, copy)
  if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`)
  const database = new Sqlite(copy, { fileMustExist: true })
  return {
    database,
    close: () => {
      database.close()
      rmSync(folder, { recursive: true, force: true })
    },
  }
}

/**
 * Which database of the opencode family the file is: a SQLite file with opencode's session, message and
 * part tables is opencode's, or Kilo Code's when it also has Kilo's own (`kilo_board`, `kilo_…`); undefined
 * for any other file.
 */
export function opencodeDatabaseFormat(file: string): 'opencode' | 'kilo' | undefined {
  if (!isSqliteFile(file)) return undefined
  let opened: Opened | undefined
  try {
    opened = openReadOnly(file)
    const names = new Set(
      opened.database
        .prepare("select name from sqlite_master where type = 'table'")
        .all()
        .map((row) => (row as { name: string }).name),
    )
    if (!OPENCODE_TABLES.every((name) => names.has(name))) return undefined
    return [...names].some((name) => name.startsWith('kilo_')) ? 'kilo' : 'opencode'
  } catch (error) {
    // Without the library the file cannot be told: say so, rather than call it no transcript.
    if (error instanceof CachelabError) throw error
    return undefined
  } finally {
    opened?.close()
  }
}

type MessageRow = {
  session_id: string
  id: string
  data: string
  part_id: string | null
  part_time: number | null
  part_data: string | null
}

/**
 * The database's sessions (a small table, read whole) and then its messages, each session's in opencode's
 * own order (creation time, then id), each with its `step-finish` parts: streamed row by row.
 */
export function openOpencodeDatabase(file: string): {
  sessions: DatabaseSession[]
  messages: () => Generator<DatabaseMessage>
  close: () => void
} {
  const opened = openReadOnly(file)
  const { database } = opened
  const sessions = database
    .prepare('select id, parent_id, version, directory from session order by time_created, id')
    .all()
    .map((row) => {
      const { id, parent_id, version, directory } = row as Record<string, string | null>
      return {
        id: id as string,
        parentId: parent_id ?? undefined,
        version: version ?? undefined,
        directory: directory ?? undefined,
      }
    })
  // Only the step-finish parts are fetched: text and tool output, most of a database, stay in it.
  const statement = database.prepare(
    `select m.session_id, m.id, m.data, p.id as part_id, p.time_created as part_time, p.data as part_data
       from message m
       left join part p
         on p.message_id = m.id and json_extract(p.data, '$.type') = 'step-finish'
      order by m.session_id, m.time_created, m.id, p.id`,
  )
  function* messages(): Generator<DatabaseMessage> {
    let current: DatabaseMessage | undefined
    for (const raw of statement.iterate()) {
      const row = raw as MessageRow
      if (current === undefined || current.id !== row.id) {
        if (current !== undefined) yield current
        current = { id: row.id, sessionId: row.session_id, data: row.data, steps: [] }
      }
      if (row.part_id !== null && row.part_data !== null)
        current.steps.push({ id: row.part_id, timeCreated: row.part_time ?? 0, data: row.part_data })
    }
    if (current !== undefined) yield current
  }
  return { sessions, messages, close: opened.close }
}
