#!/usr/bin/env node
// The cachelab command: runs the TypeScript CLI through tsx, so no build step is needed after `npm ci`.
import { register } from 'tsx/esm/api'

register()
const { main } = await import('./cli.ts')
process.exitCode = await main(process.argv.slice(2))
