import { connect } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import { compatibleProvider } from '../compatible.ts'
import { CacheSimulators } from '../sim/index.ts'
import type { CapturedExchange } from '../wire/exchange.ts'
import { type LoopbackServer, type ServeLogRecord, startLoopback } from './loopback.ts'
import { loopbackRoutes } from './loopback-routes.ts'
import { TIME_HEADER } from './script.ts'

/** One request as it goes on the wire: method, path, extra header lines and the body text. */
interface Sent {
  method: string
  path: string
  headers?: Record<string, string>
  body?: string
}

/** What one server gave: each raw HTTP answer (its Date line left out), the exchanges and the log. */
interface Served {
  answers: string[]
  exchanges: unknown[]
  log: unknown[]
}

const system = fillerText(600, 'direct-system')
const json = (value: unknown) => JSON.stringify(value)

/** A body of each wire, for a model of it. */
const chat = (model: string, extra: Record<string, unknown> = {}) =>
  json({
    model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: 'hello' },
    ],
    ...extra,
  })
const messages = (model: string, extra: Record<string, unknown> = {}) =>
  json({
    model,
    max_tokens: 64,
    system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: 'hello' }],
    ...extra,
  })
const gemini = json({
  systemInstruction: { parts: [{ text: system }] },
  contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
})
const converse = json({ system: [{ text: system }], messages: [{ role: 'user', content: [{ text: 'hi' }] }] })

/** The model a route's vendor is asked about. */
function modelOf(vendor: string): string {
  switch (vendor) {
    case 'openai':
      return 'gpt-5.4'
    case 'anthropic':
      return 'claude-sonnet-4-6'
    case 'deepseek':
      return 'deepseek-chat'
    case 'gemini':
      return 'gemini-2.5-flash'
    case 'bedrock':
      return 'anthropic.claude-sonnet-4-6'
    default:
      return compatibleProvider(vendor as Parameters<typeof compatibleProvider>[0]).defaultModel
  }
}

/**
 * Every route's endpoints (each wire, streamed and not, the model listings), the same endpoints under the
 * routes that do not serve them, and the refusals: validation, faults, bad headers, bodies that do not
 * parse or nest too deep or are too large, paths no handler or no prefix serves, methods no handler takes,
 * a model name that is one escaped segment, and a client's own placement and exchange headers.
 */
