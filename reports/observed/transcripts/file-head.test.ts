import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { headOf, isSqliteFile, isSqliteHead } from './file-head.ts'

const folder = () => mkdtempSync(join(tmpdir(), 'cachelab-file-head-'))

describe("a transcript file's head", () => {
  it('is its first bytes, fewer for a short file, none for one that cannot be read', () => {
    const file = join(folder(), 'a.jsonl')
    writeFileSync(file, '{"type":"user"}\n')
    expect(headOf(file, 8).toString()).toBe('{"type":')
    expect(headOf(file).toString()).toBe('{"type":"user"}\n')
    expect(headOf(join(folder(), 'missing.jsonl')).length).toBe(0)
  })

  it('tells a SQLite database by its magic, whole: not a near miss, not a file shorter than it', () => {
    const root = folder()
    const database = join(root, 'a.db')
    writeFileSync(database, Buffer.concat([Buffer.from('SQLite format 3\u0000', 'latin1'), Buffer.alloc(84)]))
    const near = join(root, 'b.db')
    writeFileSync(near, 'SQLite format 3!and more')
    const short = join(root, 'c.db')
    writeFileSync(short, 'SQLite format 3')
    expect([database, near, short].map(isSqliteFile)).toEqual([true, false, false])
    expect(isSqliteHead(Buffer.alloc(0))).toBe(false)
  })
})
