// Faults and virtual time over HTTP, as a user's client meets them: the official SDKs against the loopback
// server with a capture, failing where a fault schedule (`serve --faults`) or a request's
// `x-cachelab-fault` header says, and an idle gap made with `POST /cachelab/clock` instead of a wait.

import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { fillerText } from '../harness/filler.ts'
import { parseFaultSchedule } from '../providers/mock/fault-spec.ts'
import type { FaultRule } from '../providers/mock/faults.ts'
import { type LoopbackServer, startLoopback } from '../providers/mock/loopback.ts'
import { DEFAULT_MEMORY_BUDGET_MB, planMemory } from '../providers/mock/memory-budget.ts'
import { CacheSimulators, type SimulatorOptions } from '../providers/sim/index.ts'
import type { CapturedExchange } from '../providers/wire/exchange.ts'
import { CaptureWriter } from '../reports/observed/capture/store.ts'
import { CaptureTracker } from '../reports/observed/capture/tracker.ts'
import type { StepRow } from '../reports/types.ts'
import { reportCapture } from './report.ts'
import { serveCommand } from './serve-command.ts'
import { runCli } from './testing.ts'

const SYSTEM = fillerText(2000, 'serve-faults-system')
const servers: LoopbackServer[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const server of servers.splice(0)) await server.close()
})

/**
 * A simulated server that records into a capture directory, with a fault schedule when given, and the
 * simulators' options (`memoryBytes`: serve's budget for the tries).
 */
async function serve(faults?: readonly FaultRule[], simulator?: SimulatorOptions) {
  const dir = mkdtempSync(join(tmpdir(), 'cachelab-serve-faults-'))
  const writer = CaptureWriter.open(
    dir,
    { id: 'capture-faults', started: '2026-11-30T00:00:00.000Z', upstream: 'sim', bodies: false },
    (error) => {
      throw error
    },
  )
  const exchanges: CapturedExchange[] = []
  const linearizer = new CacheSimulators()
  const capture = new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    sink: (exchange) => {
      exchanges.push(exchange)
      writer.write(exchange)
    },
  })
  const server = await startLoopback({
    upstream: 'sim',
    port: 0,
    capture,
    ...(faults !== undefined ? { faults } : {}),
    ...(simulator !== undefined ? { simulator } : {}),
  })
  servers.push(server)
  return { server, dir, exchanges }
}

/** What a capture shows of each attempt. */
const attempts = (exchanges: readonly CapturedExchange[]) =>
  exchanges.map(({ status, turn, step, attempt, error, usage }) => ({
    status,
    at: `${turn}.${step}`,
    attempt,
    ...(error !== undefined ? { error } : {}),
    usage: usage !== undefined,
  }))

/** A client fetch that notes each response's status and retry headers, then hands the response on. */
function watchedFetch(seen: Array<[number, string | null, string | null]>): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init)
    seen.push([response.status, response.headers.get('retry-after-ms'), response.headers.get('retry-after')])
    return response
  }
}

const question = (turn: number) => `Question ${turn}: ${fillerText(40, `question-${turn}`)}`

