#!/usr/bin/env node
// The cachelab command. Installed from the package, which ships no sources, it runs the built
// `dist/bin/cli.js`. In the repository, where the TypeScript source sits beside this file, it runs a
// JavaScript copy of the sources that dev-build.js keeps in node_modules/.cache, rebuilding the files whose
// content changed since (so `npm ci && npx cachelab run` needs no build, and an edited file is never run
// stale); when that copy cannot be made (no esbuild, a read-only cache, a syntax error) it runs `cli.ts`
// through tsx, which reports the error. Either way the CLI runs in this process (tsx registers a loader,
// it starts no child), so SIGINT and SIGTERM reach serve's and record's own handlers directly.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

async function loadCli() {
  const source = new URL('./cli.ts', import.meta.url)
  if (!existsSync(source)) return import('../dist/bin/cli.js')
  if (process.env.CACHELAB_DEV_BUILD !== '0') {
    let built
    try {
      const { prepare } = await import('./dev-build.js')
      built = await prepare(fileURLToPath(new URL('..', import.meta.url)))
    } catch {
      built = undefined
    }
    if (built !== undefined) {
      // Stack traces name the TypeScript lines, as under tsx.
      process.setSourceMapsEnabled(true)
      return import(built.href)
    }
  }
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
