// A real gateway that translates the wire: Claude Code Router (@musistudio/claude-code-router, pinned,
// installed into the agents' cache folder) takes Anthropic Messages and sends OpenAI Chat to a DeepSeek
// upstream (serve's /deepseek). Both sides are recorded and paired; the changes and their cost against
// the direct route (the client's Anthropic requests to Anthropic) are printed for the note
// (notes/2026-12-03-gateways.md). Version 3.1.1 does not install (a dependency is not on the registry).

import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { type AddressInfo, createServer as createNetServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { installedAgent } from '../../harness/loops/agents/install.ts'
import { type LoopbackServer, startLoopback } from '../../providers/mock/loopback.ts'
import { CacheSimulators } from '../../providers/sim/index.ts'
import type { CapturedExchange } from '../../providers/wire/exchange.ts'
import { gatewayRoutes, pairSides } from '../../reports/gateway-rows.ts'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import { simulateDirect } from '../../reports/observed/gateway/direct.ts'
import type { StepRow } from '../../reports/types.ts'

const ROUTER = { package: '@musistudio/claude-code-router', version: '2.0.0', bin: 'ccr' }

async function freePort(): Promise<number> {
  const server = createNetServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The router in a home of its own, its one provider serve's DeepSeek Chat Completions. */
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
          api_base_url: `${upstream.baseURLs.deepseek}/chat/completions`,
          api_key: 'router-key',
          models: ['deepseek-flash'],
        },
      ],
      Router: { default: 'sim,deepseek-flash' },
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

beforeAll(async () => {
  served = await startLoopback({ upstream: 'sim', port: 0, capture: recording(upstream) })
  router = await startRouter(served)
  front = await startLoopback({
    upstream: 'live',
    port: 0,
    capture: recording(client),
    liveBaseURLs: { ...served.baseURLs, anthropic: router.url },
  })
  const system = fillerText(2500, 'router-system')
  const anthropic = new Anthropic({ apiKey: 'client-key', baseURL: `${front.url}/anthropic`, maxRetries: 0 })
  const messages: Anthropic.MessageParam[] = []
  for (let turn = 0; turn < 4; turn += 1) {
    messages.push({ role: 'user', content: `Turn ${turn}: ${fillerText(100, `router-${turn}`)}` })
    await anthropic.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
      messages,
    })
    messages.push({ role: 'assistant', content: 'OK.' })
  }
}, 180_000)

afterAll(async () => {
  await front?.close()
  router?.child.kill()
  await served?.close()
})

describe('Claude Code Router 2.0.0 between the Anthropic SDK and a DeepSeek upstream', () => {
  it('translates every request to OpenAI Chat, and the pairs say what that changed and cost', () => {
    const { pairs, unpaired } = pairSides(client, upstream)
    expect(unpaired).toEqual([])
    expect(pairs).toHaveLength(4)
    for (const pair of pairs) {
      expect(pair.client.api).toBe('anthropic-messages')
      expect(pair.upstream.api).toBe('deepseek-chat')
      expect(pair.changes.map((change) => change.kind)).toContain('gateway-wire-translated')
    }
    const routes = gatewayRoutes(pairs, simulateDirect(pairs.map((pair) => pair.client)), {
      runId: 'ccr',
      scenario: 'gateway',
    })
    for (const row of [...routes.direct, ...routes.gateway])
      expect(row.cacheReadTokens + row.cacheWriteTokens + row.uncachedTokens).toBe(row.inputTokens)
    const sum = (rows: StepRow[], pick: (row: StepRow) => number) =>
      rows.reduce((total, row) => total + pick(row), 0)
    console.log(
      JSON.stringify({
        changes: pairs.map((pair) => pair.changes),
        direct: {
          read: sum(routes.direct, (row) => row.cacheReadTokens),
          usd: sum(routes.direct, (row) => row.costUsd),
        },
        gateway: {
          read: sum(routes.gateway, (row) => row.cacheReadTokens),
          usd: sum(routes.gateway, (row) => row.costUsd),
        },
        causes: routes.gateway.map((row) => row.breakCause ?? ''),
      }),
    )
  })
})