function traffic(): Sent[] {
  const sent: Sent[] = []
  for (const { prefix, vendor } of loopbackRoutes()) {
    const model = modelOf(vendor)
    for (const path of ['/chat/completions', '/messages', '/v1/messages', '/responses']) {
      const body = path.endsWith('messages') ? messages(model) : chat(model)
      sent.push({ method: 'POST', path: `${prefix}${path}`, body })
      sent.push({ method: 'POST', path: `${prefix}${path}`, body: body.replace('{', '{"stream":true,') })
    }
    sent.push({ method: 'GET', path: `${prefix}/models` })
    sent.push({ method: 'GET', path: `${prefix}/models/${encodeURIComponent(model)}` })
    sent.push({ method: 'GET', path: `${prefix}/v1/models?limit=2` })
  }
  const openai = '/openai/v1'
  sent.push(
    {
      method: 'POST',
      path: `${openai}/chat/completions`,
      body: chat('gpt-5.4', { stream: true, stream_options: { include_usage: true } }),
    },
    {
      method: 'POST',
      path: `${openai}/responses`,
      body: json({ model: 'gpt-5.4', instructions: system, input: 'hi', store: true }),
    },
    {
      method: 'POST',
      path: `${openai}/responses`,
      body: json({ model: 'gpt-5.4', previous_response_id: 'resp_nowhere', input: 'again' }),
    },
    // Refusals the handlers make: validation, a fault, a bad fault, script and time header.
    {
      method: 'POST',
      path: `${openai}/chat/completions`,
      body: json({ messages: [{ role: 'user', content: 'x' }] }),
    },
    { method: 'POST', path: `${openai}/chat/completions`, body: json({ model: 'gpt-5.4', messages: [] }) },
    {
      method: 'POST',
      path: `${openai}/chat/completions`,
      body: chat('gpt-5.4', { prompt_cache_retention: 'someday' }),
    },
    {
      method: 'POST',
      path: `${openai}/chat/completions`,
      headers: { 'x-cachelab-fault': '429;retry-after-ms=10' },
      body: chat('gpt-5.4'),
    },
    {
      method: 'POST',
      path: `${openai}/chat/completions`,
      headers: { 'x-cachelab-fault': 'stream-cut;after-frames=2' },
      body: chat('gpt-5.4', { stream: true }),
    },
    {
      method: 'POST',
      path: `${openai}/chat/completions`,
      headers: { 'x-cachelab-fault': 'crash' },
      body: chat('gpt-5.4'),
    },
    {
      method: 'POST',
      path: `${openai}/chat/completions`,
      headers: { 'x-cachelab-fault': '500' },
      body: chat('gpt-5.4'),
    },
    {
      method: 'POST',
      path: `${openai}/chat/completions`,
      headers: { 'x-cachelab-script': '!!' },
      body: chat('gpt-5.4'),
    },
    {
      method: 'POST',
      path: `${openai}/chat/completions`,
      headers: { [TIME_HEADER]: '-5' },
      body: chat('gpt-5.4'),
    },
    // Bodies the server cannot read, or refuses.
    { method: 'POST', path: `${openai}/chat/completions`, body: '{not json' },
    { method: 'POST', path: `${openai}/chat/completions`, body: `\uFEFF${chat('gpt-5.4')}` },
    { method: 'POST', path: `${openai}/chat/completions`, body: '[1,2]' },
    { method: 'POST', path: `${openai}/chat/completions`, body: '"text"' },
    { method: 'POST', path: `${openai}/chat/completions`, body: `${'['.repeat(200)}${']'.repeat(200)}` },
    {
      method: 'POST',
      path: `${openai}/chat/completions`,
      body: chat('gpt-5.4', { deep: JSON.parse(`${'['.repeat(200)}${']'.repeat(200)}`) }),
    },
    {
      method: 'POST',
      path: `${openai}/chat/completions`,
      body: chat('gpt-5.4', { padding: 'x'.repeat(70_000) }),
    },
    { method: 'POST', path: `${openai}/chat/completions` },
    // Paths and methods: no handler, another case, a trailing slash, a query, no prefix, a climb.
    { method: 'POST', path: `${openai}/nothing`, body: '{}' },
    { method: 'GET', path: `${openai}/chat/completions` },
    { method: 'PUT', path: `${openai}/chat/completions`, body: chat('gpt-5.4') },
    { method: 'DELETE', path: `${openai}/chat/completions`, body: chat('gpt-5.4') },
    { method: 'POST', path: `${openai}/CHAT/Completions`, body: chat('gpt-5.4') },
    { method: 'POST', path: `${openai}/chat/completions/`, body: chat('gpt-5.4') },
    {
      method: 'POST',
      path: `${openai}/chat/completions?api-version=1&key=sk-test-direct-0123456789abcdef`,
      body: chat('gpt-5.4'),
    },
    { method: 'POST', path: '/nowhere', body: '{}' },
    { method: 'POST', path: `${openai}/../chat/completions`, body: '{}' },
    // A client's own placement and exchange headers: dropped, and never a way to another request's body.
    {
      method: 'POST',
      path: `${openai}/chat/completions`,
      headers: { 'x-cachelab-place': '1', 'x-cachelab-exchange': '1' },
      body: chat('gpt-5.4'),
    },
  )
  const geminiRoot = '/gemini/v1beta'
  sent.push(
    { method: 'POST', path: `${geminiRoot}/models/gemini-2.5-flash:generateContent`, body: gemini },
    {
      method: 'POST',
      path: `${geminiRoot}/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
      body: gemini,
    },
    { method: 'POST', path: `${geminiRoot}/models/gemini-2.5-flash:countTokens`, body: gemini },
    { method: 'POST', path: `${geminiRoot}/models/%E0%A4%A:generateContent`, body: gemini },
    { method: 'POST', path: `${geminiRoot}/models/gemini-2.5-flash%3AgenerateContent`, body: gemini },
    {
      method: 'POST',
      path: `${geminiRoot}/models/gemini-2.5-flash:generateContent`,
      body: json({ contents: [] }),
    },
    {
      method: 'POST',
      path: `${geminiRoot}/cachedContents`,
      body: json({
        model: 'models/gemini-2.5-flash',
        contents: [{ role: 'user', parts: [{ text: fillerText(5000, 'direct-cache') }] }],
        ttl: '300s',
      }),
    },
    { method: 'GET', path: `${geminiRoot}/cachedContents` },
    { method: 'GET', path: `${geminiRoot}/cachedContents/nowhere` },
    { method: 'PATCH', path: `${geminiRoot}/cachedContents/nowhere`, body: json({ ttl: '60s' }) },
    { method: 'DELETE', path: `${geminiRoot}/cachedContents/nowhere` },
    { method: 'POST', path: '/bedrock/model/anthropic.claude-sonnet-4-6/converse', body: converse },
    {
      method: 'POST',
      path: '/bedrock/model/anthropic.claude-sonnet-4-6%3A0/converse-stream',
      body: converse,
    },
    { method: 'POST', path: '/bedrock/model/anthropic.claude-sonnet-4-6/invoke', body: converse },
    { method: 'POST', path: '/anthropic/v1/messages', body: messages('claude-sonnet-4-6', { stream: true }) },
    {
      method: 'POST',
      path: '/anthropic/v1/messages',
      headers: { 'x-cachelab-fault': '529' },
      body: messages('claude-sonnet-4-6'),
    },
    {
      method: 'POST',
      path: '/anthropic/v1/messages',
      body: messages('claude-sonnet-4-6', { max_tokens: 'many' }),
    },
  )
  // The same requests again: sessions go on, the Responses store and the caches hold what came before.
  return [...sent, ...sent]
}

/** Send one request on a connection of its own and read the whole answer as it came, bytes and framing. */
function exchange(server: LoopbackServer, request: Sent, at: number): Promise<string> {
  const { port } = new URL(server.url)
  const body = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8')
  const head = [
    `${request.method} ${request.path} HTTP/1.1`,
    `host: 127.0.0.1:${port}`,
    'connection: close',
    'content-type: application/json',
    'authorization: Bearer sk-test-direct-0123456789abcdef',
    'x-cachelab-session: direct',
    `${TIME_HEADER}: ${at}`,
    ...Object.entries(request.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    ...(body !== undefined ? [`content-length: ${body.length}`] : []),
  ]
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1')
    const parts: Buffer[] = []
    socket.on('data', (part: Buffer) => parts.push(part))
    socket.on('end', () =>
      resolve(
        Buffer.concat(parts)
          .toString('latin1')
          .replace(/\r\ndate: [^\r]*/i, ''),
      ),
    )
    socket.on('error', reject)
    socket.write(`${head.join('\r\n')}\r\n\r\n`)
    if (body !== undefined) socket.write(body)
  })
}

/** Serve the traffic on a fresh server, its handlers called directly or through MSW. */
async function serve(directHandlers: boolean, sent: readonly Sent[]): Promise<Served> {
  const exchanges: CapturedExchange[] = []
  const log: ServeLogRecord[] = []
  const linearizer = new CacheSimulators()
  const capture = new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    sink: (captured) => exchanges.push(captured),
    keepBodies: true,
  })
  const server = await startLoopback({
    upstream: 'sim',
    port: 0,
    capture,
    log: (record) => log.push(record),
    maxBodyBytes: 64 * 1024,
    directHandlers,
  })
  const answers: string[] = []
  try {
    for (const [index, request] of sent.entries()) answers.push(await exchange(server, request, index * 7))
  } finally {
    await server.close()
  }
  const timeless = ({ time: _time, latencyMs: _latency, ...rest }: { time?: string; latencyMs?: number }) =>
    rest
  return { answers, exchanges: exchanges.map(timeless), log: log.map(timeless) }
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('serve calling the handlers directly', () => {
  it('answers every route, wire and refusal byte for byte as through MSW, and captures and logs the same', async () => {
    // The server's own clock stands still: a request no handler times (a 404) is at the same time on both.
    vi.spyOn(Date, 'now').mockReturnValue(Date.parse('2026-12-05T00:00:00Z'))
    const sent = traffic()
    const msw = await serve(false, sent)
    const direct = await serve(true, sent)
    const statuses = msw.answers.map((answer) => answer.slice(9, 12))
    // The traffic reaches the handlers and their refusals, not only the server's own errors.
    expect(statuses.filter((status) => status === '200').length).toBeGreaterThan(100)
    for (const status of ['400', '404', '413', '429', '500', '529']) expect(statuses).toContain(status)
    expect(msw.exchanges.length).toBeGreaterThan(100)
    for (const [index, answer] of direct.answers.entries())
      expect(answer, `${sent[index]?.method} ${sent[index]?.path}`).toBe(msw.answers[index])
    for (const [index, captured] of direct.exchanges.entries())
      expect(captured, String(index)).toEqual(msw.exchanges[index])
    expect(direct.log).toEqual(msw.log)
  }, 60_000)
})
