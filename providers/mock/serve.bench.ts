// Benchmarks of `cachelab serve` at scale, in process over real HTTP with session capture on, as serve
// runs: (d) thousands of live sessions sharing a system prompt, (e) sessions expiring in virtual time
// under the default memory budget, (f) an 11 MB request beside small ones, on a fresh server and on the
// server (e) filled. Figures are ratios where time is involved (notes/2026-11-30-serve-scale.md).

import { Bench } from 'tinybench'
import { CaptureTracker } from '../capture/tracker.ts'
import { CacheSimulators } from '../sim/index.ts'
import { type LoopbackServer, startLoopback } from './loopback.ts'
import { DEFAULT_MEMORY_BUDGET_MB, planMemory } from './memory-budget.ts'
import { TIME_HEADER } from './script.ts'

/** A server as `cachelab serve` starts it (capture on, the default memory budget). */
async function startServe(): Promise<{ server: LoopbackServer; capture: CaptureTracker }> {
  const memory = planMemory(DEFAULT_MEMORY_BUDGET_MB)
  const linearizer = new CacheSimulators({ counter: memory.counter })
  const capture = new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    memoryBytes: memory.trackerBytes,
  })
  const server = await startLoopback({
    upstream: 'sim',
    port: 0,
    capture,
    simulator: { counter: memory.counter, memoryBytes: memory.simulatorBytes },
    memoryBudgetBytes: memory.budgetBytes,
  })
  return { server, capture }
}