describe('a fault schedule over HTTP', () => {
  it('has the official openai SDK retry a scheduled 429 after its retry-after-ms, and records both attempts', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cachelab-faults-')), 'faults.jsonl')
    writeFileSync(file, '{"session": "*", "sessionRequest": 2, "fault": "429;retry-after-ms=10"}\n')
    const { server, exchanges } = await serve(
      parseFaultSchedule(
        // The file as `serve --faults` reads it.
        (await import('node:fs')).readFileSync(file, 'utf8'),
        file,
      ),
    )
    const seen: Array<[number, string | null, string | null]> = []
    const client = new OpenAI({
      apiKey: 'test-key',
      baseURL: server.baseURLs.openai,
      fetch: watchedFetch(seen),
    })
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'system', content: SYSTEM }]
    for (const turn of [1, 2]) {
      messages.push({ role: 'user', content: question(turn) })
      const reply = await client.chat.completions.create({ model: 'gpt-5.4', messages })
      messages.push({ role: 'assistant', content: reply.choices[0]?.message.content ?? '' })
    }
    expect(seen).toEqual([
      [200, null, null],
      [429, '10', null],
      [200, null, null],
    ])
    expect(attempts(exchanges)).toEqual([
      { status: 200, at: '1.1', attempt: 0, usage: true },
      { status: 429, at: '2.1', attempt: 0, error: 'HTTP 429 requests', usage: false },
      { status: 200, at: '2.1', attempt: 1, usage: true },
    ])
    expect(new Set(exchanges.map((exchange) => exchange.session)).size).toBe(1)
  })

  it('has the official Anthropic SDK retry a 529 overloaded it was scheduled for that provider', async () => {
    const { server, exchanges } = await serve([{ provider: 'anthropic', fault: { kind: 'overloaded' } }])
    const openai = new OpenAI({ apiKey: 'test-key', baseURL: server.baseURLs.openai, maxRetries: 0 })
    await openai.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] })
    const anthropic = new Anthropic({ apiKey: 'test-key', baseURL: server.baseURLs.anthropic })
    await anthropic.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [{ role: 'user', content: question(1) }],
    })
    expect(exchanges.map((exchange) => [exchange.provider, exchange.status, exchange.attempt])).toEqual([
      ['openai-chat', 200, 0],
      ['anthropic', 529, 0],
      ['anthropic', 200, 1],
    ])
    expect(exchanges[1]?.error).toBe('HTTP 529 overloaded_error')
  })

  it('cuts a stream: the SDK raises it, the capture records the failed attempt, and a retry is attempt 1', async () => {
    const { server, exchanges } = await serve([{ fault: { kind: 'stream-cut', afterFrames: 2 } }])
    const client = new OpenAI({ apiKey: 'test-key', baseURL: server.baseURLs.openai })
    const request = {
      model: 'gpt-5.4',
      messages: [
        { role: 'system' as const, content: SYSTEM },
        { role: 'user' as const, content: question(1) },
      ],
      stream: true as const,
      stream_options: { include_usage: true },
    }
    const read = async () => {
      let text = ''
      for await (const chunk of await client.chat.completions.create(request))
        text += chunk.choices[0]?.delta.content ?? ''
      return text
    }
    await expect(read()).rejects.toThrow()
    expect(await read()).toBe('OK.')
    expect(attempts(exchanges)).toEqual([
      { status: 200, at: '1.1', attempt: 0, error: 'stream cut after 2 frames', usage: false },
      { status: 200, at: '1.1', attempt: 1, usage: true },
    ])
    // The cut attempt's prompt was processed: the retry reads it from cache.
    expect(exchanges[1]?.usage?.cacheRead).toBeGreaterThan(1900)
  })

  it('answers a request that is not streamed with a 500 for a cut, which the SDK retries', async () => {
    const { server, exchanges } = await serve([{ fault: { kind: 'stream-cut', afterFrames: 0 } }])
    const client = new OpenAI({ apiKey: 'test-key', baseURL: server.baseURLs.openai })
    const reply = await client.chat.completions.create({
      model: 'gpt-5.4',
      messages: [{ role: 'user', content: question(1) }],
    })
    expect(reply.choices[0]?.message.content).toBe('OK.')
    expect(attempts(exchanges)).toEqual([
      { status: 500, at: '1.1', attempt: 0, error: 'HTTP 500 server_error', usage: false },
      { status: 200, at: '1.1', attempt: 1, usage: true },
    ])
  })

  it('sends an error event inside a stream: the Anthropic SDK raises it as an API error, and the capture records it', async () => {
    const { server, exchanges } = await serve([{ fault: { kind: 'stream-error' } }])
    const client = new Anthropic({ apiKey: 'test-key', baseURL: server.baseURLs.anthropic })
    const request = {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      system: [{ type: 'text' as const, text: SYSTEM, cache_control: { type: 'ephemeral' as const } }],
      messages: [{ role: 'user' as const, content: question(1) }],
    }
    const failure = await client.messages
      .stream(request)
      .finalMessage()
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    expect(failure).toBeInstanceOf(Anthropic.APIError)
    expect((failure as InstanceType<typeof Anthropic.APIError>).message).toContain('overloaded_error')
    const reply = await client.messages.stream(request).finalMessage()
    expect(reply.usage.cache_read_input_tokens).toBeGreaterThan(1900)
    expect(attempts(exchanges)).toEqual([
      { status: 200, at: '1.1', attempt: 0, error: 'error event in the stream', usage: false },
      { status: 200, at: '1.1', attempt: 1, usage: true },
    ])
  })
})

