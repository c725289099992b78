// Benchmarks of `cachelab serve` at scale, in process over real HTTP with session capture on, as serve
// runs: (d) thousands of live sessions sharing a system prompt, (e) sessions expiring in virtual time
// under the default memory budget, (f) an 11 MB request beside small ones, on a fresh server and on the
// server (e) filled; (h) requests per second against a bare node server at 22k-token bodies, fresh and
// growing sessions (notes/2026-12-02-serve-prefix.md). Figures are ratios where time is involved
// (notes/2026-11-30-serve-scale.md).

import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Bench } from 'tinybench'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import { CacheSimulators } from '../sim/index.ts'
import { countTokens } from '../sim/tokens.ts'
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

/** Words the rate benchmark's texts are drawn from (about one token each, with the number two). */
const RATE_WORDS = (
  'cache prefix token session request answer model system review change build check test branch ' +
  'merge commit file line value field record table index memory budget entry expire order write read ' +
  'stream chunk parse input output report figure number count limit start end time clock virtual'
).split(' ')

/** About `tokens` tokens of text of its own (a deterministic walk through RATE_WORDS, seeded). */
function walkText(seed: number, tokens: number): string {
  let state = (seed * 7_919 + 1) >>> 0
  const words: string[] = [`Text ${seed}:`]
  for (let index = 0; index < tokens / 2; index += 1) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    words.push(`${RATE_WORDS[state % RATE_WORDS.length]}${(state >>> 8) % 100}`)
  }
  return words.join(' ')
}

/** One request of a traffic shape: its session and its body as the client sends it. */
interface RateRequest {
  session: string
  body: string
}

/** Fresh sessions: every request a session of its own, 11 messages of about 2,000 tokens of its own text. */
export function freshSessions(requests: number): RateRequest[] {
  return Array.from({ length: requests }, (_, index) => ({
    session: `fresh-${index}`,
    body: JSON.stringify({
      model: 'gpt-5.4',
      messages: Array.from({ length: 11 }, (_, part) => ({
        role: part === 0 ? 'system' : part % 2 === 1 ? 'user' : 'assistant',
        content: walkText(index * 11 + part, 2_000),
      })),
    }),
  }))
}

/**
 * Growing sessions: a 12,000-token system prompt, then about 400 tokens a turn (an answer and the next
 * user message), 50 turns a session, then a new session; the last turns reach about 32,000 tokens.
 */
export function growingSessions(requests: number): RateRequest[] {
  const shaped: RateRequest[] = []
  for (let session = 0; shaped.length < requests; session += 1) {
    const messages: unknown[] = [
      { role: 'system', content: walkText(1_000_000 + session, 12_000) },
      { role: 'user', content: walkText(2_000_000 + session * 100, 200) },
    ]
    for (let turn = 0; turn < 50 && shaped.length < requests; turn += 1) {
      shaped.push({ session: `growing-${session}`, body: JSON.stringify({ model: 'gpt-5.4', messages }) })
      messages.push(
        { role: 'assistant', content: walkText(3_000_000 + session * 100 + turn, 200) },
        { role: 'user', content: walkText(4_000_000 + session * 100 + turn, 200) },
      )
    }
  }
  return shaped
}

/**
 * A node HTTP server that reads each body, parses it and answers a fixed chat completion: the floor. With
 * `counting`, it also counts the tokens of every message's text with cachelab's tokenizer, from scratch:
 * the floor of any server that must count a fresh body's tokens to answer its usage.
 */
async function startBare(counting = false): Promise<{ url: string; close: () => Promise<void> }> {
  const answer = JSON.stringify({
    id: 'chatcmpl-bare',
    object: 'chat.completion',
    created: 0,
    model: 'gpt-5.4',
    choices: [{ index: 0, message: { role: 'assistant', content: 'OK.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  })
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        messages: Array<{ content: string }>
      }
      if (counting) for (const message of body.messages) countTokens(message.content)
      outgoing.writeHead(200, { 'content-type': 'application/json' })
      outgoing.end(answer)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/openai/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** Requests per second of one server at one traffic shape, one request after another. */
export interface RateFigures {
  /** Requests per second of wall time. */
  serveRate: number
  bareRate: number
  /** serve's rate over the bare server's (goal: at least 0.5). */
  ratio: number
  /** CPU milliseconds of the whole process (client and server) per request. */
  serveCpuMs: number
  bareCpuMs: number
  /** The bare server that also counts every message's tokens, when asked for: its rate over the bare one's. */
  countingRatio?: number
}

/** Send the requests to `url` one after another; wall and CPU milliseconds. */
async function sendAll(
  url: string,
  requests: readonly RateRequest[],
): Promise<{ wallMs: number; cpuMs: number }> {
  const began = performance.now()
  const cpu = process.cpuUsage()
  for (const request of requests) {
    const response = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer bench',
        'x-cachelab-session': request.session,
      },
      body: request.body,
    })
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`the server answered ${response.status}`)
  }
  const used = process.cpuUsage(cpu)
  return { wallMs: performance.now() - began, cpuMs: (used.user + used.system) / 1000 }
}

/**
 * (h) serve's requests per second against a bare node server reading the same bodies, in the same run.
 * Both servers are warmed on bodies of the same shape first; then each shape is sent to each server in
 * alternating rounds, and each server's best round counts (the machine is shared: the best round is the
 * one least disturbed).
 */
export async function benchServeRate(
  shape: (requests: number) => RateRequest[],
  requests = 100,
  rounds = 3,
  options: { countingFloor?: boolean } = {},
): Promise<RateFigures> {
  const bodies = shape(requests * (rounds + 1))
  const { server } = await startServe()
  const bare = await startBare()
  const counting = options.countingFloor === true ? await startBare(true) : undefined
  try {
    const round = (index: number) => bodies.slice(index * requests, (index + 1) * requests)
    // Warm-up: the JIT, the tokenizer; serve's caches see other sessions than the measured ones.
    await sendAll(bare.url, round(0))
    if (counting !== undefined) await sendAll(counting.url, round(0))
    await sendAll(
      server.baseURLs.openai,
      round(0).map((request) => ({ ...request, session: `warm-${request.session}` })),
    )
    let best = {
      serve: { wallMs: Number.POSITIVE_INFINITY, cpuMs: 0 },
      bare: { wallMs: Number.POSITIVE_INFINITY, cpuMs: 0 },
    }
    let countingWallMs = Number.POSITIVE_INFINITY
    for (let index = 1; index <= rounds; index += 1) {
      const bareRun = await sendAll(bare.url, round(index))
      const serveRun = await sendAll(server.baseURLs.openai, round(index))
      if (bareRun.wallMs < best.bare.wallMs) best = { ...best, bare: bareRun }
      if (serveRun.wallMs < best.serve.wallMs) best = { ...best, serve: serveRun }
      if (counting !== undefined)
        countingWallMs = Math.min(countingWallMs, (await sendAll(counting.url, round(index))).wallMs)
    }
    const serveRate = (requests * 1000) / best.serve.wallMs
    const bareRate = (requests * 1000) / best.bare.wallMs
    return {
      serveRate,
      bareRate,
      ratio: serveRate / bareRate,
      serveCpuMs: best.serve.cpuMs / requests,
      bareCpuMs: best.bare.cpuMs / requests,
      ...(counting !== undefined ? { countingRatio: best.bare.wallMs / countingWallMs } : {}),
    }
  } finally {
    await counting?.close()
    await bare.close()
    await server.close()
  }
}
