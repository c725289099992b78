// A worker thread on a TypeScript module of the repository: registers tsx in the worker (loader hooks
// are per thread), then imports the module named by the worker's first argument. The built package runs
// its JavaScript workers directly and does not need this file.
import { argv } from 'node:process'

const { register } = await import('tsx/esm/api')
register()
await import(argv[2])
