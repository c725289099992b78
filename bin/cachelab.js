#!/usr/bin/env node
// The cachelab command. In the repository, where the TypeScript source sits beside this file, it runs
// `cli.ts` through tsx, so `npm ci && npx cachelab run` needs no build; installed from the package, which
// ships no sources, it runs the built `dist/bin/cli.js` with plain node (tsx is not installed there).
import { existsSync } from 'node:fs'

async function loadCli() {
  const source = new URL('./cli.ts', import.meta.url)
  if (!existsSync(source)) return import('../dist/bin/cli.js')
  const { register } = await import('tsx/esm/api')
  register()
  return import(source.href)
}

const { main } = await loadCli()
process.exitCode = await main(process.argv.slice(2))
