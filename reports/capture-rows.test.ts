import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { describe, expect, it } from 'vitest'
import { fillerText } from '../harness/filler.ts'
import { startLoopback } from '../providers/mock/loopback.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { contentHash } from '../providers/wire/digest.ts'
import type { CapturedExchange } from '../providers/wire/exchange.ts'
import { captureRows } from './capture-rows.ts'
import { CaptureTracker } from './observed/capture/tracker.ts'
import { summarize } from './summary.ts'

const SEGMENT_TOKENS = 1000

/** An Anthropic exchange of `segments` system blocks (each its own hash), answered with `read`. */
function exchange(
  seq: number,
  segments: string[],
  read: number,
  extra: Partial<CapturedExchange> = {},
): CapturedExchange {
  const total = segments.length * SEGMENT_TOKENS
  return {
    seq,
    session: 's',
    conversation: 's',
    kind: 'main',
    identity: 'continuation',
    time: '2026-11-30T00:00:00.000Z',
    at: seq,
    api: 'anthropic-messages',
    provider: 'anthropic',
    model: 'claude-sonnet-4-6',
    stream: false,
    status: 200,
    latencyMs: 10,
    turn: seq,
    step: 1,
    attempt: 0,
    usage: { input: total, uncached: total - read, cacheRead: read, cacheWrite: 0, output: 5, raw: {} },
    digest: {
      segments: segments.map(
        (text, index) => [`system[${index}]`, contentHash(text), SEGMENT_TOKENS] as const,
      ),
      trailing: 0,
      total,
      items: [],
      config: { model: 'claude-sonnet-4-6' },
    },
    ...extra,
  }
}

/** A failed attempt: no usage reached the client. */
function withoutUsage(failed: CapturedExchange): CapturedExchange {
  const { usage: _usage, ...rest } = failed
  return rest
}

const counts = (read: number) => ({
  input: 3000,
  read,
  write: 0,
  write5m: 0,
  write1h: 0,
  uncached: 3000 - read,
  output: 5,
})

describe('rows of captured traffic', () => {
  it('take the ideal from the recorded counterfactual and the break from the wire', () => {
    const rows = captureRows(
      [
        exchange(1, ['a', 'b'], 0),
        exchange(2, ['A', 'b', 'c'], 0, {
          simulation: { counts: counts(0), counterfactual: { ideal: 2000, warm: 2000 }, predicted: false },
        }),
      ],
      { runId: 'r', scenario: 'capture' },
    )
    expect(rows[0]).toMatchObject({ cold: true, breakCause: undefined, lostTokens: 0 })
    expect(rows[1]).toMatchObject({
      cold: false,
      idealCacheReadTokens: 2000,
      lostTokens: 2000,
      breakNode: 'system[0]',
      breakCause: 'system-replace',
      predictedCacheReadTokens: undefined,
    })
  })

  it('carry what changed at the break as the tracker kept it, on the broken row alone', () => {
    const change = { node: 'system[0]', kind: 'replaced' as const, before: 'a', after: 'A' }
    const rows = captureRows(
      [
        exchange(1, ['a', 'b'], 0),
        exchange(2, ['A', 'b', 'c'], 0, { change }),
        // A capture made with --record-no-text kept none: the break is named all the same.
        exchange(3, ['B', 'b', 'c'], 0),
      ],
      { runId: 'r', scenario: 'capture' },
    )
    expect(rows.map((row) => row.breakChange)).toEqual([undefined, change, undefined])
    expect(rows[2]).toMatchObject({ breakNode: 'system[0]', breakCause: 'system-replace' })
  })

  it('leave a failed attempt out of the comparison and show a live prediction beside the usage', () => {
    const rows = captureRows(
      [
        exchange(1, ['a'], 0),
        withoutUsage(exchange(2, ['a', 'b'], 0, { status: 529 })),
        exchange(3, ['a', 'b'], 1000, {
          attempt: 1,
          simulation: { counts: counts(1000), counterfactual: { ideal: 1000, warm: 1000 }, predicted: true },
        }),
      ],
      { runId: 'r', scenario: 'capture' },
    )
    expect(rows.map((row) => row.ok)).toEqual([true, false, true])
    expect(rows[1]?.inputTokens).toBe(0)
    expect(rows[2]).toMatchObject({ attempt: 1, breakCause: undefined, predictedCacheReadTokens: 1000 })
  })

  it('count a live provider that reads less than predicted as a gap beside the prediction, not a client loss', () => {
    const [, extended] = captureRows(
      [
        exchange(1, ['a'], 0),
        exchange(2, ['a', 'b'], 0, {
          simulation: { counts: counts(1000), counterfactual: { ideal: 1000, warm: 1000 }, predicted: true },
        }),
      ],
      { runId: 'r', scenario: 'capture' },
    )
    expect(extended).toMatchObject({
      cacheReadTokens: 0,
      predictedCacheReadTokens: 1000,
      idealCacheReadTokens: 0,
      lostTokens: 0,
      breakCause: undefined,
    })
  })
})

