import { readFileSync } from 'node:fs'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../harness/filler.ts'
import type { Usage } from '../harness/types.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import type { CapturedExchange } from '../providers/wire/exchange.ts'
import { breaksOf } from './breaks.ts'
import { captureRows } from './capture-rows.ts'
import { checkBaseline, DEFAULT_BREAK_THRESHOLD_TOKENS } from './gate.ts'
import { findingLine } from './gate-text.ts'
import { gatewayRoutes, pairSides } from './gateway-rows.ts'
import { CaptureTracker } from './observed/capture/tracker.ts'
import { simulateDirect } from './observed/gateway/direct.ts'
import { type GatewayRig as Rig, gatewayRig as rig } from './observed/gateway/testing.ts'
import { summarize } from './summary.ts'
import type { StepRow } from './types.ts'

const system = fillerText(2500, 'gateway-system')
const question = (turn: number) => `Question ${turn}. ${fillerText(120, `gateway-${turn}`)}`
const labels = { runId: 'gateway-test', scenario: 'gateway' }

/** The gate of the gateway route against the direct route's rows as the baseline. */
function gate(direct: StepRow[], gateway: StepRow[]) {
  return checkBaseline({
    baseline: { summary: summarize(direct), breaks: breaksOf(direct), steps: direct },
    run: { summary: summarize(gateway), breaks: breaksOf(gateway), steps: gateway },
    claims: [],
    rowProblems: [],
    options: {
      tolerancePoints: 0.5,
      costTolerancePercent: 1,
      breakThresholdTokens: DEFAULT_BREAK_THRESHOLD_TOKENS,
      strict: false,
    },
  })
}

describe('a gateway that overwrites prompt_cache_key per request, both sides recorded', () => {
  let sides: Rig
  beforeAll(async () => {
    sides = await rig('fresh-cache-key')
    const openai = new OpenAI({
      apiKey: 'client-key',
      baseURL: `${sides.front.url}/openai/v1`,
      maxRetries: 0,
    })
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'system', content: system }]
    for (let turn = 0; turn < 6; turn += 1) {
      messages.push({ role: 'user', content: question(turn) })
      await openai.chat.completions.create({ model: 'gpt-5.4', messages, prompt_cache_key: 'client-session' })
      messages.push({ role: 'assistant', content: 'OK.' })
    }
  })
  afterAll(() => sides.close())

  it('pairs every client request with the upstream one and names the overwritten key', () => {
    const { pairs, unpaired } = pairSides(sides.client, sides.upstream)
    expect(unpaired).toEqual([])
    expect(pairs).toHaveLength(6)
    for (const [index, pair] of pairs.entries())
      expect(pair.changes).toEqual([
        {
          kind: 'gateway-cache-key-overwritten',
          detail: `prompt_cache_key "client-session" → "gw-${index + 1}"`,
        },
      ])
  })

  it('reads less than the direct route, and check against the direct baseline fails naming the change', () => {
    const { pairs } = pairSides(sides.client, sides.upstream)
    const routes = gatewayRoutes(pairs, simulateDirect(pairs.map((pair) => pair.client)), labels)
    const read = (rows: StepRow[]) => rows.reduce((sum, row) => sum + row.cacheReadTokens, 0)
    expect(read(routes.direct)).toBeGreaterThan(5 * 2500)
    expect(read(routes.gateway)).toBeLessThan(read(routes.direct))
    // Buckets stay disjoint on both routes.
    for (const row of [...routes.direct, ...routes.gateway])
      expect(row.cacheReadTokens + row.cacheWriteTokens + row.uncachedTokens).toBe(row.inputTokens)
    const lost = routes.pairs.filter((pair) => pair.lostTokens > 0)
    expect(lost.length).toBeGreaterThan(0)
    for (const pair of lost) {
      expect(pair.gateway.breakCause).toBe('gateway-cache-key-overwritten')
      expect(pair.extraUsd).toBeGreaterThan(0)
    }
    const verdict = gate(routes.direct, routes.gateway)
    expect(verdict.passed).toBe(false)
    expect(verdict.failures.map(findingLine).join('\n')).toContain('gateway-cache-key-overwritten')
  })

  it('passes the gate when nothing stands between client and provider (the direct route against itself)', () => {
    const { pairs } = pairSides(sides.client, sides.upstream)
    const routes = gatewayRoutes(pairs, simulateDirect(pairs.map((pair) => pair.client)), labels)
    expect(gate(routes.direct, routes.direct).passed).toBe(true)
  })
})

