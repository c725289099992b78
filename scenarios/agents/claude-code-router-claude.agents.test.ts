// Claude Code itself through the gateway made for it: Claude Code 2.1.328 -> a recording front (serve
// --upstream live) -> Claude Code Router 2.0.0 -> serve's OpenAI Chat Completions (GPT-4.1), recorded again. Each
// pair names what the router changed (the wire translated, cache marks, system text) and its cost
// against the direct route: Claude Code's own requests sent to Anthropic.

import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { type AddressInfo, createServer as createNetServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENT_DRIVERS, runAgentStep, writeAgentFiles } from '../../harness/loops/agents/index.ts'
import { installedAgent } from '../../harness/loops/agents/install.ts'
import { type LoopbackServer, startLoopback } from '../../providers/mock/loopback.ts'
import { CacheSimulators } from '../../providers/sim/index.ts'
import type { CapturedExchange } from '../../providers/wire/exchange.ts'
import { gatewayRoutes, pairSides } from '../../reports/gateway-rows.ts'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import { simulateDirect } from '../../reports/observed/gateway/direct.ts'

const ROUTER = { package: '@musistudio/claude-code-router', version: '2.0.0', bin: 'ccr' }

async function freePort(): Promise<number> {
  const server = createNetServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The router in a home of its own, its one provider serve's OpenAI Chat Completions (GPT-4.1). */
async function startRouter(upstream: LoopbackServer): Promise<{ url: string; child: ChildProcess }> {
  const bin = await installedAgent(ROUTER)
  const port = await freePort()
  const home = mkdtempSync(join(tmpdir(), 'cachelab-ccr-'))
  mkdirSync(join(home, '.claude-code-router'))
  writeFileSync(
    join(home, '.claude-code-router', 'config.json'),
    JSON.stringify({
      PORT: port,
      LOG: false,
      Providers: [
        {
          name: 'sim',
          api_base_url: `${upstream.baseURLs.openai}/chat/completions`,
          api_key: 'router-key',
          models: ['gpt-4.1'],
        },
      ],
      Router: { default: 'sim,gpt-4.1' },
    }),
  )
  const child = spawn(process.execPath, [bin, 'start'], {
    env: { ...process.env, HOME: home },
    stdio: 'ignore',
  })
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const up = await fetch(`${url}/`).then(
      () => true,
      () => false,
    )
    if (up) return { url, child }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  child.kill()
  throw new Error('Claude Code Router did not start')
}

function recording(into: CapturedExchange[]): CaptureTracker {
  const linearizer = new CacheSimulators()
  return new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    keepBodies: true,
    sink: (exchange) => into.push(exchange),
  })
}

const client: CapturedExchange[] = []
const upstream: CapturedExchange[] = []
let served: LoopbackServer
let front: LoopbackServer
let router: { url: string; child: ChildProcess }
let routes: ReturnType<typeof gatewayRoutes>
let pairs: ReturnType<typeof pairSides>['pairs']

beforeAll(async () => {
  served = await startLoopback({ upstream: 'sim', port: 0, capture: recording(upstream) })
  router = await startRouter(served)
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
