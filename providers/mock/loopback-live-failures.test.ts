// A live provider's stream can fail after its 200: an error event (Anthropic, Responses), an error chunk
// (Chat Completions, Gemini). The client's SDK throws, so `serve --upstream live` must record the attempt
// as failed, without the usage the frames before the error carried (Anthropic's message_start has it).
// The provider here is cachelab's own sim upstream, failing every stream with its `stream-error` fault.

import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import { CacheSimulators } from '../sim/index.ts'
import type { CapturedExchange } from '../wire/exchange.ts'
import { type LoopbackServer, type ServeLogRecord, startLoopback } from './loopback.ts'

let upstream: LoopbackServer
let proxy: LoopbackServer
const exchanges: CapturedExchange[] = []
const records: ServeLogRecord[] = []

beforeAll(async () => {
  upstream = await startLoopback({
    upstream: 'sim',
    port: 0,
    faults: [{ fault: { kind: 'stream-error' }, times: 1_000 }],
  })
  const linearizer = new CacheSimulators()
  proxy = await startLoopback({
    upstream: 'live',
    port: 0,
    liveBaseURLs: upstream.baseURLs,
    log: (record) => records.push(record),
    capture: new CaptureTracker({
      linearize: (api, body) => linearizer.linearize(api, body),
      keepAnswers: true,
      sink: (exchange) => exchanges.push(exchange),
    }),
  })
})
afterAll(async () => {
  await proxy.close()
  await upstream.close()
})

const question = 'Which stations reported frost last night, and where was it coldest?'

const streams = [
  [
    '/anthropic/v1/messages',
    {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      stream: true,
      messages: [{ role: 'user', content: question }],
    },
    'error event in the stream: overloaded_error',
  ],
  [
    '/openai/v1/chat/completions',
    {
      model: 'gpt-5.4',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: question }],
    },
    'error event in the stream: server_error',
  ],
  ['/openai/v1/responses', { model: 'gpt-5.4', stream: true, input: question }, 'error event in the stream'],
  [
    '/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    { contents: [{ role: 'user', parts: [{ text: question }] }] },
    'error event in the stream: INTERNAL',
  ],
] as const

describe('a live stream that fails after its 200', () => {
  it('is recorded and logged as a failed attempt without usage, on every streaming API', async () => {
    for (const [path, body] of streams) {
      const response = await fetch(`${proxy.url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': 'placeholder',
          'x-goog-api-key': 'placeholder',
        },
        body: JSON.stringify(body),
      })
      expect(response.status).toBe(200)
      // The client gets the stream as the provider sent it, error and all.
      expect(await response.text()).toContain('error')
    }
    expect(exchanges.map((exchange) => [exchange.status, exchange.error, exchange.usage])).toEqual(
      streams.map(([, , error]) => [200, expect.stringMatching(new RegExp(`^${error}`)), undefined]),
    )
    expect(records.map((record) => [record.status, record.error, record.usage])).toEqual(
      streams.map(([, , error]) => [200, expect.stringMatching(new RegExp(`^${error}`)), undefined]),
    )
    expect(exchanges.every((exchange) => exchange.answer === undefined)).toBe(true)
  })
})

describe('a live answer that is not streamed and holds an error with its 200', () => {
  it('is recorded as a failed attempt, named by its code, and its message is kept out', async () => {
    // OpenRouter's failure once the model has started: a 200 whose body is `{error: {code, message}}`.
    const provider = createServer((incoming, outgoing) => {
      incoming.resume()
      outgoing.writeHead(200, { 'content-type': 'application/json' })
      outgoing.end(JSON.stringify({ error: { code: 502, message: 'the model said: frost at EDDB' } }))
    })
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve))
    const providerURL = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`
    const seen: CapturedExchange[] = []
    const linearizer = new CacheSimulators()
    const server = await startLoopback({
      upstream: 'live',
      port: 0,
      liveBaseURLs: { ...upstream.baseURLs, openai: providerURL },
      capture: new CaptureTracker({
        linearize: (api, body) => linearizer.linearize(api, body),
        sink: (exchange) => seen.push(exchange),
      }),
    })
    try {
      const response = await fetch(`${server.url}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer placeholder' },
        body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: question }] }),
      })
      expect(response.status).toBe(200)
      await response.text()
    } finally {
      await server.close()
      await new Promise<void>((resolve) => provider.close(() => resolve()))
    }
    expect(seen.map((exchange) => [exchange.status, exchange.error, exchange.usage])).toEqual([
      [200, 'error in the answer: 502', undefined],
    ])
    expect(JSON.stringify(seen)).not.toContain('frost at EDDB')
  })
})

describe("the mock's own in-band failure, served without a capture", () => {
  it('is logged as the failed attempt it is, without the usage its first frames carried', async () => {
    const logged: ServeLogRecord[] = []
    const server = await startLoopback({
      upstream: 'sim',
      port: 0,
      faults: [{ fault: { kind: 'stream-error' } }],
      log: (record) => logged.push(record),
    })
    try {
      for (let request = 0; request < 2; request += 1) {
        const response = await fetch(`${server.url}/anthropic/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'placeholder' },
          body: JSON.stringify({ ...streams[0][1] }),
        })
        await response.text()
      }
    } finally {
      await server.close()
    }
    // The first request failed in its stream; the second, the retry, was answered.
    expect(logged.map((record) => [record.status, record.error ?? null, record.usage !== undefined])).toEqual(
      [
        [200, 'error event in the stream: overloaded_error', false],
        [200, null, true],
      ],
    )
  })
})