describe('the x-cachelab-fault header', () => {
  it('fails one request once: the SDK retries it with the same header and the retry is served', async () => {
    const { server, exchanges } = await serve()
    const seen: Array<[number, string | null, string | null]> = []
    const client = new Anthropic({
      apiKey: 'test-key',
      baseURL: server.baseURLs.anthropic,
      fetch: watchedFetch(seen),
    })
    const reply = await client.messages.create(
      { model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: question(1) }] },
      { headers: { 'x-cachelab-fault': '429;retry-after-ms=10;retry-after=1' } },
    )
    expect(reply.content).toEqual([{ type: 'text', text: 'OK.' }])
    expect(seen).toEqual([
      [429, '10', '1'],
      [200, null, null],
    ])
    expect(attempts(exchanges).map(({ status, attempt }) => [status, attempt])).toEqual([
      [429, 0],
      [200, 1],
    ])
  })

  it('with times, fails that many attempts: past the SDK retries the error reaches the caller', async () => {
    const { server, exchanges } = await serve()
    const client = new OpenAI({ apiKey: 'test-key', baseURL: server.baseURLs.openai, maxRetries: 2 })
    const call = client.chat.completions.create(
      { model: 'gpt-5.4', messages: [{ role: 'user', content: question(1) }] },
      { headers: { 'x-cachelab-fault': '429;retry-after-ms=1;times=3' } },
    )
    await expect(call).rejects.toBeInstanceOf(OpenAI.RateLimitError)
    expect(exchanges.map((exchange) => [exchange.status, exchange.attempt])).toEqual([
      [429, 0],
      [429, 1],
      [429, 2],
    ])
  })

  it('is refused with a 400 saying what is wrong when malformed', async () => {
    const { server } = await serve()
    const client = new OpenAI({ apiKey: 'test-key', baseURL: server.baseURLs.openai, maxRetries: 0 })
    const call = client.chat.completions.create(
      { model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-cachelab-fault': '429;retry-after-ms=soon' } },
    )
    await expect(call).rejects.toThrow(
      /400 Invalid x-cachelab-fault header: retry-after-ms must be a whole number of milliseconds, not "soon"/,
    )
  })
})

describe('virtual time over HTTP', () => {
  /** Two Anthropic requests of one conversation, the clock advanced by `idle` seconds between them. */
  async function twoRequests(idle: number) {
    const { server, dir } = await serve()
    const client = new Anthropic({ apiKey: 'test-key', baseURL: server.baseURLs.anthropic, maxRetries: 0 })
    const messages: Anthropic.MessageParam[] = []
    const clock: unknown[] = []
    for (const turn of [1, 2]) {
      if (turn === 2 && idle > 0) {
        const advanced = await fetch(`${server.url}/cachelab/clock`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ advance: idle }),
        })
        clock.push(await advanced.json())
      }
      messages.push({ role: 'user', content: question(turn) })
      const reply = await client.messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 64,
        system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
        messages: [...messages],
      })
      messages.push({ role: 'assistant', content: reply.content })
    }
    await server.close()
    return { rows: reportCapture(dir).rows, clock }
  }

  it('advancing 6 minutes between two requests expires the 5-minute cache: the report says ttl-expired', async () => {
    const begin = performance.now()
    const { rows, clock } = await twoRequests(360)
    expect(performance.now() - begin).toBeLessThan(10_000)
    expect(clock).toEqual([{ now: expect.any(Number), advanced: 360 }])
    expect((clock[0] as { now: number }).now).toBeGreaterThanOrEqual(360)
    expect(rows.map((row) => `${row.turn}.${row.step}`)).toEqual(['1.1', '2.1'])
    expect(rows[1]).toMatchObject({ cacheReadTokens: 0, providerCause: 'ttl-expired' })
    expect(rows[1]?.providerLostTokens).toBeGreaterThan(1900)
  })

  it('without the advance, the second request reads the cache and nothing expires', async () => {
    const { rows } = await twoRequests(0)
    expect(rows[1]?.providerCause).toBeUndefined()
    expect(rows[1]?.cacheReadTokens).toBeGreaterThan(1900)
  })

  it('reads the clock, refuses to move it back, and has no clock in front of the real providers', async () => {
    const { server } = await serve()
    const post = (body: string) =>
      fetch(`${server.url}/cachelab/clock`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      })
    const before = (await (await fetch(`${server.url}/cachelab/clock`)).json()) as {
      now: number
      advanced: number
    }
    expect(before.advanced).toBe(0)
    const back = await post('{"advance": -60}')
    expect(back.status).toBe(400)
    expect(await back.json()).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          'POST /cachelab/clock takes {"advance": seconds}, a number of zero or more (the clock never runs backwards), not -60',
      },
    })
    expect((await post('{"advance": 60, "to": 5}')).status).toBe(400)
    expect((await post('soon')).status).toBe(400)
    expect((await fetch(`${server.url}/cachelab/clock`, { method: 'DELETE' })).status).toBe(405)
    expect((await fetch(`${server.url}/cachelab/faults`)).status).toBe(404)
    const after = (await (await fetch(`${server.url}/cachelab/clock`)).json()) as { now: number }
    expect(after.now).toBeGreaterThanOrEqual(before.now)
    expect(after.now).toBeLessThan(before.now + 60)

    const live = await startLoopback({ upstream: 'live', port: 0, liveBaseURLs: server.baseURLs })
    servers.push(live)
    const none = await fetch(`${live.url}/cachelab/clock`)
    expect(none.status).toBe(404)
    expect(await none.text()).toContain('there is no virtual clock with --upstream live')
  })
})

