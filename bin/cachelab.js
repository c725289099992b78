#!/usr/bin/env node
// The cachelab command. In the repository, where the TypeScript source sits beside this file, it runs
// `cli.ts` through tsx, so `npm ci && npx cachelab run` needs no build; installed from the package, which
// ships no sources, it runs the built `dist/bin/cli.js` with plain node (tsx is not installed there).
// Either way the CLI runs in this process (tsx registers a loader, it starts no child), so SIGINT and
// SIGTERM reach serve's and record's own handlers directly.
import { existsSync } from 'node:fs'

async function loadCli() {
  const source = new URL('./cli.ts', import.meta.url)
  if (!existsSync(source)) return import('../dist/bin/cli.js')
  const { register } = await import('tsx/esm/api')
  register()
  return import(source.href)
}

// Started by npm (npx, npm exec, npm run), this process is a child of `sh -c`, and the SIGTERM npm passes
// on kills that shell without reaching here: `npx cachelab serve &` then `kill %1` would leave the server
// running. So when the process that started this one goes away, stop as a SIGTERM would have stopped it
// (notes/2026-12-02-record.md).
if (process.env.npm_command !== undefined) {
  const launcher = process.ppid
  const watch = setInterval(() => {
    if (process.ppid === launcher) return
    clearInterval(watch)
    process.kill(process.pid, 'SIGTERM')
  }, 250)
  watch.unref()
}

const { main } = await loadCli()
process.exitCode = await main(process.argv.slice(2))