describe('a gateway that drops cache_control, both sides recorded', () => {
  let sides: Rig
  beforeAll(async () => {
    sides = await rig('drop-cache-control')
    const anthropic = new Anthropic({
      apiKey: 'client-key',
      baseURL: `${sides.front.url}/anthropic`,
      maxRetries: 0,
    })
    const messages: Anthropic.MessageParam[] = []
    for (let turn = 0; turn < 4; turn += 1) {
      messages.push({ role: 'user', content: [{ type: 'text', text: question(turn) }] })
      await anthropic.messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 64,
        system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
        messages: messages.map((message, index) =>
          index === messages.length - 1
            ? {
                ...message,
                content: [{ type: 'text', text: question(turn), cache_control: { type: 'ephemeral' } }],
              }
            : message,
        ),
      })
      messages.push({ role: 'assistant', content: 'OK.' })
    }
  })
  afterAll(() => sides.close())

  it('names the dropped marks, reads nothing upstream, and fails the gate naming the change', () => {
    const { pairs } = pairSides(sides.client, sides.upstream)
    expect(pairs).toHaveLength(4)
    expect(pairs[1]?.changes.map((change) => change.kind)).toEqual(['gateway-cache-marks-dropped'])
    const routes = gatewayRoutes(pairs, simulateDirect(pairs.map((pair) => pair.client)), labels)
    expect(routes.gateway.every((row) => row.cacheReadTokens === 0)).toBe(true)
    expect(routes.direct.slice(1).every((row) => row.cacheReadTokens > 2500)).toBe(true)
    expect(routes.gateway[2]?.breakCause).toBe('gateway-cache-marks-dropped')
    const verdict = gate(routes.direct, routes.gateway)
    expect(verdict.passed).toBe(false)
    expect(verdict.failures.map(findingLine).join('\n')).toContain('gateway-cache-marks-dropped')
  })
})

/**
 * Both sides of Claude Code Router 2.0.0 as recorded between Claude Code 2.1.328 and serve (bodies in the
 * shape they were sent, texts stand-ins): Anthropic Messages in, OpenAI Chat on gpt-4.1 out, streamed
 * without `stream_options.include_usage`, and the client told every count was 0.
 */