describe('a live attempt the upstream never answers, or answers with a redirect', () => {
  /** A live serve in front of `openai`, capturing and logging; the client's request through it. */
  async function through(openai: string) {
    const seen: CapturedExchange[] = []
    const logged: ServeLogRecord[] = []
    const linearizer = new CacheSimulators()
    const server = await startLoopback({
      upstream: 'live',
      port: 0,
      liveBaseURLs: { ...upstream.baseURLs, openai },
      log: (record) => logged.push(record),
      capture: new CaptureTracker({
        linearize: (api, body) => linearizer.linearize(api, body),
        sink: (exchange) => seen.push(exchange),
      }),
    })
    try {
      const response = await fetch(`${server.url}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-caller-0123456789abcdef' },
        body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: question }] }),
        redirect: 'manual',
      })
      return { status: response.status, body: await response.text(), seen, logged }
    } finally {
      await server.close()
    }
  }

  it('records a refused connection as a failed attempt and answers 502 in the vendor envelope', async () => {
    // A port that was just free: nothing listens there.
    const vacant = createServer()
    await new Promise<void>((resolve) => vacant.listen(0, '127.0.0.1', resolve))
    const port = (vacant.address() as AddressInfo).port
    await new Promise<void>((resolve) => vacant.close(() => resolve()))
    const { status, body, seen, logged } = await through(`http://127.0.0.1:${port}/v1`)
    expect(status).toBe(502)
    const reason = `cachelab serve: the upstream http://127.0.0.1:${port} could not be reached (ECONNREFUSED)`
    expect(JSON.parse(body)).toMatchObject({ error: { message: reason } })
    expect(seen.map((exchange) => [exchange.status, exchange.error])).toEqual([
      [502, expect.stringContaining('ECONNREFUSED')],
    ])
    expect(logged.map((record) => [record.status, record.error])).toEqual([
      [502, reason.slice('cachelab serve: '.length)],
    ])
  })

  it('never passes a redirect on: to another origin, or one that would drop the body', async () => {
    const stolen: string[] = []
    const elsewhere = createServer((incoming, outgoing) => {
      stolen.push(String(incoming.headers.authorization))
      incoming.resume()
      outgoing.end('{}')
    })
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve))
    const elsewhereURL = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`
    const provider = createServer((incoming, outgoing) => {
      incoming.resume()
      const away = incoming.url?.startsWith('/away') === true
      outgoing.writeHead(away ? 307 : 302, { location: away ? `${elsewhereURL}/steal?key=x` : '/v1/other' })
      outgoing.end()
    })
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve))
    const providerURL = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`
    try {
      const away = await through(`${providerURL}/away`)
      expect(away.status).toBe(502)
      expect(JSON.parse(away.body).error.message).toBe(
        `cachelab serve: the upstream ${providerURL} answered 307, a redirect to ${elsewhereURL}; a redirect is never passed on, so a client's key never follows it`,
      )
      expect(away.seen.map((exchange) => exchange.status)).toEqual([502])
      const found = await through(`${providerURL}/found`)
      expect(found.status).toBe(502)
      expect(found.body).toContain(
        'answered 302, a redirect to its own origin that the proxy does not follow',
      )
    } finally {
      await new Promise<void>((resolve) => provider.close(() => resolve()))
      await new Promise<void>((resolve) => elsewhere.close(() => resolve()))
    }
    expect(stolen).toEqual([])
  })
})
