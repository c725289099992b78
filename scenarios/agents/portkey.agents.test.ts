// A real gateway between a client and cachelab: Portkey's AI gateway (@portkey-ai/gateway, pinned,
// installed into the agents' cache folder), routed to serve, with both of its sides recorded and paired,
// and its upstream side gated against the direct route. Evidence: notes/2026-12-03-gateways.md.

import { type ChildProcess, spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { installedAgent } from '../../harness/loops/agents/install.ts'
import { type LoopbackServer, startLoopback } from '../../providers/mock/loopback.ts'
import type { CapturedExchange } from '../../providers/wire/exchange.ts'
import { breaksOf } from '../../reports/breaks.ts'
import { checkBaseline, DEFAULT_BREAK_THRESHOLD_TOKENS } from '../../reports/gate.ts'
import { gatewayRoutes, pairSides } from '../../reports/gateway-rows.ts'
import { simulateDirect } from '../../reports/observed/gateway/direct.ts'
import { recording } from '../../reports/observed/gateway/testing.ts'
import { summarize } from '../../reports/summary.ts'
import type { StepRow } from '../../reports/types.ts'
import { freePort } from './gateway-rig.ts'

const PORTKEY = { package: '@portkey-ai/gateway', version: '1.15.2', bin: 'gateway' }

/** Portkey's gateway on a free port, once it answers. */
async function startPortkey(): Promise<{ url: string; child: ChildProcess }> {
  const bin = await installedAgent(PORTKEY)
  const port = await freePort()
  const child = spawn(process.execPath, [bin, `--port=${port}`, '--headless'], {
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: 'ignore',
  })
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const ready = await fetch(url).then(
      (response) => response.ok,
      () => false,
    )
    if (ready) return { url, child }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  child.kill()
  throw new Error('Portkey gateway did not start')
}

/**
 * Portkey picks the provider and host from its own headers, which serve's recording front does not
 * forward (it forwards an allow-list): this shim adds them and changes nothing else.
 */
async function startHeaderShim(
  portkey: string,
  upstream: LoopbackServer,
): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    void (async () => {
      const chunks: Buffer[] = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      const anthropic = (request.url ?? '').endsWith('/messages')
      const headers = new Headers()
      for (const [name, value] of Object.entries(request.headers))
        if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name))
          headers.set(name, value)
      headers.set('x-portkey-provider', anthropic ? 'anthropic' : 'openai')
      headers.set(
        'x-portkey-custom-host',
        anthropic ? `${upstream.baseURLs.anthropic}/v1` : upstream.baseURLs.openai,
      )
      const answer = await fetch(`${portkey}${request.url}`, {
        method: 'POST',
        headers,
        body: Buffer.concat(chunks),
      })
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? '' })
      response.end(Buffer.from(await answer.arrayBuffer()))
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

const client: CapturedExchange[] = []
const upstream: CapturedExchange[] = []
let served: LoopbackServer
let front: LoopbackServer
let shim: { url: string; server: Server }
let portkey: { url: string; child: ChildProcess }

beforeAll(async () => {
  served = await startLoopback({ upstream: 'sim', port: 0, capture: recording(upstream) })
  portkey = await startPortkey()
  shim = await startHeaderShim(portkey.url, served)
  front = await startLoopback({
    upstream: 'live',
    port: 0,
    capture: recording(client),
    liveBaseURLs: { ...served.baseURLs, openai: `${shim.url}/v1`, anthropic: shim.url },
  })
  const system = fillerText(2500, 'portkey-system')
  const openai = new OpenAI({ apiKey: 'client-key', baseURL: `${front.url}/openai/v1`, maxRetries: 0 })
  const chat: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'system', content: system }]
  const anthropic = new Anthropic({ apiKey: 'client-key', baseURL: `${front.url}/anthropic`, maxRetries: 0 })
  const messages: Anthropic.MessageParam[] = []
  for (let turn = 0; turn < 4; turn += 1) {
    const text = `Turn ${turn}: ${fillerText(100, `portkey-${turn}`)}`
    chat.push({ role: 'user', content: text })
    await openai.chat.completions.create({
      model: 'gpt-5.4',
      messages: chat,
      prompt_cache_key: 'portkey-session',
    })
    chat.push({ role: 'assistant', content: 'OK.' })
    messages.push({ role: 'user', content: text })
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
  await new Promise((resolve) => shim?.server.close(resolve))
  portkey?.child.kill()
  await served?.close()
})

describe('Portkey AI gateway 1.15.2 between the SDKs and serve', () => {
  it('forwards every request, and what it changed (if anything) is named and gated against the direct route', () => {
    const { pairs, unpaired } = pairSides(client, upstream)
    expect(unpaired).toEqual([])
    expect(pairs).toHaveLength(8)
    const routes = gatewayRoutes(pairs, simulateDirect(pairs.map((pair) => pair.client)), {
      runId: 'portkey',
      scenario: 'gateway',
    })
    const read = (rows: StepRow[]) => rows.reduce((sum, row) => sum + row.cacheReadTokens, 0)
    const changes = [...new Set(pairs.flatMap((pair) => pair.changes.map((change) => change.kind)))]
    const verdict = checkBaseline({
      baseline: { summary: summarize(routes.direct), breaks: breaksOf(routes.direct), steps: routes.direct },
      run: { summary: summarize(routes.gateway), breaks: breaksOf(routes.gateway), steps: routes.gateway },
      claims: [],
      rowProblems: [],
      options: {
        tolerancePoints: 0.5,
        costTolerancePercent: 1,
        breakThresholdTokens: DEFAULT_BREAK_THRESHOLD_TOKENS,
        strict: false,
      },
    })
    // The evidence of the note, printed where the run shows it.
    console.log(
      JSON.stringify({
        changes,
        details: pairs.slice(0, 2).map((pair) => pair.changes),
        directRead: read(routes.direct),
        gatewayRead: read(routes.gateway),
        passed: verdict.passed,
        failures: verdict.failures.length,
      }),
    )
    // Portkey forwards both wires as sent: no cache-relevant change, and the gateway route holds the baseline.
    expect(changes).toEqual([])
    expect(read(routes.gateway)).toBe(read(routes.direct))
    expect(verdict.passed).toBe(true)
  })
})