describe('rows of an append-only Responses conversation whose reasoning the provider drops', () => {
  it('name the drop on the provider side and charge the client nothing', async () => {
    const exchanges: CapturedExchange[] = []
    const linearizer = new CacheSimulators()
    const tracker = new CaptureTracker({
      linearize: (api, body) => linearizer.linearize(api, body),
      sink: (captured) => exchanges.push(captured),
    })
    const server = await startLoopback({ upstream: 'sim', port: 0, capture: tracker })
    try {
      const client = new OpenAI({ baseURL: server.baseURLs.openai, apiKey: 'test-key' })
      const tools = [
        {
          type: 'function' as const,
          name: 'read',
          description: 'Read a file',
          parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          strict: false,
        },
      ]
      // pi and opencode resend every item they got back, reasoning included: the input only grows.
      const input: unknown[] = []
      for (let turn = 1; turn <= 2; turn += 1) {
        input.push({ role: 'user', content: `Turn ${turn}: ${fillerText(1500, `turn-${turn}`)}` })
        for (let step = 1; step <= 2; step += 1) {
          const response = await client.responses.create({
            model: 'gpt-5.4',
            instructions: fillerText(1200, 'instructions'),
            input: input as never,
            tools,
            reasoning: { effort: 'medium' },
            include: ['reasoning.encrypted_content'],
            store: false,
          })
          const calls: unknown[] = []
          for (const item of response.output) {
            input.push(item)
            if (item.type === 'function_call') calls.push(item)
          }
          for (const call of calls as Array<{ call_id: string }>)
            input.push({
              type: 'function_call_output',
              call_id: call.call_id,
              output: fillerText(800, 'file'),
            })
          if (calls.length === 0) break
        }
      }
    } finally {
      await server.close()
    }
    const rows = captureRows(exchanges, { runId: 'r', scenario: 'capture' })
    const secondTurn = rows.find((row) => row.turn === 2)
    expect(rows.every((row) => row.lostTokens === 0)).toBe(true)
    expect(secondTurn?.breakCause).toBe('reasoning-dropped')
    expect(secondTurn?.providerCause).toBe('reasoning-dropped')
    expect(secondTurn?.providerLostTokens).toBeGreaterThan(0)
    expect(secondTurn?.breakNode).toMatch(/^input\[\d+\]/)
  })
})

describe('rows of requests answered without usage', () => {
  it('count as requests whose numbers are not reported, with the simulator’s count beside them, not as failures', () => {
    const rows = captureRows(
      [
        withoutUsage(exchange(1, ['a'], 0, { simulation: { counts: counts(0), predicted: false } })),
        withoutUsage(
          exchange(2, ['a', 'b'], 0, {
            simulation: {
              counts: counts(1000),
              counterfactual: { ideal: 1000, warm: 1000 },
              predicted: false,
            },
          }),
        ),
        exchange(3, ['a', 'b', 'c'], 2000),
      ],
      { runId: 'r', scenario: 'capture' },
    )
    expect(rows.map((row) => [row.ok, row.cold, row.usageNotReported])).toEqual([
      [true, true, true],
      [true, false, true],
      [true, false, undefined],
    ])
    expect(rows[1]).toMatchObject({
      hitRatio: undefined,
      breakCause: undefined,
      predictedCacheReadTokens: 1000,
      predictedCacheWriteTokens: 0,
    })
    // The request after them extends the one right before it, answered without usage: no break.
    expect(rows[2]).toMatchObject({ breakCause: undefined, cacheReadTokens: 2000 })
  })

  it('take usage that is every count 0 as none, and still fail an attempt that failed after its 200', () => {
    const zeroed = exchange(1, ['a'], 0, {
      usage: { input: 0, uncached: 0, cacheRead: 0, output: 0, raw: { input_tokens: 0, output_tokens: 0 } },
    })
    const cut = withoutUsage(exchange(2, ['a'], 0, { error: 'stream cut' }))
    const rows = captureRows([zeroed, cut], { runId: 'r', scenario: 'capture' })
    expect(rows.map((row) => [row.ok, row.usageNotReported])).toEqual([
      [true, true],
      [false, undefined],
    ])
  })

  it('count an OpenAI stream without stream_options.include_usage at serve as answered, usage not reported', async () => {
    const exchanges: CapturedExchange[] = []
    const linearizer = new CacheSimulators()
    const tracker = new CaptureTracker({
      linearize: (api, body) => linearizer.linearize(api, body),
      sink: (captured) => exchanges.push(captured),
    })
    const server = await startLoopback({ upstream: 'sim', port: 0, capture: tracker })
    const seen: unknown[] = []
    try {
      const client = new OpenAI({ baseURL: server.baseURLs.openai, apiKey: 'test-key', maxRetries: 0 })
      const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
        { role: 'system', content: fillerText(1600, 'no-usage-system') },
      ]
      for (let turn = 1; turn <= 3; turn += 1) {
        messages.push({ role: 'user', content: `Question ${turn}` })
        const stream = await client.chat.completions.create({ model: 'gpt-4.1', messages, stream: true })
        let text = ''
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta?.content ?? ''
          if (chunk.usage !== undefined && chunk.usage !== null) seen.push(chunk.usage)
        }
        messages.push({ role: 'assistant', content: text })
      }
    } finally {
      await server.close()
    }
    expect(seen).toEqual([])
    expect(exchanges.map((captured) => [captured.status, captured.usage, captured.error])).toEqual([
      [200, undefined, undefined],
      [200, undefined, undefined],
      [200, undefined, undefined],
    ])
    // The simulator served each one and the next is measured against it: the provider cached it.
    expect(exchanges[1]?.simulation?.counterfactual).toBeDefined()
    const rows = captureRows(exchanges, { runId: 'r', scenario: 'capture' })
    expect(rows.map((row) => [row.ok, row.usageNotReported, row.turn])).toEqual([
      [true, true, 1],
      [true, true, 2],
      [true, true, 3],
    ])
    expect(rows[2]?.predictedCacheReadTokens).toBeGreaterThan(1000)
  })
})

