// A user's own agent under test: its traffic captured by `serve --record` with no cachelab header,
// reported like a run, and gated by `check`. The client is the official Anthropic SDK, used the way an
// agent would: the history grows, the system prompt carries the cache marker.

import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { describe, expect, it } from 'vitest'
import { fillerText } from '../harness/filler.ts'
import { type AnthropicCacheRules, simulationModel, withCacheRules } from '../providers/catalog.ts'
import { startLoopback } from '../providers/mock/loopback.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { breakLines, breaksOf } from '../reports/breaks.ts'
import { CaptureWriter, openCapture } from '../reports/observed/capture/store.ts'
import { CaptureTracker } from '../reports/observed/capture/tracker.ts'
import { parseStepsCsv } from '../reports/parse.ts'
import { summarize } from '../reports/summary.ts'
import { summaryTable } from '../reports/table.ts'
import { reportCapture } from './report.ts'
import { runCli } from './testing.ts'

const SYSTEM = fillerText(2000, 'capture-system')

/**
 * Record an 8-turn conversation into a new capture directory; with `rewriteAt`, the system prompt changes at
 * that turn. `model` picks each turn's model; `system` replaces the system prompt; `markLatest` also puts a
 * cache marker on the latest question, so each request caches all it sent.
 */
async function capture(
  options: {
    rewriteAt?: number
    stream?: boolean
    upstream?: string
    model?: (turn: number) => string
    system?: string
    markLatest?: boolean
  } = {},
) {
  const base = options.system ?? SYSTEM
  const dir = mkdtempSync(join(tmpdir(), 'cachelab-capture-'))
  const errors: string[] = []
  const writer = CaptureWriter.open(
    dir,
    {
      id: 'capture-test',
      started: '2026-11-30T00:00:00.000Z',
      upstream: options.upstream === undefined ? 'sim' : 'live',
      bodies: false,
    },
    (error) => errors.push(error.message),
  )
  const linearizer = new CacheSimulators()
  const tracker = new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    sink: (exchange) => writer.write(exchange),
  })
  const server = await startLoopback(
    options.upstream === undefined
      ? { upstream: 'sim', port: 0, capture: tracker }
      : {
          upstream: 'live',
          port: 0,
          capture: tracker,
          liveBaseURLs: {
            anthropic: options.upstream,
            openai: options.upstream,
            deepseek: options.upstream,
            bedrock: options.upstream,
            gemini: options.upstream,
          },
        },
  )
  const client = new Anthropic({
    baseURL: server.baseURLs.anthropic,
    apiKey: 'test-key-never-recorded',
  })
  const reads: number[] = []
  const messages: Anthropic.MessageParam[] = []
  try {
    for (let turn = 1; turn <= 8; turn += 1) {
      const system =
        options.rewriteAt !== undefined && turn >= options.rewriteAt ? `Mode: review. ${base}` : base
      const text = `Question ${turn}: ${fillerText(30, `question-${turn}`)}`
      const latest: Anthropic.MessageParam = options.markLatest
        ? { role: 'user', content: [{ type: 'text', text, cache_control: { type: 'ephemeral' } }] }
        : { role: 'user', content: text }
      const request = {
        model: options.model?.(turn) ?? 'claude-sonnet-4-6',
        max_tokens: 256,
        system: [{ type: 'text' as const, text: system, cache_control: { type: 'ephemeral' as const } }],
        messages: [...messages, latest],
      }
      messages.push({ role: 'user', content: text })
      const reply =
        options.stream === true
          ? await client.messages.stream(request).finalMessage()
          : await client.messages.create(request)
      reads.push(reply.usage.cache_read_input_tokens ?? 0)
      messages.push({ role: 'assistant', content: reply.content })
    }
  } finally {
    await server.close()
  }
  return { dir, reads, errors }
}

/** One step per turn, turns 1 to 8. */
const EIGHT_TURNS = Array.from({ length: 8 }, (_, index) => `${index + 1}.1`)

