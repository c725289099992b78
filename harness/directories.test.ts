import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeDirectories } from './directories.ts'

describe('making folders', () => {
  it('makes a folder and its missing parents, and is content when it exists', () => {
    const root = mkdtempSync(join(tmpdir(), 'cachelab-dirs-'))
    const deep = join(root, 'a', 'b', 'c')
    makeDirectories(deep)
    expect(statSync(deep).isDirectory()).toBe(true)
    expect(() => makeDirectories(deep)).not.toThrow()
  })

  it('names the folder and why when a parent is a file', () => {
    const root = mkdtempSync(join(tmpdir(), 'cachelab-dirs-'))
    writeFileSync(join(root, 'file'), 'x')
    expect(() => makeDirectories(join(root, 'file', 'out'))).toThrow(
      /cannot create .*file\/out: .*file is not a folder/,
    )
  })

  it.runIf(existsSync('/proc/self'))('answers at once where a recursive mkdir never returns (/proc)', () => {
    expect(() => makeDirectories('/proc/cachelab-x/y')).toThrow(
      /cannot create \/proc\/cachelab-x\/y: \/proc\/cachelab-x: ENOENT/,
    )
  })
})