/** Post one Chat Completions body; resolves with the status once the whole answer is read. */
async function post(
  server: LoopbackServer,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<number> {
  const response = await fetch(`${server.baseURLs.openai}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`serve answered ${response.status}`)
  return response.status
}

const SHARED_SYSTEM = Array.from(
  { length: 400 },
  (_, index) => `Rule ${index}: be exact about item ${index}.`,
).join(' ')

export interface SiblingFigures {
  sessions: number
  /** Mean milliseconds per request of each tenth of the sessions (each request opens a new live session). */
  tenthsMs: number[]
  /** Last tenth's cost per request over the second tenth's (acceptance: at most 2). */
  ratio: number
}

/** (d) `sessions` live sessions under one system prompt, one tinybench task per tenth of them. */
export async function benchSiblings(sessions = 3_000): Promise<SiblingFigures> {
  const { server } = await startServe()
  try {
    const tenth = Math.floor(sessions / 10)
    let next = 0
    const bench = new Bench({
      name: 'live siblings',
      iterations: tenth,
      time: 0,
      warmupIterations: 0,
      warmupTime: 0,
    })
    for (let index = 0; index < 10; index += 1) {
      bench.add(`tenth ${index + 1}`, async () => {
        const session = next
        next += 1
        // Distinct user messages that often share their first words, as real first turns do.
        await post(server, {
          model: 'gpt-5.4',
          messages: [
            { role: 'system', content: SHARED_SYSTEM },
            {
              role: 'user',
              content: `Please review module ${session % 97} of service ${session}: what changed?`,
            },
          ],
        })
      })
    }
    // Warm the tokenizer and the JIT on sessions that are not measured.
    for (let index = 0; index < 20; index += 1)
      await post(server, { model: 'gpt-5.4', messages: [{ role: 'user', content: `warm ${index}` }] })
    await bench.run()
    const tenthsMs = bench.tasks.map((task) => {
      const result = task.result
      return result !== undefined && 'latency' in result ? result.latency.mean : Number.NaN
    })
    return { sessions, tenthsMs, ratio: (tenthsMs[9] ?? Number.NaN) / (tenthsMs[1] ?? Number.NaN) }
  } finally {
    await server.close()
  }
}

export interface ExpiryFigures {
  sessions: number
  /** RSS after every fifth of the sessions, MiB (after a collection when `global.gc` is exposed). */
  rssMb: number[]
  /** The simulators' estimated bytes at the end, MiB, and how often they were pruned. */
  simulatorMb: number
  prunes: number
  seconds: number
}

/**
 * (e) `sessions` sessions two hours of virtual time apart, two requests each. Each attaches a 30 KB file
 * after its own first message: the text is the same from session to session (tokenized once, so the
 * benchmark is quick), but every request carries its own copy and every session its own trie path, as
 * distinct content would. `whileWarm` runs on the server once they are served, before it closes.
 */
export async function benchExpiry(
  sessions = 20_000,
  whileWarm?: (server: LoopbackServer) => Promise<void>,
): Promise<ExpiryFigures> {
  const { server } = await startServe()
  const collect = (globalThis as { gc?: () => void }).gc
  const rssMb: number[] = []
  const began = performance.now()
  const file = Array.from(
    { length: 700 },
    (_, line) => `line ${line}: total += weight[${line}] * ${line};`,
  ).join('\n')
  try {
    let started = 0
    const worker = async () => {
      for (;;) {
        const session = started
        started += 1
        if (session >= sessions) return
        const messages: unknown[] = [
          { role: 'system', content: SHARED_SYSTEM },
          { role: 'user', content: `Session ${session}: I will attach the file to review.` },
          { role: 'assistant', content: 'Send it.' },
          { role: 'user', content: file },
        ]
        for (let step = 0; step < 2; step += 1) {
          await post(
            server,
            { model: 'gpt-5.4', messages },
            { [TIME_HEADER]: String(session * 7_200 + step * 20) },
          )
          messages.push(
            { role: 'assistant', content: 'Looks right.' },
            { role: 'user', content: `And part ${step}?` },
          )
        }
        if ((session + 1) % (sessions / 5) === 0) {
          collect?.()
          rssMb.push(process.memoryUsage().rss / 1024 / 1024)
        }
      }
    }
    await Promise.all([worker(), worker(), worker(), worker()])
    const stats = server.health().memory.simulator
    const figures = {
      sessions,
      rssMb,
      simulatorMb: (stats?.bytes ?? 0) / 1024 / 1024,
      prunes: stats?.prunes ?? 0,
      seconds: (performance.now() - began) / 1000,
    }
    // The server as a long-running serve leaves it: its sessions, tries and memo still held.
    await whileWarm?.(server)
    return figures
  } finally {
    await server.close()
  }
}

export interface LargeRequestFigures {
  /** Heap in use when the measurement began, MiB (after a collection when `global.gc` is exposed). */
  heapMb: number
  /** Median milliseconds of a small request with nothing else in flight. */
  smallAloneMs: number
  /** The slowest small request sent while the large one was in flight (the one it outlasted included), milliseconds. */
  smallDuringMs: number
  /** Milliseconds the large request took, end to end. */
  largeMs: number
  /** Milliseconds the same body, sent again alone, took end to end (its text tokenized again if the memo had no room). */
  largeAgainMs: number
  /**
   * The large request's own main-thread share, milliseconds: how long the main thread was busy (event-loop
   * utilization) while the same body, sent again alone, was served: parsing, digesting, linearizing,
   * simulating, answering, and the collections they cause. Time in the tokenizer threads is not in it.
   */
  largeShareMs: number
  /** (smallDuring − smallAlone) / largeShare: at most 1 means the large request delayed the small one by no more than its own share. */
  ratio: number
}

/** Where (f) runs: a fresh server of its own, or a server already serving (closed by its owner). */
export interface LargeRequestOptions {
  megabytes?: number
  /** A warm server, for example the one (e) filled with sessions; by default (f) starts its own. */
  server?: LoopbackServer
}

/** (f) An 11 MB request and, while it is in flight, small requests back to back. */
export async function benchLargeRequest(options: LargeRequestOptions = {}): Promise<LargeRequestFigures> {
  const megabytes = options.megabytes ?? 11
  const server = options.server ?? (await startServe()).server
  const collect = (globalThis as { gc?: () => void }).gc
  try {
    collect?.()
    const heapMb = process.memoryUsage().heapUsed / 1024 / 1024
    const small = (index: number) =>
      post(server, { model: 'gpt-5.4', messages: [{ role: 'user', content: `small request ${index}` }] })
    const timed = async (run: () => Promise<unknown>) => {
      const begin = performance.now()
      await run()
      return performance.now() - begin
    }
    for (let index = 0; index < 20; index += 1) await small(index)
    const alone: number[] = []
    for (let index = 0; index < 30; index += 1) alone.push(await timed(() => small(100 + index)))
    alone.sort((left, right) => left - right)
    const smallAloneMs = alone[Math.floor(alone.length / 2)] ?? Number.NaN

    const line = 'The build log says the compiler emitted 42 warnings in module alpha; fix them.\n'
    const text = line.repeat(Math.ceil((megabytes * 1_000_000) / line.length))
    const body = JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: text }] })
    let done = false
    const large = timed(() => post(server, body, { 'x-cachelab-session': 'large' })).finally(() => {
      done = true
    })
    let smallDuringMs = 0
    for (let index = 0; !done; index += 1) {
      // Every small request sent while the large one is in flight counts, the last one too: one stuck
      // behind the large request's final work on the main thread ends after it, and waited all the same.
      smallDuringMs = Math.max(smallDuringMs, await timed(() => small(1_000 + index)))
    }
    const largeMs = await large
    // Its own share: the main thread's busy time while the same body is served again with nothing else
    // in flight (the first time small requests share the thread, so its busy time is not its own).
    const before = performance.eventLoopUtilization()
    const largeAgainMs = await timed(() => post(server, body, { 'x-cachelab-session': 'large-again' }))
    const largeShareMs = performance.eventLoopUtilization(before).active
    return {
      heapMb,
      smallAloneMs,
      smallDuringMs,
      largeMs,
      largeAgainMs,
      largeShareMs,
      ratio: Math.max(0, smallDuringMs - smallAloneMs) / largeShareMs,
    }
  } finally {
    if (options.server === undefined) await server.close()
  }
}
