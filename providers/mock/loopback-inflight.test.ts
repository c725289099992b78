// Nothing lost in flight: a client that goes away in the middle of a long streamed answer, or stops
// reading it, is recorded as such in the capture and the log, and closing records every request it cuts.

import { type ClientRequest, createServer, type IncomingMessage, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import { CacheSimulators } from '../sim/index.ts'
import type { CapturedExchange } from '../wire/exchange.ts'
import { type LoopbackOptions, type LoopbackServer, type ServeLogRecord, startLoopback } from './loopback.ts'
import { repliesFromRules } from './reply-file.ts'

/** Far more than the kernel buffers between two loopback sockets hold: a reader that stops blocks the server. */
const LONG_ANSWER = repliesFromRules([{ session: '*', text: { tokens: 200_000 } }])

interface Bench {
  server: LoopbackServer
  exchanges: CapturedExchange[]
  log: ServeLogRecord[]
}

const opened: { server: LoopbackServer; clients: ClientRequest[] }[] = []

async function bench(options: Partial<LoopbackOptions> = {}): Promise<Bench> {
  const linearizer = new CacheSimulators()
  const exchanges: CapturedExchange[] = []
  const log: ServeLogRecord[] = []
  const capture = new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    sink: (exchange) => exchanges.push(exchange),
  })
  const server = await startLoopback({
    upstream: 'sim',
    port: 0,
    capture,
    log: (record) => log.push(record),
    replies: LONG_ANSWER,
    ...options,
  })
  opened.push({ server, clients: [] })
  return { server, exchanges, log }
}

afterEach(async () => {
  for (const { server, clients } of opened.splice(0)) {
    for (const client of clients) client.destroy()
    await server.close()
  }
})

/** Ask for a long streamed answer over a raw connection; resolves once its first chunk has arrived. */
function streamOne(
  server: LoopbackServer,
  session: string,
): Promise<{ client: ClientRequest; answer: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const client = request(
      `${server.baseURLs.openai}/chat/completions`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer test',
          'x-cachelab-session': session,
        },
      },
      (answer) => {
        answer.once('data', () => {
          // Read nothing more: the rest of the answer backs up into the server.
          answer.pause()
          resolve({ client, answer })
        })
      },
    )
    client.once('error', reject)
    opened.at(-1)?.clients.push(client)
    client.end(JSON.stringify(chatBody(session)))
  })
}

const chatBody = (session: string) => ({
  model: 'gpt-5.4',
  stream: true,
  // With usage in its last chunk: the chunk a client that leaves never gets.
  stream_options: { include_usage: true },
  messages: [{ role: 'user', content: `Write at length, ${session}.` }],
})

const generously = { timeout: 90_000, interval: 100 }

