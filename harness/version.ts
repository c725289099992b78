// cachelab's own version, read once from its package.json: the nearest one above this file named
// `cachelab` (the repository's above `harness/`, the package's above `dist/harness/`).

import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

let cached: string | undefined

/** The `version` of cachelab's package.json; `unknown` when none is found. */
export function cachelabVersion(): string {
  if (cached !== undefined) return cached
  cached = 'unknown'
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown
        version?: unknown
      }
      if (manifest.name === 'cachelab' && typeof manifest.version === 'string') {
        cached = manifest.version
        break
      }
    } catch {}
    if (dirname(dir) === dir) break
  }
  return cached
}
