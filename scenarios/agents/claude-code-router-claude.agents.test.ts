import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENT_DRIVERS, runAgentStep, writeAgentFiles } from '../../harness/loops/agents/index.ts'
import { installedAgent } from '../../harness/loops/agents/install.ts'
import { type LoopbackServer, startLoopback } from '../../providers/mock/loopback.ts'
import type { CapturedExchange } from '../../providers/wire/exchange.ts'
import { breaksOf } from '../../reports/breaks.ts'
import { captureRows } from '../../reports/capture-rows.ts'
import { checkBaseline } from '../../reports/gate.ts'
import { findingLine } from '../../reports/gate-text.ts'
import { gatewayRoutes, pairSides } from '../../reports/gateway-rows.ts'
import { simulateDirect } from '../../reports/observed/gateway/direct.ts'
import { recording } from '../../reports/observed/gateway/testing.ts'
import { summarize } from '../../reports/summary.ts'
import { type StartedGateway, startRouter } from './gateway-rig.ts'

const client: CapturedExchange[] = []
const upstream: CapturedExchange[] = []
let served: LoopbackServer
let front: LoopbackServer
let router: StartedGateway
let routes: ReturnType<typeof gatewayRoutes>
let pairs: ReturnType<typeof pairSides>['pairs']

beforeAll(async () => {
  served = await startLoopback({ upstream: 'sim', port: 0, capture: recording(upstream) })
  router = await startRouter(served.baseURLs.openai, 'gpt-4.1')
  front = await startLoopback({
    upstream: 'live',
    port: 0,
    capture: recording(client),
    liveBaseURLs: { ...served.baseURLs, anthropic: router.url },
  })
  const driver = AGENT_DRIVERS['claude-code']
  const bin = await installedAgent(driver)
  const root = mkdtempSync(join(tmpdir(), 'cachelab-ccr-claude-'))
  const place = { home: join(root, 'home'), workspace: join(root, 'workspace') }
  const urls = {
    anthropic: `${front.url}/anthropic`,
    openai: served.baseURLs.openai,
    gemini: served.baseURLs.gemini,
  }
  writeAgentFiles(place, driver.files(place, urls, {}))
  writeFileSync(join(place.workspace, 'README.md'), '# Calc\nA tiny calculator.\n')
  for (const [index, prompt] of ['What does README.md say?', 'Thanks. Anything else?'].entries()) {
    const outcome = await runAgentStep(
      bin,
      place,
      driver.command(place, urls, { prompt, continues: index > 0 }, {}),
      240_000,
    )
    if (outcome.code !== 0)
      throw new Error(
        `claude exited ${outcome.code}: ${outcome.stderr.slice(-1500)} ${outcome.stdout.slice(-1500)} front: ${JSON.stringify(client.map((e) => [e.status, e.error]))} up: ${JSON.stringify(upstream.map((e) => [e.status, e.error]))}`,
      )
  }
  const paired = pairSides(client, upstream)
  pairs = paired.pairs
  routes = gatewayRoutes(pairs, simulateDirect(pairs.map((pair) => pair.client)), {
    runId: 'ccr-claude',
    scenario: 'gateway',
  })
}, 600_000)

afterAll(async () => {
  await front?.close()
  router?.child.kill()
  await served?.close()
})