describe('capture → report → check for a client cachelab did not write', () => {
  it('reports one session with a row per request, the rewrite at system[0], and the reads the client saw', async () => {
    const { dir, reads } = await capture({ rewriteAt: 6, stream: true })
    const { rows, identities } = reportCapture(dir)
    expect(identities).toEqual({ header: 0, agent: 0, 'conversation-key': 0, continuation: 0, new: 1 })
    expect(new Set(rows.map((row) => row.variant)).size).toBe(1)
    expect(rows.map((row) => `${row.turn}.${row.step}`)).toEqual(EIGHT_TURNS)
    expect(rows.map((row) => row.cacheReadTokens)).toEqual(reads)
    const broken = rows.filter((row) => row.breakCause !== undefined)
    expect(broken).toHaveLength(1)
    expect(broken[0]).toMatchObject({ turn: 6, breakNode: 'system[0]', breakCause: 'system-replace' })
    expect(broken[0]?.lostTokens).toBeGreaterThan(2000)
    // docs/serve.md shows this capture's summary and break lines, name and figures as they are.
    const readme = readFileSync(new URL('../docs/serve.md', import.meta.url), 'utf8')
    const session = summaryTable(summarize(rows)).split('\n')[4] ?? ''
    expect(readme).toContain(`${session}\n`)
    const [entry] = breaksOf(rows)
    if (entry === undefined) throw new Error('a break expected')
    expect(readme).toContain(`${breakLines(entry).join('\n')}\n`)
    // Buckets are disjoint and sum to the input on every row.
    for (const row of rows)
      expect(row.cacheReadTokens + row.cacheWriteTokens + row.uncachedTokens).toBe(row.inputTokens)
  })

  it('writes the run files into the capture, keeps only the words at its break and no key, and check gates it like a run', async () => {
    const baseline = await capture()
    const same = await capture()
    const rewritten = await capture({ rewriteAt: 6 })
    for (const { dir } of [baseline, same, rewritten]) expect((await runCli(['report', dir])).code).toBe(0)
    const session = readFileSync(
      join(rewritten.dir, 'sessions', `${openCapture(rewritten.dir).sessions[0]}.jsonl`),
      'utf8',
    )
    expect(session).not.toContain('Question 1')
    expect(session).not.toContain('test-key-never-recorded')
    expect(session).not.toContain(SYSTEM.slice(0, 40))
    // What changed at the rewrite is kept: the words the system prompt gained, nothing around them.
    expect(session).toContain('"change":{"node":"system[0]","kind":"inserted","after":"Mode: review. "}')
    expect(parseStepsCsv(readFileSync(join(rewritten.dir, 'steps.csv'), 'utf8'), 'steps.csv')).toHaveLength(8)

    const held = await runCli(['check', '--baseline', baseline.dir, '--out', same.dir])
    expect(held.code).toBe(0)
    const failed = await runCli(['check', '--baseline', baseline.dir, '--out', rewritten.dir])
    expect(failed.code).toBe(1)
    expect(failed.stdout).toMatch(
      /new break: capture · c-[0-9a-f]{8} · anthropic 6\.1: system-replace at system\[0\], [\d,]+ tokens lost/,
    )
  })

  it('refuses a --record directory it cannot write or that already holds a capture, before serving', async () => {
    const base = mkdtempSync(join(tmpdir(), 'cachelab-record-'))
    writeFileSync(join(base, 'file'), '')
    const unwritable = await runCli(['serve', '--port', '0', '--record', join(base, 'file', 'capture')])
    expect(unwritable.code).toBe(2)
    expect(unwritable.stderr).toMatch(/--record .* is not writable/)
    mkdirSync(join(base, 'old'))
    writeFileSync(join(base, 'old', 'capture.json'), '{}')
    const taken = await runCli(['serve', '--port', '0', '--record', join(base, 'old')])
    expect(taken.code).toBe(2)
    expect(taken.stderr).toMatch(/already holds a capture/)
  })
})

