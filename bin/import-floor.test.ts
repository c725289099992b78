import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readLinesBare } from './import-floor.ts'

const folders: string[] = []
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true })
})

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'cachelab-import-floor-'))
  folders.push(root)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

describe('the bare reader under the import bench', () => {
  it('parses every non-blank line of every .jsonl file below the folder, lines longer than a read included', () => {
    const long = JSON.stringify({ text: 'é'.repeat(300) })
    const root = tree({
      'projects/a/one.jsonl': `{"a":1}\n\n${long}\n{"b":[2]}`,
      'projects/a/sub/two.jsonl': `${long}\r\n{"c":"\\n"}\n`,
      'projects/notes.txt': 'not read\n',
    })
    for (const chunk of [7, 64, 2 ** 20])
      expect(readLinesBare(root, chunk)).toEqual({
        files: 2,
        lines: 5,
        bytes:
          Buffer.byteLength(`{"a":1}\n\n${long}\n{"b":[2]}`) + Buffer.byteLength(`${long}\r\n{"c":"\\n"}\n`),
      })
  })

  it('fails on a line that is not JSON, as JSON.parse does', () => {
    const root = tree({ 'x.jsonl': '{"a":1}\n{"torn":\n' })
    expect(() => readLinesBare(root, 5)).toThrow(SyntaxError)
  })
})