function routerSides(turns: number): { client: CapturedExchange[]; upstream: CapturedExchange[] } {
  const client: CapturedExchange[] = []
  const upstream: CapturedExchange[] = []
  const simulators = new CacheSimulators()
  const front = new CaptureTracker({
    linearize: (api, body) => simulators.linearize(api, body),
    keepBodies: true,
    sink: (exchange) => client.push(exchange),
  })
  const served = new CaptureTracker({
    linearize: (api, body) => simulators.linearize(api, body),
    keepBodies: true,
    sink: (exchange) => upstream.push(exchange),
  })
  const zero: Usage = {
    input: 0,
    uncached: 0,
    cacheRead: 0,
    output: 0,
    raw: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0 },
  }
  const history: Array<{ role: string; text: string }> = []
  for (let turn = 1; turn <= turns; turn += 1) {
    history.push({ role: 'user', text: question(turn) })
    const sent = {
      model: 'claude-sonnet-4-6',
      messages: history.map(({ role, text }) => ({ role, content: [{ type: 'text', text }] })),
      system: [{ type: 'text', text: system }],
      tools: [{ name: 'Read', description: 'Read a file', input_schema: { type: 'object' } }],
      metadata: { user_id: '{"session_id":"router-session"}' },
      max_tokens: 32000,
      thinking: { type: 'adaptive', display: 'omitted' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      output_config: { effort: 'high' },
      stream: true,
    }
    const forwarded = {
      max_tokens: 32000,
      messages: [
        { role: 'system', content: [{ type: 'text', text: system }] },
        ...history.map(({ role, text }) => ({ role, content: [{ type: 'text', text }] })),
      ],
      model: 'gpt-4.1',
      reasoning: { effort: 'high', enabled: false },
      stream: true,
      tools: [{ type: 'function', function: { name: 'Read', description: 'Read a file', parameters: {} } }],
    }
    const placement = served.place('openai-chat', undefined, forwarded)
    const previous = served.previous(placement.conversation)
    const simulation = simulators.simulate('openai-chat', {
      body: forwarded,
      at: turn,
      output: { role: 'assistant', content: [{ type: 'text', text: 'OK.' }] },
      ...(previous !== undefined ? { previous } : {}),
    })
    served.add({
      placement,
      api: 'openai-chat',
      body: forwarded,
      at: turn,
      status: 200,
      latencyMs: 5,
      stream: true,
      simulation,
      predicted: false,
    })
    front.add({
      placement: front.place('anthropic-messages', undefined, sent),
      api: 'anthropic-messages',
      body: sent,
      at: turn,
      status: 200,
      latencyMs: 6,
      stream: true,
      usage: zero,
      predicted: false,
    })
    history.push({ role: 'assistant', text: 'OK.' })
  }
  return { client, upstream }
}

describe('a gateway shaped like Claude Code Router 2.0.0: another model, fields dropped, usage zeroed', () => {
  const sides = routerSides(4)
  const { pairs } = pairSides(sides.client, sides.upstream)

  it('counts the upstream requests answered without usage as requests, not failed attempts', () => {
    const rows = captureRows(sides.upstream, labels)
    expect(rows.map((row) => [row.ok, row.usageNotReported])).toEqual(rows.map(() => [true, true]))
    expect(summarize(rows)[0]).toMatchObject({ requests: 4, failedAttempts: 0, usageNotReported: 4 })
  })

  it('names the zeroed usage, the dropped fields and the model change of every pair', () => {
    expect(pairs).toHaveLength(4)
    for (const pair of pairs) {
      expect(pair.changes.map((change) => change.kind)).toEqual([
        'gateway-wire-translated',
        'gateway-model-changed',
        'gateway-fields-dropped',
        'gateway-usage-zeroed',
      ])
      expect(pair.changes[1]?.detail).toBe('model claude-sonnet-4-6 → gpt-4.1')
      expect(pair.changes[2]?.detail).toBe('metadata, thinking, context_management, output_config')
      expect(pair.changes[3]?.detail).toMatch(
        /^usage all 0 to the client, upstream had \d+ input and \d+ output tokens by the simulator's count \(not reported to the gateway: streamed without stream_options\.include_usage\)$/,
      )
    }
  })

  it('prices the gateway route at what the simulated provider billed, and check names the model beside the cost', () => {
    const routes = gatewayRoutes(pairs, simulateDirect(pairs.map((pair) => pair.client)), labels)
    for (const row of routes.gateway) {
      expect(row.usageNotReported).toBeUndefined()
      expect(row.inputTokens).toBeGreaterThan(2500)
      expect(row.breakCause ?? '').not.toMatch(/^gateway-usage-/)
    }
    const verdict = gate(routes.direct, routes.gateway)
    const cost = [...verdict.failures, ...verdict.changes].find((finding) => finding.kind === 'cost')
    const line = cost === undefined ? '' : findingLine(cost)
    expect(line).toMatch(/cost .*, model claude-sonnet-4-6 → gpt-4\.1\)$/)
    // docs/gate.md shows this line as it is.
    expect(readFileSync(new URL('../docs/gate.md', import.meta.url), 'utf8')).toContain(`  ${line}\n`)
  })
})
