import { describe, expect, it } from 'vitest'
import {
  bodyCredentials,
  credentialsOf,
  environmentSecrets,
  isForwardedHeader,
  isLoopbackHost,
  looksLikeSecret,
  pathProblem,
  redactText,
} from './serve-safety.ts'

describe('redacting keys from text', () => {
  it.each([
    ['/v1/chat?key=abc123', '/v1/chat?key=[redacted]'],
    ['/v1/chat?api-key=abc&api_key=def&limit=3', '/v1/chat?api-key=[redacted]&api_key=[redacted]&limit=3'],
    [
      '/v1/chat?access_token=a%2Fb&x-goog-api-key=z',
      '/v1/chat?access_token=[redacted]&x-goog-api-key=[redacted]',
    ],
    ['/v1/chat?API_KEY=abc', '/v1/chat?API_KEY=[redacted]'],
    ['/v1/chat?sig=abc#frag', '/v1/chat?sig=[redacted]#frag'],
    ['/v1/models?after=abc', '/v1/models?after=abc'],
  ])('redacts the secret query values of %s', (path, redacted) => {
    expect(redactText(path)).toBe(redacted)
  })

  it('redacts bearer tokens, URL user-info, sk- keys and known secrets anywhere in a message', () => {
    // Made of parts, so no scanner takes this made-up key for a real one.
    const fakeKey = ['sk', 'ant', 'api03', 'abcdefghijklmnopqrstuvwx'].join('-')
    expect(
      redactText(
        `fetch https://me:pw@api.example.com/x failed; Authorization: Bearer tok.123 ${fakeKey} and my-own-secret-key`,
        ['my-own-secret-key'],
      ),
    ).toBe(
      'fetch https://[redacted]@api.example.com/x failed; Authorization: Bearer [redacted] [redacted] and [redacted]',
    )
  })
})

describe('the headers the live proxy forwards', () => {
  it('passes what the provider APIs read', () => {
    for (const name of [
      'Authorization',
      'x-api-key',
      'content-type',
      'accept',
      'anthropic-version',
      'anthropic-beta',
      'openai-organization',
      'x-stainless-retry-count',
      'x-cachelab-session',
      'idempotency-key',
      'user-agent',
      'x-goog-api-key',
      'api-key',
    ])
      expect(isForwardedHeader(name), name).toBe(true)
  })

  it('drops cookies and forwarding headers', () => {
    for (const name of [
      'cookie',
      'x-forwarded-host',
      'x-forwarded-for',
      'forwarded',
      'x-real-ip',
      'host',
      'origin',
      'proxy-authorization',
    ])
      expect(isForwardedHeader(name), name).toBe(false)
  })
})

describe("a request's credentials", () => {
  it('are its key headers and secret-named query values, for redacting what is kept of it', () => {
    const headers = new Headers({
      authorization: 'Bearer caller-token-123',
      'x-goog-api-key': 'gemini-key-456',
      'content-type': 'application/json',
    })
    expect(credentialsOf(headers, '/v1/x?key=query-key-789&alt=sse')).toEqual([
      'caller-token-123',
      'gemini-key-456',
      'query-key-789',
    ])
    expect(redactText('echo: gemini-key-456', credentialsOf(headers, '/'))).toBe('echo: [redacted]')
  })

  it('make a value key-like when it holds a key shape', () => {
    expect(looksLikeSecret('key-sk-proj-0123456789abcdefgh')).toBe(true)
    expect(looksLikeSecret(`AIza${'b'.repeat(35)}`)).toBe(true)
    expect(looksLikeSecret('019a-thread-id-5')).toBe(false)
  })

  it("make a value key-like when it holds one of the request's own keys, whatever its shape", () => {
    expect(looksLikeSecret('user-plain-caller-key-42', ['plain-caller-key-42'])).toBe(true)
    expect(looksLikeSecret('user-plain-caller-key-42', ['another-key-0001'])).toBe(false)
  })

  it('include the values of credential-named body fields, not of prompt_cache_key or token counts', () => {
    const body = {
      model: 'gpt-5.4',
      max_tokens: 64,
      max_completion_tokens: 'sixty-four-tokens',
      prompt_cache_key: 'session-0123456789',
      api_key: 'body-key-0001',
      extra_headers: { Authorization: 'Bearer body-bearer-0002', 'x-api-key': 'body-header-0003' },
      options: { client: { apiKey: 'nested-key-0004' } },
      messages: [{ role: 'user', content: 'hi', api_key: 'content-key-0005' }],
      password: 'short',
    }
    expect(bodyCredentials(body)).toEqual([
      'body-key-0001',
      'body-bearer-0002',
      'body-header-0003',
      'nested-key-0004',
    ])
    expect(bodyCredentials(undefined)).toEqual([])
  })
})

describe("an environment's keys", () => {
  it('are the values of its key variables, for redacting what is printed of a command', () => {
    expect(
      environmentSecrets({
        OPENAI_API_KEY: ' sk-env-openai-0001 ',
        AWS_ACCESS_KEY_ID: 'AKIAENVKEY0002',
        AWS_SECRET_ACCESS_KEY: 'aws-secret-0003',
        AWS_SESSION_TOKEN: 'aws-session-0004',
        OPENAI_BASE_URL: 'http://127.0.0.1:8787/openai/v1',
        GEMINI_API_KEY: '',
        HOME: '/home/someone',
      }),
    ).toEqual(['sk-env-openai-0001', 'AKIAENVKEY0002', 'aws-secret-0003', 'aws-session-0004'])
  })
})

describe('normalised paths', () => {
  it('accepts a provider path with a query', () => {
    expect(pathProblem('/openai/v1/chat/completions?x=../y')).toBeUndefined()
  })

  it.each([
    '/openai/v1/../../x',
    '/openai/v1/%2e%2e/x',
    '/openai/v1/%2E%2E%2Fx',
    '/openai/v1/./chat',
    '/openai/v1//chat',
    '/openai/v1/a%5cb',
    '/openai/v1/%00',
    '/openai/v1/%zz',
    'http://evil.example/openai/v1/chat',
  ])('refuses %s', (path) => {
    expect(pathProblem(path)).toBeDefined()
  })
})

describe('loopback hosts', () => {
  it('are localhost, 127.0.0.0/8 and ::1 only', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1'])
      expect(isLoopbackHost(host), host).toBe(true)
    for (const host of ['0.0.0.0', '::', '192.168.1.2', 'example.com', '128.0.0.1', '127.0.0.1.nip.io'])
      expect(isLoopbackHost(host), host).toBe(false)
  })
})