describe('Claude Code through Claude Code Router 2.0.0 to an OpenAI Chat upstream', () => {
  it('records both sides and pairs every request Claude Code sent', () => {
    expect(client.length).toBeGreaterThanOrEqual(2)
    expect(pairs.length).toBe(client.filter((exchange) => exchange.status === 200).length)
    for (const pair of pairs) {
      expect(pair.client.api).toBe('anthropic-messages')
      expect(pair.upstream.api).toBe('openai-chat')
    }
  })

  it("names each request's changes across the gateway and their cost against the direct route", () => {
    const kinds = pairs.map((pair) => pair.changes.map((change) => change.kind))
    for (const each of kinds) expect(each).toContain('gateway-wire-translated')
    // The router folds Claude Code's billing line into the system text it sends upstream.
    for (const each of kinds) expect(each).toContain('gateway-system-rewritten')
    expect(routes.gateway).toHaveLength(pairs.length)
    expect(routes.direct).toHaveLength(pairs.length)
    for (const row of [...routes.direct, ...routes.gateway]) {
      expect(row.ok).toBe(true)
      expect(row.cacheReadTokens + row.cacheWriteTokens + row.uncachedTokens).toBe(row.inputTokens)
      expect(row.costUsd).toBeGreaterThan(0)
    }
    for (const cost of routes.pairs)
      expect(cost.extraUsd).toBeCloseTo(cost.gateway.costUsd - cost.direct.costUsd, 12)
  })

  it('counts the upstream requests, streamed without stream_options.include_usage, as requests with usage not reported', () => {
    const answered = upstream.filter((exchange) => exchange.status === 200)
    expect(answered.length).toBeGreaterThanOrEqual(2)
    for (const exchange of answered) {
      expect(exchange.request?.stream).toBe(true)
      expect(exchange.request?.stream_options).toBeUndefined()
      expect(exchange.usage).toBeUndefined()
      expect(exchange.error).toBeUndefined()
    }
    const rows = captureRows(answered, { runId: 'ccr-upstream', scenario: 'capture' })
    expect(rows.map((row) => [row.ok, row.usageNotReported])).toEqual(rows.map(() => [true, true]))
    const summaries = summarize(rows)
    expect(summaries.reduce((sum, row) => sum + row.failedAttempts, 0)).toBe(0)
    expect(summaries.reduce((sum, row) => sum + (row.usageNotReported ?? 0), 0)).toBe(answered.length)
  })

  it('names on every pair the usage the router zeroed, the request fields it dropped and the model it changed', () => {
    for (const pair of pairs) {
      const byKind = new Map(pair.changes.map((change) => [change.kind, change.detail]))
      expect(pair.client.usage).toMatchObject({ input: 0, output: 0 })
      expect(byKind.get('gateway-usage-zeroed')).toMatch(
        /^usage all 0 to the client, upstream had \d+ input and \d+ output tokens by the simulator's count \(not reported to the gateway: streamed without stream_options\.include_usage\)$/,
      )
      // Claude Code's default model (the issue's run used claude-sonnet-4-6: the same change).
      expect(byKind.get('gateway-model-changed')).toBe(
        `model ${AGENT_DRIVERS['claude-code'].defaultModel} → gpt-4.1`,
      )
      const dropped = byKind.get('gateway-fields-dropped')?.split(', ') ?? []
      expect(dropped).toEqual(expect.arrayContaining(['thinking', 'metadata', 'context_management']))
    }
    // The gateway route is priced at what the simulated provider billed; the gate names the model change.
    const verdict = checkBaseline({
      baseline: { summary: summarize(routes.direct), breaks: breaksOf(routes.direct), steps: routes.direct },
      run: { summary: summarize(routes.gateway), breaks: breaksOf(routes.gateway), steps: routes.gateway },
      claims: [],
      rowProblems: [],
      options: { tolerancePoints: 0.5, costTolerancePercent: 1, breakThresholdTokens: 1024, strict: false },
    })
    const cost = [...verdict.failures, ...verdict.changes].find((finding) => finding.kind === 'cost')
    expect(cost === undefined ? '' : findingLine(cost)).toMatch(/, model claude-[\w.-]+ → gpt-4\.1\)$/)
    console.log(
      JSON.stringify({
        changes: pairs[0]?.changes,
        cost: cost === undefined ? undefined : findingLine(cost),
      }),
    )
  })

  it('costs no warm request a read: the folded billing line is the same on each, so the prefix holds', () => {
    const warm = routes.gateway.filter((row) => !row.cold)
    expect(warm.length).toBeGreaterThan(0)
    for (const row of warm) {
      // Where the upstream conversation diverges (the router drops Claude Code's thinking from the history
      // it resends), it does so past the cached prefix: no read lost, so nothing charged to the gateway.
      expect(row.breakCause ?? '').not.toMatch(/^gateway-/)
      expect(row.lostTokens).toBe(0)
      expect(row.cacheReadTokens / row.inputTokens).toBeGreaterThan(0.95)
    }
  })
})