describe("an idle gap under serve's memory budget, however its cache entries went", () => {
  /**
   * Session `name`'s Anthropic conversation: each call sends one more turn (at virtual time `at` when
   * given, the `x-cachelab-at` header). Each session has a system prompt of its own.
   */
  function conversation(server: LoopbackServer, name: string) {
    const client = new Anthropic({ apiKey: 'test-key', baseURL: server.baseURLs.anthropic, maxRetries: 0 })
    const messages: Anthropic.MessageParam[] = []
    return async (at?: number) => {
      messages.push({ role: 'user', content: question(messages.length / 2 + 1) })
      const reply = await client.messages.create(
        {
          model: 'claude-sonnet-4-6',
          max_tokens: 64,
          system: [{ type: 'text', text: `${name}: ${SYSTEM}`, cache_control: { type: 'ephemeral' } }],
          messages: [...messages],
        },
        {
          headers: {
            'x-cachelab-session': name,
            ...(at !== undefined ? { 'x-cachelab-at': String(at) } : {}),
          },
        },
      )
      messages.push({ role: 'assistant', content: reply.content })
    }
  }

  /** A budget (estimated bytes) that one session's entries stay under and two pass: about 12 kB each. */
  const ONE_SESSION_AND_A_HALF = 18_000

  /** Session a's rows, and what the simulators' pruning did. */
  async function report(server: LoopbackServer, dir: string) {
    const stats = server.context?.simulators.pruneStats
    await server.close()
    return { rows: reportCapture(dir).rows.filter((row) => row.variant === 'a'), stats }
  }

  /** What the row after the gap must say: nothing read, the tokens the previous request left cached lost to `cause`. */
  const lostToTheGap = (rows: StepRow[], cause: string) => {
    expect(rows.map((row) => `${row.turn}.${row.step}`)).toEqual(['1.1', '2.1', '3.1'])
    const [, left, after] = rows
    const carried = (left?.cacheReadTokens ?? 0) + (left?.cacheWriteTokens ?? 0)
    expect(carried).toBeGreaterThan(1900)
    expect(after).toMatchObject({
      cacheReadTokens: 0,
      idealCacheReadTokens: 0,
      lostTokens: 0,
      breakCause: cause,
      providerCause: cause,
      providerLostTokens: carried,
    })
    expect(after?.providerLostUsd).toBeGreaterThan(0)
  }

  it('POST /cachelab/clock under the default budget removes the expired entries, and the report still says ttl-expired with the tokens it cost', async () => {
    const memory = planMemory(DEFAULT_MEMORY_BUDGET_MB)
    const { server, dir } = await serve(undefined, { memoryBytes: memory.simulatorBytes })
    const send = conversation(server, 'a')
    await send()
    await send()
    await fetch(`${server.url}/cachelab/clock`, { method: 'POST', body: JSON.stringify({ advance: 400 }) })
    expect(server.context?.simulators.pruneStats.bytes).toBe(0)
    await send()
    const { rows, stats } = await report(server, dir)
    expect(stats?.removed).toBeGreaterThan(0)
    lostToTheGap(rows, 'ttl-expired')
  })

  it("x-cachelab-at, another session's request after the gap pruning the tries under the budget: the same row", async () => {
    const { server, dir } = await serve(undefined, { memoryBytes: ONE_SESSION_AND_A_HALF })
    const send = conversation(server, 'a')
    await send(0)
    await send(10)
    await conversation(server, 'b')(500)
    await send(510)
    const { rows, stats } = await report(server, dir)
    expect(stats?.removed).toBeGreaterThan(0)
    expect(stats?.evicted).toBe(0)
    lostToTheGap(rows, 'ttl-expired')
  })

  it('a live entry evicted for memory is named evicted, with the tokens the provider would have read', async () => {
    const { server, dir } = await serve(undefined, { memoryBytes: ONE_SESSION_AND_A_HALF })
    const send = conversation(server, 'a')
    await send(0)
    await send(10)
    await conversation(server, 'b')(20)
    await send(30)
    const { rows, stats } = await report(server, dir)
    expect(stats?.evicted).toBeGreaterThan(0)
    lostToTheGap(rows, 'evicted')
  })
})

