// Making a folder and its missing parents, one level at a time. Node's own recursive `mkdir` never
// returns on some paths (under /proc it loops on ENOENT forever); made level by level, the first level
// that cannot be made is an input error naming the folder and why.

import { mkdirSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { CachelabError } from './errors.ts'

/** Make `dir` and any missing parents; a path that cannot be a folder is an input error naming it. */
export function makeDirectories(dir: string): void {
  const missing: string[] = []
  let at = resolve(dir)
  for (;;) {
    let exists = false
    try {
      exists = statSync(at).isDirectory()
      if (!exists) throw new CachelabError('input', `cannot create ${dir}: ${at} is not a folder`)
    } catch (error) {
      if (error instanceof CachelabError) throw error
      const code = (error as NodeJS.ErrnoException).code
      // Missing, or under a file (ENOTDIR): the level above says which.
      if (code !== 'ENOENT' && code !== 'ENOTDIR')
        throw new CachelabError('input', `cannot create ${dir}: ${at}: ${code ?? (error as Error).message}`)
    }
    if (exists) break
    missing.unshift(at)
    const parent = dirname(at)
    if (parent === at) break
    at = parent
  }
  for (const folder of missing) {
    try {
      mkdirSync(folder)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      // Made meanwhile by someone else: what was wanted.
      if (code === 'EEXIST' && statSync(folder).isDirectory()) continue
      throw new CachelabError('input', `cannot create ${dir}: ${folder}: ${code ?? (error as Error).message}`)
    }
  }
}
