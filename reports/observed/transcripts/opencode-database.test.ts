import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { isSqliteFile } from './file-head.ts'
import { opencodeDatabaseFormat, openOpencodeDatabase } from './opencode-database.ts'

const folder = () => mkdtempSync(join(tmpdir(), 'cachelab-opencode-database-'))

describe("opencode's database", () => {
  it('is a SQLite file with its tables; another SQLite file or a text file is not', () => {
    const text = join(folder(), 'notes.db')
    writeFileSync(text, 'SQLite format 2, not really')
    expect(isSqliteFile(text)).toBe(false)
    const other = join(folder(), 'other.db')
    const database = new Database(other)
    database.exec('create table session (id text)')
    database.close()
    expect(isSqliteFile(other)).toBe(true)
    expect(opencodeDatabaseFormat(other)).toBeUndefined()
  })

  it("streams each message with its step-finish parts only, in the session's order", () => {
    const file = join(folder(), 'opencode.db')
    const database = new Database(file)
    database.exec(`
      create table session (id text, parent_id text, version text, directory text, time_created integer);
      create table message (id text, session_id text, time_created integer, data text);
      create table part (id text, message_id text, time_created integer, data text);
      insert into session values ('ses_a', null, '1.18.33', '/w', 1);
      insert into message values ('msg_2', 'ses_a', 20, '{"role":"assistant"}'), ('msg_1', 'ses_a', 10, '{"role":"user"}');
      insert into part values ('prt_1', 'msg_2', 21, '{"type":"text","text":"hi"}'),
        ('prt_2', 'msg_2', 22, '{"type":"step-finish","tokens":{"input":1,"output":1}}');
    `)
    database.close()
    expect(opencodeDatabaseFormat(file)).toBe('opencode')
    const opened = openOpencodeDatabase(file)
    try {
      expect(opened.sessions).toEqual([
        { id: 'ses_a', parentId: undefined, version: '1.18.33', directory: '/w' },
      ])
      expect(
        [...opened.messages()].map((message) => [message.id, message.steps.map((step) => step.id)]),
      ).toEqual([
        ['msg_1', []],
        ['msg_2', ['prt_2']],
      ])
    } finally {
      opened.close()
    }
  })
})