describe('a captured model switch', () => {
  it('costs what staying on the previous model would have read: the whole prefix it had cached', async () => {
    // Sonnet for turns 1–3, Haiku for 4–5, Sonnet again from 6; the prompt is above both models' minimums.
    const model = (turn: number) => (turn >= 4 && turn <= 5 ? 'claude-haiku-4-5' : 'claude-sonnet-4-6')
    const { dir } = await capture({ model, system: fillerText(5000, 'capture-switch'), markLatest: true })
    expect((await runCli(['report', dir])).code).toBe(0)
    const rows = parseStepsCsv(readFileSync(join(dir, 'steps.csv'), 'utf8'), 'steps.csv')
    expect(rows.map((row) => row.model)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map(model))
    const cached = (turn: number) =>
      (rows[turn - 1]?.cacheReadTokens ?? 0) + (rows[turn - 1]?.cacheWriteTokens ?? 0)
    const [toHaiku, onHaiku, back] = [rows[3], rows[4], rows[5]]
    // Haiku's cache is cold: staying on Sonnet would have read all that turn 3 cached there.
    expect(toHaiku).toMatchObject({ cacheReadTokens: 0, breakNode: 'model', breakCause: 'config-changed' })
    expect(toHaiku?.lostTokens).toBeGreaterThan(5000)
    expect(toHaiku?.lostTokens).toBe(cached(3))
    expect(onHaiku).toMatchObject({ breakCause: undefined, lostTokens: 0 })
    // Back on Sonnet, its cache of turn 3 is read; what Haiku had cached beyond it is the switch's cost.
    expect(back).toMatchObject({
      cacheReadTokens: cached(3),
      breakNode: 'model',
      breakCause: 'config-changed',
    })
    expect(back?.lostTokens).toBe(cached(5) - cached(3))
    expect(rows.slice(6).map((row) => row.breakCause)).toEqual([undefined, undefined])
  })
})

describe('a live capture', () => {
  it("puts the provider's usage beside the simulator's prediction, step by step", async () => {
    // The "provider" is a server whose Anthropic minimum is 4,096 tokens: it never caches this 2,000-token prompt.
    const provider = await startLoopback({
      upstream: 'sim',
      port: 0,
      simulator: {
        models: [
          withCacheRules<AnthropicCacheRules>(simulationModel('anthropic', 'claude-sonnet-4-6'), {
            minTokens: 4096,
          }),
        ],
      },
    })
    try {
      const { dir, reads } = await capture({ upstream: provider.baseURLs.anthropic })
      const { rows } = reportCapture(dir)
      expect(reads.every((read) => read === 0)).toBe(true)
      expect(rows.map((row) => row.cacheReadTokens)).toEqual(reads)
      const warm = rows.filter((row) => !row.cold)
      expect(warm.every((row) => (row.predictedCacheReadTokens ?? 0) > 2000)).toBe(true)
      // The requests extend each other: what the provider did not read is its gap from the rules, not a loss.
      expect(rows.map((row) => row.lostTokens)).toEqual(rows.map(() => 0))
      expect(rows[0]?.predictedCacheWriteTokens).toBeGreaterThan(2000)
      expect((await runCli(['report', dir])).code).toBe(0)
      const html = readFileSync(join(dir, 'report.html'), 'utf8')
      expect(html).toContain('predicted read')
    } finally {
      await provider.close()
    }
  })
})

describe('a capture on disk', () => {
  it('reads back exactly what was recorded, and reports a torn last line instead of reading it', async () => {
    const { dir } = await capture()
    const before = reportCapture(dir).rows
    const [session] = openCapture(dir).sessions
    appendFileSync(join(dir, 'sessions', `${session}.jsonl`), '{"seq": 9, "sess')
    const after = reportCapture(dir)
    expect(after.rows).toEqual(before)
    expect(after.torn).toEqual([expect.stringMatching(/\.jsonl:9$/)])
  })

  it('reports a write that fails once and keeps the next lines readable', async () => {
    const { dir } = await capture()
    const errors: string[] = []
    const target = mkdtempSync(join(tmpdir(), 'cachelab-write-'))
    const writer = CaptureWriter.open(
      target,
      { id: 'again', started: '2026-11-30T00:00:00.000Z', upstream: 'sim', bodies: false },
      (error) => errors.push(error.message),
    )
    const source = openCapture(dir)
    const [session] = source.sessions
    const exchanges = source.read(session as string)
    // The session file's place is taken by a directory: every append fails, the error is told once.
    mkdirSync(join(target, 'sessions', `${session}.jsonl`))
    for (const exchange of exchanges.slice(0, 3)) writer.write(exchange)
    expect(errors).toHaveLength(1)
  })
})

