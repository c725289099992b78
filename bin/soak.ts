// `npm run soak`: a bounded load check of `cachelab serve` on loopback. Starts the real command as a child
// process on a free 127.0.0.1 port, drives it with concurrent clients for a fixed time or request count
// (whichever ends first), and prints requests per second, p50/p99 latency and the server's memory from
// its health endpoint. Traffic: sessions under one shared system prompt, each a few growing turns, moving
// on in virtual time so earlier sessions' caches expire (what a long test suite sends).
//
//   npm run soak -- [--seconds 20] [--requests 20000] [--concurrency 8] [--memory-budget MB]

import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { HealthState } from '../providers/mock/control.ts'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    requests: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '8' },
    'memory-budget': { type: 'string' },
  },
})
const seconds = Math.min(600, Number(values.seconds))
const limit = Math.min(1_000_000, Number(values.requests))
const concurrency = Math.max(1, Math.min(64, Number(values.concurrency)))
if (![seconds, limit, concurrency].every((value) => Number.isFinite(value) && value > 0)) {
  process.stderr.write('soak: --seconds, --requests and --concurrency must be positive numbers\n')
  process.exit(2)
}

/** Start `cachelab serve --port 0` and resolve with its URL once it listens. */
function startServe(): Promise<{ child: ChildProcess; url: string }> {
  const command = fileURLToPath(new URL('./cachelab.js', import.meta.url))
  const budget = values['memory-budget'] === undefined ? [] : ['--memory-budget', values['memory-budget']]
  const child = spawn(process.execPath, [command, 'serve', '--port', '0', '--host', '127.0.0.1', ...budget], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    let output = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (match?.[1] !== undefined) resolve({ child, url: match[1] })
    })
    child.once('exit', (code) => reject(new Error(`cachelab serve exited (${code}) before it listened`)))
  })
}

const health = async (url: string) => (await (await fetch(`${url}/cachelab/health`)).json()) as HealthState

const system = Array.from({ length: 300 }, (_, index) => `Guideline ${index}: keep answers exact.`).join(' ')

const { child, url } = await startServe()
// One request first, outside the figures: the tokenizer loads its ranks on the first count.
await fetch(`${url}/openai/v1/chat/completions`, {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    authorization: 'Bearer soak',
    'x-cachelab-session': 'warm-up',
  },
  body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'warm up' }] }),
})
const latencies: number[] = []
let sent = 0
let failed = 0
const began = performance.now()
const deadline = began + seconds * 1000
let peakRss = 0
const sampler = setInterval(() => {
  health(url)
    .then((state) => {
      peakRss = Math.max(peakRss, state.memory.rssBytes)
    })
    .catch(() => undefined)
}, 500)

/** One client: sessions of four turns, each session an hour of virtual time after the one before. */
async function client(id: number): Promise<void> {
  for (let round = 0; ; round += 1) {
    const session = round * concurrency + id
    const messages: unknown[] = [{ role: 'system', content: system }]
    for (let turn = 0; turn < 4; turn += 1) {
      if (sent >= limit || performance.now() >= deadline) return
      sent += 1
      messages.push({
        role: 'user',
        content: `Session ${session}, turn ${turn}: review change ${session * 4 + turn}.`,
      })
      const begin = performance.now()
      try {
        const response = await fetch(`${url}/openai/v1/chat/completions`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: 'Bearer soak',
            'x-cachelab-at': String(session * 3_600 + turn * 10),
          },
          body: JSON.stringify({ model: 'gpt-5.4', messages }),
        })
        const answer = (await response.json()) as { choices?: Array<{ message?: { content?: string } }> }
        if (response.status !== 200) failed += 1
        messages.push({ role: 'assistant', content: answer.choices?.[0]?.message?.content ?? '' })
      } catch {
        failed += 1
      }
      latencies.push(performance.now() - begin)
    }
  }
}

const startRss = (await health(url)).memory.rssBytes
await Promise.all(Array.from({ length: concurrency }, (_, id) => client(id)))
const elapsed = (performance.now() - began) / 1000
clearInterval(sampler)
const end = await health(url)
child.kill('SIGTERM')
await new Promise((resolve) => child.once('exit', resolve))

latencies.sort((left, right) => left - right)
const percentile = (fraction: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor(fraction * latencies.length))] ?? Number.NaN
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`
const simulator = end.memory.simulator
process.stdout.write(
  [
    `cachelab serve soak: ${latencies.length.toLocaleString('en-US')} requests in ${elapsed.toFixed(1)} s, ` +
      `${concurrency} clients, ${failed} failed`,
    `  throughput ${(latencies.length / elapsed).toFixed(0)} req/s`,
    `  latency    p50 ${percentile(0.5).toFixed(1)} ms, p99 ${percentile(0.99).toFixed(1)} ms, max ${percentile(1).toFixed(1)} ms`,
    `  memory     RSS ${mb(startRss)} at start, ${mb(Math.max(peakRss, end.memory.rssBytes))} peak, ${mb(end.memory.rssBytes)} at end` +
      (end.memory.budgetBytes !== undefined ? ` (budget ${mb(end.memory.budgetBytes)})` : ''),
    `  caches     tries ${mb(simulator?.bytes ?? 0)} (pruned ${simulator?.prunes ?? 0}×), token memo ${mb(end.memory.tokenMemoBytes ?? 0)}, ` +
      `${(end.memory.capture?.sessions ?? 0).toLocaleString('en-US')} sessions remembered`,
    '',
  ].join('\n'),
)
process.exitCode = failed > 0 ? 1 : 0
