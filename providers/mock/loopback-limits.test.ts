// The loopback server's limits and lifecycle: oversized and over-nested bodies and bad control headers
// answered in the provider's shape, the health endpoint, long texts tokenized off the event loop, and a
// close that lets requests in flight finish.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import { CacheSimulators } from '../sim/index.ts'
import { encode, TokenCounter } from '../sim/tokens.ts'
import type { HealthState } from './control.ts'
import { type LoopbackServer, startLoopback } from './loopback.ts'
import { encodeScript } from './script.ts'
import { longStrings, OFFLOAD_CHARACTERS, TokenizerPool } from './tokenizer-pool.ts'

let server: LoopbackServer
const linearizer = new CacheSimulators()

beforeAll(async () => {
  const capture = new CaptureTracker({ linearize: (api, body) => linearizer.linearize(api, body) })
  server = await startLoopback({ upstream: 'sim', port: 0, capture, maxBodyBytes: 64 * 1024 })
})
afterAll(async () => server.close())

const chat = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.baseURLs.openai}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })

const messages = (content: string) => ({ model: 'gpt-5.4', messages: [{ role: 'user', content }] })

/** JSON text of arrays nested `depth` deep (built as text: the client's JSON.stringify would overflow). */
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`

describe('cachelab serve limits', () => {
  it('answers a body past --max-body with the provider-shaped 413, then serves the next request', async () => {
    const refused = await chat(messages('x'.repeat(100 * 1024)))
    expect(refused.status).toBe(413)
    expect(await refused.json()).toMatchObject({ error: { type: 'invalid_request_error' } })
    const anthropic = await fetch(`${server.baseURLs.anthropic}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-6',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'y'.repeat(100 * 1024) }],
      }),
    })
    expect(anthropic.status).toBe(413)
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large' } })
    expect((await chat(messages('hello'))).status).toBe(200)
  })

  it('answers deeply nested tool parameters and content with a 400, not a stack overflow', async () => {
    const parameters = await chat(
      `{"model":"gpt-5.4","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"deep","parameters":{"type":"object","properties":${nested(20_000)}}}}]}`,
    )
    expect(parameters.status).toBe(400)
    expect(await parameters.json()).toMatchObject({ error: { type: 'invalid_request_error' } })
    const content = await chat(`{"model":"gpt-5.4","messages":[{"role":"user","content":${nested(25_000)}}]}`)
    expect(content.status).toBe(400)
  })

  it('refuses an x-cachelab-at that is negative or past any real session, and a script without blocks', async () => {
    for (const at of ['1e308', '-5', 'soon']) {
      const response = await chat(messages('hi'), { 'x-cachelab-at': at })
      expect(response.status, at).toBe(400)
    }
    const script = encodeScript({ role: 'assistant', content: 'not blocks' } as never)
    const response = await chat(messages('hi'), { 'x-cachelab-script': script })
    expect(response.status).toBe(400)
    expect(JSON.stringify(await response.json())).toContain('array of blocks')
  })

  it('reports its health: status, load and memory', async () => {
    const response = await fetch(`${server.url}/cachelab/health`)
    expect(response.status).toBe(200)
    const health = (await response.json()) as HealthState
    expect(health).toMatchObject({ status: 'ok', upstream: 'sim', requests: { inFlight: 1 } })
    expect(health.requests.served).toBeGreaterThan(0)
    expect(health.memory.rssBytes).toBeGreaterThan(0)
    expect(health.memory.capture?.sessions).toBeGreaterThan(0)
    expect((await fetch(`${server.url}/cachelab/health`, { method: 'POST' })).status).toBe(405)
  })
})

describe('closing cachelab serve', () => {
  it('lets a request in flight finish, refuses new ones meanwhile, and reports draining', async () => {
    const own = await startLoopback({ upstream: 'sim', port: 0 })
    // A body that arrives slowly keeps the request in flight while close begins.
    const body = JSON.stringify(messages('a slow request'))
    let push: ((chunk: Uint8Array) => void) | undefined
    let end: (() => void) | undefined
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (chunk) => controller.enqueue(chunk)
        end = () => controller.close()
      },
    })
    const slow = fetch(`${own.baseURLs.openai}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
      body: stream,
      duplex: 'half',
    } as RequestInit)
    push?.(new TextEncoder().encode(body.slice(0, 10)))
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(own.health().requests.inFlight).toBe(1)
    const closed = own.close()
    expect(own.health().status).toBe('draining')
    push?.(new TextEncoder().encode(body.slice(10)))
    end?.()
    const answer = await slow
    expect(answer.status).toBe(200)
    const answered = (await answer.json()) as { usage: { prompt_tokens: number } }
    expect(answered.usage.prompt_tokens).toBeGreaterThan(0)
    await closed
  })
})

describe('tokenizing off the event loop', () => {
  it('finds the long strings of a body, however deep', () => {
    const long = 'z'.repeat(OFFLOAD_CHARACTERS)
    expect(longStrings({ a: [{ b: long }, 'short'], c: long.slice(1) })).toEqual([long])
  })

  it('never tokenizes a long text on the main thread, even when the memo has no room for its tokens', async () => {
    // A memo far smaller than the text's tokens: only the request's hold keeps them for its simulation.
    const counter = new TokenCounter({ countBytes: 4 * 1024 * 1024, arrayBytes: 16 * 1024 })
    const own = await startLoopback({ upstream: 'sim', port: 0, simulator: { counter } })
    try {
      const long = 'A long file line that the model is asked to review closely. '.repeat(2_000)
      for (const content of [long, `${long} And one more line.`, long]) {
        const answer = await fetch(`${own.baseURLs.openai}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
          body: JSON.stringify(messages(content)),
        })
        expect(answer.status).toBe(200)
        expect(((await answer.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens).toBe(
          encode(content).length + 3 + 3,
        )
      }
      expect(counter.knownTokens(long)).toBeUndefined()
      expect(counter.longestEncoded).toBeLessThan(OFFLOAD_CHARACTERS)
      expect(counter.heldTexts).toBe(0)
    } finally {
      await own.close()
    }
  })

  it("puts a worker's tokens in the counter's memo, equal to counting inline", async () => {
    const counter = new TokenCounter()
    const pool = new TokenizerPool(counter, 1)
    const text = `${'The quick brown fox jumps over the lazy dog. '.repeat(1_000)}<|endoftext|>`
    await pool.prepare({ messages: [{ content: text }] })
    await pool.close()
    expect(counter.encodeCalls).toBe(0)
    expect(counter.count(text)).toBe(encode(text).length)
    expect(Array.from(counter.tokens(text))).toEqual(encode(text))
  })
})
