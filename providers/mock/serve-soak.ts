// The load checks of `npm run soak` (bin/soak.ts): the real `cachelab serve` started as a child process on
// a free 127.0.0.1 port and driven by concurrent clients. The timed soak sends sessions under one shared
// system prompt, a few growing turns each, moving on in virtual time (what a long test suite sends); the
// sessions soak sends many live sessions of their own text and reads the server's memory as they build up.

import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { HealthState } from './control.ts'

/** A started server: its process and its URL. */
export interface SoakServer {
  child: ChildProcess
  url: string
}

/** Start `cachelab serve --port 0` and resolve with its URL once it listens. */
export function startServe(memoryBudget: string | undefined): Promise<SoakServer> {
  const command = fileURLToPath(new URL('../../bin/cachelab.js', import.meta.url))
  const budget = memoryBudget === undefined ? [] : ['--memory-budget', memoryBudget]
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

/** Why requests failed, each reason with its count, so a soak's failures can be told apart (one soak a process). */
const failures = new Map<string, number>()

/** Count a failed request under its reason: the status and the error's message, or the thrown error. */
function failure(reason: string): void {
  const short = reason.length > 160 ? `${reason.slice(0, 160)}…` : reason
  failures.set(short, (failures.get(short) ?? 0) + 1)
}

/** A failed answer's reason: its status and the error message the mock sent. */
function answerFailure(status: number, answer: unknown): string {
  const error = (answer as { error?: { message?: unknown } } | undefined)?.error
  return `${status} ${typeof error?.message === 'string' ? error.message : ''}`.trim()
}

/** The failures' reasons, most frequent first, as report lines (none when nothing failed). */
function failureLines(): string[] {
  return [...failures.entries()]
    .sort((left, right) => right[1] - left[1])
    .slice(0, 5)
    .map(([reason, count]) => `  failed ${count}×: ${reason}`)
}

const system = Array.from({ length: 300 }, (_, index) => `Guideline ${index}: keep answers exact.`).join(' ')

/** One request first, outside the figures: the tokenizer loads its ranks on the first count. */
export async function warmUp(url: string): Promise<void> {
  await fetch(`${url}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer soak',
      'x-cachelab-session': 'warm-up',
    },
    body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'warm up' }] }),
  })
}

/** The default soak: requests per second, latency and memory over a fixed time or request count. */
export async function timedSoak(
  { child, url }: SoakServer,
  { seconds, limit, concurrency }: { seconds: number; limit: number; concurrency: number },
): Promise<void> {
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
          if (response.status !== 200) {
            failed += 1
            failure(answerFailure(response.status, answer))
          }
          messages.push({ role: 'assistant', content: answer.choices?.[0]?.message?.content ?? '' })
        } catch (error) {
          failed += 1
          failure(String(error))
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

  const simulator = end.memory.simulator
  process.stdout.write(
    [
      `cachelab serve soak: ${latencies.length.toLocaleString('en-US')} requests in ${elapsed.toFixed(1)} s, ` +
        `${concurrency} clients, ${failed} failed`,
      ...failureLines(),
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
}

/** Words the sessions' texts are drawn from (about one token each). */
const WORDS = (
  'cache prefix token session request answer model system review change build check test branch ' +
  'merge commit file line value field record table index memory budget entry expire order write read ' +
  'stream chunk parse input output report figure number count limit start end time clock virtual'
).split(' ')

/** A session's own text of about `tokens` tokens (a deterministic walk through WORDS, seeded by the session). */
function sessionText(session: number, part: number, tokens: number): string {
  let state = (session * 7_919 + part * 104_729 + 1) >>> 0
  const words: string[] = [`Session ${session} part ${part}:`]
  for (let index = 0; index < tokens; index += 1) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    words.push(`${WORDS[state % WORDS.length]}${(state >>> 8) % 100}`)
  }
  return words.join(' ')
}

/**
 * Many live sessions: each sends one conversation of about `--tokens` tokens, distinct from every other
 * session's beyond the shared system prompt. Reports the server's RSS as sessions accumulate, then after
 * the clock moves on two hours (everything expired) and one more request.
 */
export async function sessionsSoak(
  { child, url }: SoakServer,
  {
    sessions,
    tokens,
    targetMb,
    concurrency,
  }: { sessions: number; tokens: number; targetMb: number; concurrency: number },
): Promise<void> {
  const target = targetMb * 1024 * 1024
  if (!Number.isInteger(sessions) || sessions < 1 || !Number.isFinite(tokens) || tokens < 100) {
    process.stderr.write('soak: --sessions must be a positive integer and --tokens 100 or more\n')
    process.exit(2)
  }
  // About 2,000 tokens a message; a word of WORDS with its number is about two tokens.
  const messagesPerSession = Math.max(1, Math.round(tokens / 2_000))
  const wordsPerMessage = Math.round(tokens / messagesPerSession / 2)
  const conversation = (session: number) => [
    { role: 'system', content: system },
    ...Array.from({ length: messagesPerSession }, (_, part) => ({
      role: part % 2 === 0 ? 'user' : 'assistant',
      content: sessionText(session, part, wordsPerMessage),
    })),
    ...(messagesPerSession % 2 === 0 ? [{ role: 'user', content: `Session ${session}: go on.` }] : []),
  ]
  let next = 0
  let failed = 0
  let inputTokens = 0
  let peakRss = 0
  const began = performance.now()
  const sampler = setInterval(() => {
    health(url)
      .then((state) => {
        peakRss = Math.max(peakRss, state.memory.rssBytes)
      })
      .catch(() => undefined)
  }, 250)
  const milestones: string[] = []
  const send = async (session: number, messages: unknown[]) => {
    const response = await fetch(`${url}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer soak',
        'x-cachelab-session': `soak-${session}`,
      },
      body: JSON.stringify({ model: 'gpt-5.4', messages }),
    })
    const answer = (await response.json()) as { usage?: { prompt_tokens?: number } }
    if (response.status !== 200) {
      failed += 1
      failure(answerFailure(response.status, answer))
    }
    inputTokens += answer.usage?.prompt_tokens ?? 0
  }
  const client = async () => {
    for (;;) {
      const session = next
      next += 1
      if (session >= sessions) return
      await send(session, conversation(session)).catch((error: unknown) => {
        failed += 1
        failure(
          error instanceof Error && error.cause !== undefined
            ? `${error.message}: ${String(error.cause)}`
            : String(error),
        )
      })
      const done = session + 1
      if (done % Math.max(1, Math.floor(sessions / 5)) === 0) {
        const state = await health(url)
        peakRss = Math.max(peakRss, state.memory.rssBytes)
        milestones.push(`    ${done.toLocaleString('en-US')} sessions: ${memoryLine(state)}`)
      }
    }
  }
  const startRss = (await health(url)).memory.rssBytes
  await Promise.all(Array.from({ length: concurrency }, () => client()))
  const elapsed = (performance.now() - began) / 1000
  clearInterval(sampler)
  const loaded = await health(url)
  peakRss = Math.max(peakRss, loaded.memory.rssBytes)
  // Two hours on: every entry has expired. One more request lets a server that prunes only on requests prune.
  await fetch(`${url}/cachelab/clock`, { method: 'POST', body: JSON.stringify({ advance: 7_200 }) })
  const advanced = await health(url)
  await send(sessions, conversation(sessions))
  const after = await health(url)
  child.kill('SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
  const mean = inputTokens / sessions
  process.stdout.write(
    [
      `cachelab serve sessions soak: ${sessions.toLocaleString('en-US')} sessions of ${mean.toFixed(0)} input tokens ` +
        `in ${elapsed.toFixed(1)} s, ${concurrency} clients, ${failed} failed`,
      ...failureLines(),
      `  RSS ${mb(startRss)} at start, peak ${mb(peakRss)} (target ${mb(target)}: ${peakRss <= target ? 'met' : 'MISSED'})` +
        (loaded.memory.budgetBytes !== undefined ? `, budget ${mb(loaded.memory.budgetBytes)}` : ''),
      ...milestones,
      `    loaded: ${memoryLine(loaded)}`,
      `    clock +2 h: ${memoryLine(advanced)}`,
      `    then one request: ${memoryLine(after)}`,
      '',
    ].join('\n'),
  )
  process.exitCode = failed > 0 || peakRss > target ? 1 : 0
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`
}

/** RSS, heap and the estimated bytes of what the server accounts for. */
function memoryLine(state: HealthState): string {
  const memory = state.memory
  return (
    `RSS ${mb(memory.rssBytes)}, heap ${mb(memory.heapUsedBytes)}; tries ${mb(memory.simulator?.bytes ?? 0)} ` +
    `(pruned ${memory.simulator?.prunes ?? 0}×, ${(memory.simulator?.removed ?? 0).toLocaleString('en-US')} nodes), ` +
    `token memo ${mb(memory.tokenMemoBytes ?? 0)}, ${(memory.capture?.sessions ?? 0).toLocaleString('en-US')} sessions ` +
    `remembered (${mb(memory.capture?.bytes ?? 0)})`
  )
}