describe('rows of an Anthropic client that marks nothing for caching', () => {
  it('cost what they cost, with what one cache mark would have cost beside them, and a note in the summary', async () => {
    const exchanges: CapturedExchange[] = []
    const linearizer = new CacheSimulators()
    const tracker = new CaptureTracker({
      linearize: (api, body) => linearizer.linearize(api, body),
      sink: (captured) => exchanges.push(captured),
      shadow: new CacheSimulators(),
    })
    const server = await startLoopback({ upstream: 'sim', port: 0, capture: tracker })
    try {
      const client = new Anthropic({ baseURL: server.baseURLs.anthropic, apiKey: 'test-key' })
      const messages: Anthropic.MessageParam[] = []
      for (let turn = 1; turn <= 3; turn += 1) {
        messages.push({ role: 'user', content: `Turn ${turn}: ${fillerText(400, `unmarked-${turn}`)}` })
        const answer = await client.messages.create({
          model: 'claude-sonnet-4-6',
          max_tokens: 64,
          system: fillerText(3000, 'unmarked-system'),
          messages,
        })
        messages.push({ role: 'assistant', content: answer.content })
      }
    } finally {
      await server.close()
    }
    const rows = captureRows(exchanges, { runId: 'r', scenario: 'capture' })
    // The provider cached nothing: every token billed at the base price.
    expect(rows.every((row) => row.cacheReadTokens === 0 && row.cacheWriteTokens === 0)).toBe(true)
    // Marked, the first request writes the prefix (dearer) and the next two read it (far cheaper).
    expect(rows[0]?.markedCostUsd).toBeGreaterThan(rows[0]?.costUsd ?? 0)
    for (const row of rows.slice(1)) expect(row.markedCostUsd).toBeLessThan(0.5 * row.costUsd)
    const [summary] = summarize(rows)
    expect(summary?.nothingMarked?.requests).toBe(3)
    expect(summary?.nothingMarked?.markedCostUsd).toBeLessThan(summary?.costUsd ?? 0)
  })

  it('are not noted when the client marks its prompt', async () => {
    const exchanges: CapturedExchange[] = []
    const linearizer = new CacheSimulators()
    const tracker = new CaptureTracker({
      linearize: (api, body) => linearizer.linearize(api, body),
      sink: (captured) => exchanges.push(captured),
      shadow: new CacheSimulators(),
    })
    const server = await startLoopback({ upstream: 'sim', port: 0, capture: tracker })
    try {
      const client = new Anthropic({ baseURL: server.baseURLs.anthropic, apiKey: 'test-key' })
      await client.messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 64,
        cache_control: { type: 'ephemeral' },
        system: fillerText(3000, 'marked-system'),
        messages: [{ role: 'user', content: 'hello' }],
      } as Anthropic.MessageCreateParamsNonStreaming)
    } finally {
      await server.close()
    }
    const rows = captureRows(exchanges, { runId: 'r', scenario: 'capture' })
    expect(rows[0]?.markedCostUsd).toBeUndefined()
    expect(summarize(rows)[0]?.nothingMarked).toBeUndefined()
  })
})
