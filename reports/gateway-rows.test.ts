import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../harness/filler.ts'
import { breaksOf } from './breaks.ts'
import { checkBaseline, DEFAULT_BREAK_THRESHOLD_TOKENS, findingLine } from './gate.ts'
import { gatewayRoutes, pairSides } from './gateway-rows.ts'
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
