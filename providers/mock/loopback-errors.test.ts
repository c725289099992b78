// Every error the loopback server answers on a vendor's prefix is in that vendor's own envelope, whether
// the server answers it itself (unknown path, body too large or too deep, unsafe path) or a handler does
// (malformed JSON): Anthropic `{type, error: {type, message}}`, Google `{error: {code, message, status}}`,
// Bedrock `{message}` with `x-amzn-errortype`, the OpenAI envelope for OpenAI and DeepSeek.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LoopbackServer, startLoopback } from './loopback.ts'

let server: LoopbackServer
beforeAll(async () => {
  server = await startLoopback({ upstream: 'sim', port: 0, maxBodyBytes: 16 * 1024 })
})
afterAll(async () => server.close())

interface Prefix {
  vendor: string
  /** The vendor's prefix on the server. */
  prefix: string
  /** An API path under the prefix that takes a POST. */
  api: string
  /** The envelope every error under the prefix has. */
  envelope: (status: number) => Record<string, unknown>
  /** The error type header, when the vendor sends one. */
  typeHeader?: RegExp
}

const openAIShape = () => ({
  error: { message: expect.any(String), type: expect.any(String), param: null, code: null },
})

const PREFIXES: Prefix[] = [
  {
    vendor: 'anthropic',
    prefix: '/anthropic',
    api: '/anthropic/v1/messages',
    envelope: () => ({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } }),
  },
  { vendor: 'openai', prefix: '/openai/v1', api: '/openai/v1/chat/completions', envelope: openAIShape },
  { vendor: 'deepseek', prefix: '/deepseek', api: '/deepseek/chat/completions', envelope: openAIShape },
  {
    vendor: 'gemini',
    prefix: '/gemini',
    api: '/gemini/v1beta/models/gemini-2.5-flash:generateContent',
    envelope: (status) => ({
      error: { code: status, message: expect.any(String), status: expect.any(String) },
    }),
  },
  {
    vendor: 'bedrock',
    prefix: '/bedrock',
    api: '/bedrock/model/amazon.nova-lite-v1%3A0/converse',
    envelope: () => ({ message: expect.any(String) }),
    typeHeader: /^\w+Exception:/,
  },
]

async function post(path: string, body: string) {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'cachelab-test-key' },
    body,
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: JSON.parse(text) as unknown }
}

describe.each(PREFIXES)("errors under $vendor's prefix", ({ vendor, prefix, api, envelope, typeHeader }) => {
  const cases: Array<{ what: string; path: string; body: string; status: number }> = [
    { what: 'an unknown path', path: `${prefix}/v9/nothing-here`, body: '{}', status: 404 },
    {
      what: 'a body past --max-body',
      path: api,
      body: JSON.stringify({ pad: 'x'.repeat(32 * 1024) }),
      status: 413,
    },
    {
      what: 'a body nested too deep',
      path: api,
      body: `{"a":${'['.repeat(200)}${']'.repeat(200)}}`,
      status: 400,
    },
    { what: 'malformed JSON', path: api, body: '{"model": ', status: 400 },
    { what: 'a path with an empty segment', path: `${prefix}/v1//models`, body: '{}', status: 400 },
  ]
  it.each(cases)(`answers $what with its status in ${vendor}'s envelope`, async ({ path, body, status }) => {
    const answer = await post(path, body)
    expect(answer.status).toBe(status)
    // Anthropic's handler adds the request id its API sends beside the envelope.
    const { request_id: _requestId, ...envelopeOnly } = answer.body as Record<string, unknown>
    expect(envelopeOnly).toEqual(envelope(status))
    if (typeHeader !== undefined) expect(answer.headers.get('x-amzn-errortype')).toMatch(typeHeader)
  })
})

describe('errors under no prefix', () => {
  it('answers a path under no vendor with a 404 naming the prefixes', async () => {
    const answer = await post('/nowhere/v1/messages', '{}')
    expect(answer.status).toBe(404)
    expect(answer.body).toMatchObject({ error: { message: expect.stringContaining('/gemini') } })
  })
})