describe('cachelab serve --faults', () => {
  const directory = () => mkdtempSync(join(tmpdir(), 'cachelab-serve-faults-cli-'))

  it.each([
    [
      'a missing file',
      (dir: string) => join(dir, 'none.json'),
      /^cachelab: cannot read --faults .*none\.json: no such file \(from .+\): check the path, or write the schedule \(docs\/serve\.md, Faults and virtual time\)\n$/,
    ],
    [
      'a rule with a typo',
      (dir: string) => {
        writeFileSync(join(dir, 'f.json'), '[{"fault": "429", "sesion": "a"}]')
        return join(dir, 'f.json')
      },
      /^cachelab: --faults .*f\.json: rule 1: unknown field "sesion" \(a rule has session, request, sessionRequest, provider, fault, times\)\n$/,
    ],
    [
      'an unknown fault on line 2',
      (dir: string) => {
        writeFileSync(join(dir, 'f.jsonl'), '{"fault": "429"}\n{"fault": "418"}\n')
        return join(dir, 'f.jsonl')
      },
      /^cachelab: --faults .*f\.jsonl:2: fault: unknown fault "418" \(expected 429/,
    ],
  ])('exits 2 before serving for %s, with a one-line reason', async (_, file, message) => {
    const { code, stdout, stderr } = await runCli(['serve', '--port', '0', '--faults', file(directory())])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toMatch(message)
  })

  it('exits 2 for a schedule in front of the real providers', async () => {
    const file = join(directory(), 'f.json')
    writeFileSync(file, '[{"fault": "429"}]')
    const { code, stderr } = await runCli(['serve', '--port', '0', '--upstream', 'live', '--faults', file])
    expect(code).toBe(2)
    expect(stderr).toBe('cachelab: --faults needs --upstream sim: the real providers fail on their own\n')
  })

  it('serves with the schedule, and says so and where the clock is', async () => {
    const file = join(directory(), 'f.json')
    writeFileSync(file, '{"faults": [{"request": 1, "fault": "529"}, {"request": 3, "fault": "500"}]}')
    let stdout = ''
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      stdout += String(chunk)
      return true
    })
    const stop = new AbortController()
    const exit = serveCommand(['--port', '0', '--faults', file], stop.signal)
    await vi.waitFor(() => expect(stdout).toContain('listening on'))
    const url = /listening on (\S+)/.exec(stdout)?.[1]
    expect(stdout).toContain(`fault schedule: 2 rules from ${file}`)
    expect(stdout).toContain(`virtual clock: GET ${url}/cachelab/clock`)
    const statuses: number[] = []
    for (let index = 0; index < 4; index += 1) {
      const response = await fetch(`${url}/anthropic/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'claude-sonnet-4-6',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      })
      statuses.push(response.status)
    }
    stop.abort()
    expect(await exit).toBe(0)
    expect(statuses).toEqual([529, 200, 500, 200])
  })
})
