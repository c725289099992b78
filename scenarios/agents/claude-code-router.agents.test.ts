// A real gateway that translates the wire: Claude Code Router (@musistudio/claude-code-router, pinned,
// installed into the agents' cache folder) takes Anthropic Messages and sends OpenAI Chat to a DeepSeek
// upstream (serve's /deepseek). Both sides are recorded and paired; the changes and their cost against
// the direct route (the client's Anthropic requests to Anthropic) are printed for the note
// (notes/2026-12-03-gateways.md). Version 3.1.1 does not install (a dependency is not on the registry).

import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { type LoopbackServer, startLoopback } from '../../providers/mock/loopback.ts'
import type { CapturedExchange } from '../../providers/wire/exchange.ts'
import { gatewayRoutes, pairSides } from '../../reports/gateway-rows.ts'
import { simulateDirect } from '../../reports/observed/gateway/direct.ts'
import { recording } from '../../reports/observed/gateway/testing.ts'
import type { StepRow } from '../../reports/types.ts'
import { type StartedGateway, startRouter } from './gateway-rig.ts'

const client: CapturedExchange[] = []
const upstream: CapturedExchange[] = []
let served: LoopbackServer
let front: LoopbackServer
let router: StartedGateway

beforeAll(async () => {
  served = await startLoopback({ upstream: 'sim', port: 0, capture: recording(upstream) })
  router = await startRouter(served.baseURLs.deepseek, 'deepseek-flash')
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
