// `npm run soak`: a bounded load check of `cachelab serve` on loopback. Starts the real command as a child
// process on a free 127.0.0.1 port, drives it with concurrent clients for a fixed time or request count
// (whichever ends first), and prints requests per second, p50/p99 latency and the server's memory from
// its health endpoint. Traffic: sessions under one shared system prompt, each a few growing turns, moving
// on in virtual time so earlier sessions' caches expire (what a long test suite sends).
//
//   npm run soak -- [--seconds 20] [--requests 20000] [--concurrency 8] [--memory-budget MB]
//
// With `--sessions N`, many live sessions instead: N distinct sessions (`x-cachelab-session`), each one
// request of a conversation of about `--tokens` tokens (default 20,000) of its own text, at the server's
// own clock (nothing expires on the way); then the clock is moved on two hours and the memory read again.
// It prints the server's peak RSS against the target (1 GiB by default, `--target-mb`).
//
//   npm run soak -- --sessions 10000 [--tokens 20000] [--concurrency 8] [--memory-budget MB]
//
// With `--import-memory`, the peak RSS of `cachelab import` and `cachelab calibrate` on one long Claude
// Code session of about `--gb` GB (default 1) against `--target-mb` (default 512): bin/import-memory.ts.
//
//   npm run soak -- --import-memory [--gb 1] [--target-mb 512]

import { parseArgs } from 'node:util'
import { sessionsSoak, startServe, timedSoak, warmUp } from '../providers/mock/serve-soak.ts'
import { importMemorySoak } from './import-memory.ts'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    requests: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '8' },
    'memory-budget': { type: 'string' },
    sessions: { type: 'string' },
    tokens: { type: 'string', default: '20000' },
    'target-mb': { type: 'string' },
    'import-memory': { type: 'boolean' },
    gb: { type: 'string', default: '1' },
  },
})
const seconds = Math.min(600, Number(values.seconds))
const limit = Math.min(1_000_000, Number(values.requests))
const concurrency = Math.max(1, Math.min(64, Number(values.concurrency)))
if (![seconds, limit, concurrency].every((value) => Number.isFinite(value) && value > 0)) {
  process.stderr.write('soak: --seconds, --requests and --concurrency must be positive numbers\n')
  process.exit(2)
}
// The import's memory needs no server: measured and done before one starts.
if (values['import-memory'] === true) {
  await importMemorySoak(Number(values.gb), Number(values['target-mb'] ?? '512'))
  process.exit()
}

const server = await startServe(values['memory-budget'])
await warmUp(server.url)
if (values.sessions !== undefined)
  await sessionsSoak(server, {
    sessions: Number(values.sessions),
    tokens: Number(values.tokens),
    targetMb: Number(values['target-mb'] ?? '1024'),
    concurrency,
  })
else await timedSoak(server, { seconds, limit, concurrency })
