// Test code: a small gateway of the kind the public trackers report (it overwrites `prompt_cache_key`
// per request, or drops every `cache_control`), with both of its sides recorded — serve as its upstream,
// and a recording serve in front of it that forwards to it, as `serve --upstream live` does.

import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type LoopbackServer, startLoopback } from '../../../providers/mock/loopback.ts'
import { CacheSimulators } from '../../../providers/sim/index.ts'
import type { CapturedExchange } from '../../../providers/wire/exchange.ts'
import { CaptureTracker } from '../capture/tracker.ts'

/** What the gateway of this test does to each request it forwards. */
export type GatewayMode = 'fresh-cache-key' | 'drop-cache-control'

/** Every `cache_control` field removed, at any depth. */
function withoutMarks(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutMarks)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'cache_control')
      .map(([key, field]) => [key, withoutMarks(field)]),
  )
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>
}

/**
 * A small gateway of the kind the trackers report: it forwards OpenAI Chat to `upstream`'s /openai and
 * Anthropic Messages to its /anthropic, overwriting `prompt_cache_key` with a fresh one per request, or
 * dropping every `cache_control`.
 */
async function startGateway(
  mode: GatewayMode,
  upstream: LoopbackServer,
): Promise<{ url: string; server: Server }> {
  let served = 0
  const server = createServer((request, response) => {
    void (async () => {
      const body = await readJson(request)
      served += 1
      const forwarded =
        mode === 'fresh-cache-key' ? { ...body, prompt_cache_key: `gw-${served}` } : withoutMarks(body)
      const anthropic = (request.url ?? '').endsWith('/messages')
      const target = anthropic
        ? `${upstream.baseURLs.anthropic}/v1/messages`
        : `${upstream.baseURLs.openai}/chat/completions`
      const answer = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'gw', authorization: 'Bearer gw' },
        body: JSON.stringify(forwarded),
      })
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? '' })
      response.end(Buffer.from(await answer.arrayBuffer()))
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

/** A capture that keeps bodies, its exchanges pushed to `into`. */
export function recording(
  into: CapturedExchange[],
  sink?: (exchange: CapturedExchange) => void,
): CaptureTracker {
  const linearizer = new CacheSimulators()
  return new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    keepBodies: true,
    sink: (exchange) => {
      into.push(exchange)
      sink?.(exchange)
    },
  })
}

/** The two sides of one gateway: serve upstream of it, and a recording front that forwards to it. */
export interface GatewayRig {
  client: CapturedExchange[]
  upstream: CapturedExchange[]
  front: LoopbackServer
  close(): Promise<void>
}

export async function gatewayRig(
  mode: GatewayMode,
  sinks: {
    client?: (exchange: CapturedExchange) => void
    upstream?: (exchange: CapturedExchange) => void
  } = {},
): Promise<GatewayRig> {
  const client: CapturedExchange[] = []
  const upstream: CapturedExchange[] = []
  const served = await startLoopback({
    upstream: 'sim',
    port: 0,
    capture: recording(upstream, sinks.upstream),
  })
  const gateway = await startGateway(mode, served)
  const front = await startLoopback({
    upstream: 'live',
    port: 0,
    capture: recording(client, sinks.client),
    liveBaseURLs: { ...served.baseURLs, openai: `${gateway.url}/v1`, anthropic: gateway.url },
  })
  return {
    client,
    upstream,
    front,
    close: async () => {
      await front.close()
      await new Promise((resolve) => gateway.server.close(resolve))
      await served.close()
    },
  }
}