describe('a client that vanishes mid-answer', () => {
  it('is recorded in the capture and the log as gone, with no usage, once its connection closes', async () => {
    const { server, exchanges, log } = await bench()
    const { client, answer } = await streamOne(server, 'killed-reader')
    expect(answer.statusCode).toBe(200)
    // Killed: its socket closes with the rest of the answer unread.
    client.destroy()
    await vi.waitFor(() => expect(exchanges).toHaveLength(1), generously)
    const [exchange] = exchanges
    expect(exchange).toMatchObject({ session: 'killed-reader', status: 200, stream: true, attempt: 0 })
    expect(exchange?.error).toMatch(/^client went away after \d+ frames$/)
    expect(exchange?.usage).toBeUndefined()
    await vi.waitFor(() => expect(log).toHaveLength(1), generously)
    expect(log[0]).toMatchObject({ session: 'killed-reader', status: 200, error: exchange?.error })
    expect(log[0]?.usage).toBeUndefined()
    expect(server.health().requests).toMatchObject({ inFlight: 0, served: 1 })
  })

  it('is recorded as having stopped reading when it keeps its connection open but takes nothing', async () => {
    const { server, exchanges, log } = await bench({ drainTimeoutMs: 500 })
    await streamOne(server, 'stalled-reader')
    await vi.waitFor(() => expect(exchanges).toHaveLength(1), generously)
    expect(exchanges[0]).toMatchObject({ session: 'stalled-reader', status: 200 })
    expect(exchanges[0]?.error).toMatch(/^client stopped reading after \d+ frames$/)
    expect(exchanges[0]?.usage).toBeUndefined()
    await vi.waitFor(() => expect(log).toHaveLength(1), generously)
    expect(log[0]?.error).toBe(exchanges[0]?.error)
    expect(server.health().requests.inFlight).toBe(0)
  })

  it('leaves the session able to retry: the same request again is its next attempt, answered in full', async () => {
    const { server, exchanges } = await bench()
    const { client } = await streamOne(server, 'retrying')
    client.destroy()
    await vi.waitFor(() => expect(exchanges).toHaveLength(1), generously)
    const again = await fetch(`${server.baseURLs.openai}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer test',
        'x-cachelab-session': 'retrying',
      },
      body: JSON.stringify(chatBody('retrying')),
    })
    expect(again.status).toBe(200)
    await again.text()
    await vi.waitFor(() => expect(exchanges).toHaveLength(2), generously)
    expect(exchanges[0]?.error).toMatch(/^client went away/)
    expect(exchanges[1]).toMatchObject({ turn: exchanges[0]?.turn, attempt: 1 })
    expect(exchanges[1]?.error).toBeUndefined()
    expect(exchanges[1]?.usage?.output).toBeGreaterThan(100_000)
  })
})

describe('closing with readers that stopped reading', () => {
  it('cuts them after the grace period and records every one as cut by shutdown before it resolves', async () => {
    // Readers that stop for longer than the grace period: shutdown, not the drain bound, ends them.
    const { server, exchanges, log } = await bench({ shutdownGraceMs: 200, drainTimeoutMs: 600_000 })
    await Promise.all(['reader-1', 'reader-2', 'reader-3'].map((session) => streamOne(server, session)))
    expect(server.health().requests.inFlight).toBe(3)
    await server.close()
    expect(exchanges.map((exchange) => exchange.session).sort()).toEqual(['reader-1', 'reader-2', 'reader-3'])
    for (const exchange of exchanges) {
      expect(exchange.status).toBe(200)
      expect(exchange.error).toMatch(/^cut by shutdown after \d+ frames$/)
      expect(exchange.usage).toBeUndefined()
    }
    expect(log.map((record) => record.error)).toEqual(exchanges.map((exchange) => exchange.error))
    expect(server.health()).toMatchObject({ status: 'draining', requests: { inFlight: 0, served: 3 } })
  })
})

describe('closing a live proxy whose upstream has not finished', () => {
  it('records a request still waiting for the provider as refused, and one mid-stream as cut by shutdown', async () => {
    // A provider that never answers one session, and sends the other its headers and one frame only.
    const provider = createServer((incoming, outgoing) => {
      if (incoming.headers['x-cachelab-session'] === 'silent') return
      outgoing.writeHead(200, { 'content-type': 'text/event-stream' })
      outgoing.write('data: {"choices":[{"index":0,"delta":{"content":"Once"}}]}\n\n')
    })
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', () => resolve()))
    const base = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`
    try {
      const { server, exchanges, log } = await bench({
        upstream: 'live',
        liveBaseURLs: { openai: `${base}/v1`, anthropic: base, deepseek: base, bedrock: base, gemini: base },
        shutdownGraceMs: 200,
      })
      const send = (session: string) =>
        fetch(`${server.baseURLs.openai}/chat/completions`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: 'Bearer test',
            'x-cachelab-session': session,
          },
          body: JSON.stringify(chatBody(session)),
        }).then(
          (answer) => answer.text().catch(() => 'cut'),
          () => 'cut',
        )
      const answers = Promise.all([send('silent'), send('trickle')])
      await vi.waitFor(() => expect(server.health().requests.inFlight).toBe(2), generously)
      await server.close()
      await answers
      const bySession = new Map(exchanges.map((exchange) => [exchange.session, exchange]))
      expect(bySession.get('silent')).toMatchObject({ status: 503 })
      // Refused in the vendor's own envelope, as a request arriving during shutdown is.
      expect(bySession.get('silent')?.error).toBe('HTTP 503 server_error')
      expect(bySession.get('trickle')).toMatchObject({ status: 200 })
      expect(bySession.get('trickle')?.error).toMatch(/^cut by shutdown after \d+ frames$/)
      expect(log).toHaveLength(2)
      expect(server.health().requests.inFlight).toBe(0)
    } finally {
      provider.closeAllConnections()
      provider.close()
    }
  })
})