describe('a captured Responses conversation chained on previous_response_id', () => {
  it('is one session whose every turn extends the whole chain it was billed for', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-chain-'))
    const writer = CaptureWriter.open(
      dir,
      { id: 'chain', started: '2026-11-30T00:00:00.000Z', upstream: 'sim', bodies: false },
      (error) => {
        throw error
      },
    )
    const linearizer = new CacheSimulators()
    const tracker = new CaptureTracker({
      linearize: (api, body) => linearizer.linearize(api, body),
      sink: (exchange) => writer.write(exchange),
    })
    const server = await startLoopback({ upstream: 'sim', port: 0, capture: tracker })
    try {
      const client = new OpenAI({ apiKey: 'test-key', baseURL: server.baseURLs.openai, maxRetries: 0 })
      let previous: string | undefined
      for (let turn = 1; turn <= 3; turn += 1) {
        const response: OpenAI.Responses.Response = await client.responses.create({
          model: 'gpt-5.4',
          instructions: SYSTEM,
          input: [{ role: 'user', content: `Question ${turn}: ${fillerText(200, `chain-${turn}`)}` }],
          ...(previous !== undefined ? { previous_response_id: previous } : {}),
        })
        previous = response.id
      }
    } finally {
      await server.close()
    }
    const { rows, identities } = reportCapture(dir)
    expect(identities).toEqual({ header: 0, agent: 0, 'conversation-key': 0, continuation: 0, new: 1 })
    expect(rows.map((row) => `${row.turn}.${row.step}`)).toEqual(['1.1', '2.1', '3.1'])
    expect(rows.map((row) => row.breakCause)).toEqual([undefined, undefined, undefined])
    expect(rows[2]?.cacheReadTokens).toBeGreaterThan(rows[1]?.cacheReadTokens ?? 0)
  })
})

describe('a capture of an OpenAI stream that never asked for its usage', () => {
  it('reports its requests as answered with usage not reported, and check compares nothing it does not know', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-capture-'))
    const writer = CaptureWriter.open(
      dir,
      { id: 'no-usage', started: '2026-12-07T00:00:00.000Z', upstream: 'sim', bodies: false },
      (error) => {
        throw error
      },
    )
    const linearizer = new CacheSimulators()
    const tracker = new CaptureTracker({
      linearize: (api, body) => linearizer.linearize(api, body),
      sink: (exchange) => writer.write(exchange),
    })
    const server = await startLoopback({ upstream: 'sim', port: 0, capture: tracker })
    try {
      const client = new OpenAI({ baseURL: server.baseURLs.openai, apiKey: 'test-key', maxRetries: 0 })
      const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
        { role: 'system', content: fillerText(2000, 'no-usage') },
      ]
      for (let turn = 1; turn <= 3; turn += 1) {
        messages.push({ role: 'user', content: `Question ${turn}` })
        // No stream_options.include_usage: the stream ends in [DONE] with no usage chunk.
        const stream = await client.chat.completions.create({ model: 'gpt-4.1', messages, stream: true })
        let text = ''
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ''
        messages.push({ role: 'assistant', content: text })
      }
    } finally {
      await server.close()
    }
    const reported = await runCli(['report', dir])
    expect(reported.code).toBe(0)
    expect(reported.stdout).toContain('3 requests (3 with usage not reported), 0 failed attempts')
    expect(reported.stdout).toContain('usage not reported for 3 of 3 requests')
    const rows = parseStepsCsv(readFileSync(join(dir, 'steps.csv'), 'utf8'), 'steps.csv')
    expect(rows.map((row) => [row.ok, row.usageNotReported])).toEqual(rows.map(() => [true, true]))
    // The simulator's read of what it served is beside the unreported usage, never in its place.
    expect(rows[2]?.predictedCacheReadTokens).toBeGreaterThan(1000)
    expect(readFileSync(join(dir, 'summary.csv'), 'utf8')).toMatch(/,3,0,,,,,,/)
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain('usage not reported')
    const gated = await runCli(['check', '--baseline', dir, '--out', dir])
    expect(gated.code).toBe(0)
    const note = gated.stdout.split('\n').find((line) => line.includes('usage not reported for')) ?? ''
    expect(note).toMatch(
      /usage not reported for 3 of 3 requests in the baseline and 3 of 3 requests in the run: warm hit ratio, cost unknown, not compared$/,
    )
    // docs/gate.md shows this note as it is.
    expect(readFileSync(new URL('../docs/gate.md', import.meta.url), 'utf8')).toContain(`${note}\n`)
  })
})
