import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { retryAfterMs, sdkRetryable, toProviderError } from './sdk-errors.ts'
import { ProviderError } from './types.ts'

/** OpenAI's error envelope; the SDK keeps only the inner object as `error.error`. */
const openAIBody = (message: string, type: string, code: string | null) => ({
  error: { message, type, param: null, code },
})
/** Anthropic's error envelope; the SDK keeps all of it as `error.error`. */
const anthropicBody = (type: string, message: string) => ({ type: 'error', error: { type, message } })

afterEach(() => {
  vi.useRealTimers()
})

describe('toProviderError over the openai SDK errors', () => {
  const generate = (status: number, body: object | undefined, headers: Record<string, string> = {}) =>
    OpenAI.APIError.generate(status, body, 'No body.', new Headers(headers))

  it('maps a 429 to a retryable rate limit with the retry-after-ms delay and the inner body', () => {
    const body = openAIBody('Rate limit reached for requests.', 'requests', 'rate_limit_exceeded')
    const thrown = generate(429, body, { 'retry-after-ms': '1500', 'retry-after': '2' })
    expect(thrown).toBeInstanceOf(OpenAI.RateLimitError)
    const error = toProviderError(thrown)
    expect(error).toBeInstanceOf(ProviderError)
    expect(error).toMatchObject({
      kind: 'provider',
      status: 429,
      errorType: 'requests',
      message: '429 Rate limit reached for requests.',
      retryable: true,
      retryAfterMs: 1500,
      body: body.error,
    })
  })

  const statuses: Array<{ status: number; type: string; retryable: boolean; sdkClass: unknown }> = [
    { status: 400, type: 'invalid_request_error', retryable: false, sdkClass: OpenAI.BadRequestError },
    { status: 401, type: 'invalid_request_error', retryable: false, sdkClass: OpenAI.AuthenticationError },
    { status: 404, type: 'invalid_request_error', retryable: false, sdkClass: OpenAI.NotFoundError },
    { status: 408, type: 'timeout', retryable: true, sdkClass: OpenAI.APIError },
    { status: 409, type: 'conflict', retryable: true, sdkClass: OpenAI.ConflictError },
    { status: 500, type: 'server_error', retryable: true, sdkClass: OpenAI.InternalServerError },
    { status: 503, type: 'server_error', retryable: true, sdkClass: OpenAI.InternalServerError },
  ]
  for (const { status, type, retryable, sdkClass } of statuses) {
    it(`maps a ${status} with the SDK's retry rule (retryable: ${retryable})`, () => {
      const thrown = generate(status, openAIBody('Failed.', type, null))
      expect(thrown).toBeInstanceOf(sdkClass as typeof OpenAI.APIError)
      const error = toProviderError(thrown)
      expect(error).toMatchObject({ status, errorType: type, retryable })
      expect(error.retryAfterMs).toBeUndefined()
    })
  }

  it('lets x-should-retry override the status rule either way', () => {
    expect(toProviderError(generate(400, undefined, { 'x-should-retry': 'true' })).retryable).toBe(true)
    expect(toProviderError(generate(503, undefined, { 'x-should-retry': 'false' })).retryable).toBe(false)
  })

  it('names a response without a body by its status and carries no body', () => {
    const error = toProviderError(generate(502, undefined))
    expect(error).toMatchObject({ status: 502, errorType: 'http_502', message: '502 No body.' })
    expect(error.body).toBeUndefined()
  })

  it('maps connection failures and timeouts to retryable network errors without a status', () => {
    for (const [thrown, message] of [
      [new OpenAI.APIConnectionError({ message: 'Connection error.' }), 'Connection error.'],
      [new OpenAI.APIConnectionTimeoutError(), 'Request timed out.'],
      [OpenAI.APIError.generate(undefined, undefined, 'fetch failed', undefined), 'fetch failed'],
    ] as const) {
      const error = toProviderError(thrown)
      expect(error).toMatchObject({ errorType: 'network', message, retryable: true })
      expect(error.status).toBeUndefined()
      expect(error.retryAfterMs).toBeUndefined()
    }
  })

  it('maps a user abort to a terminal network error without a status, as the SDK never retries it', () => {
    const error = toProviderError(new OpenAI.APIUserAbortError())
    expect(error).toMatchObject({ errorType: 'network', message: 'Request was aborted.', retryable: false })
    expect(error.status).toBeUndefined()
  })

  it('treats a retry-after-ms of 0 as absent, falling back to retry-after', () => {
    const thrown = generate(429, undefined, { 'retry-after-ms': '0', 'retry-after': '2' })
    expect(toProviderError(thrown).retryAfterMs).toBe(2000)
  })
})

describe('toProviderError over the anthropic SDK errors', () => {
  const generate = (status: number, type: string, headers: Record<string, string> = {}) =>
    Anthropic.APIError.generate(status, anthropicBody(type, 'Failed.'), undefined, new Headers(headers))

  it('maps a 529 to a retryable overloaded_error and keeps the whole envelope as the body', () => {
    const thrown = generate(529, 'overloaded_error')
    expect(thrown).toBeInstanceOf(Anthropic.OverloadedError)
    expect(toProviderError(thrown)).toMatchObject({
      status: 529,
      errorType: 'overloaded_error',
      retryable: true,
      body: anthropicBody('overloaded_error', 'Failed.'),
    })
  })

  it('maps a 429 with only retry-after (seconds) to its delay in milliseconds', () => {
    const thrown = generate(429, 'rate_limit_error', { 'retry-after': '3' })
    expect(thrown).toBeInstanceOf(Anthropic.RateLimitError)
    expect(toProviderError(thrown)).toMatchObject({ errorType: 'rate_limit_error', retryAfterMs: 3000 })
  })

  it('maps a 401 to a terminal authentication_error', () => {
    const thrown = generate(401, 'authentication_error')
    expect(thrown).toBeInstanceOf(Anthropic.AuthenticationError)
    expect(toProviderError(thrown)).toMatchObject({ errorType: 'authentication_error', retryable: false })
  })

  it('reads an HTTP-date retry-after against the injected clock', () => {
    const now = () => Date.parse('2026-01-01T00:00:00Z')
    const thrown = generate(529, 'overloaded_error', { 'retry-after': 'Thu, 01 Jan 2026 00:00:07 GMT' })
    expect(toProviderError(thrown, now).retryAfterMs).toBe(7000)
  })

  it('reads an HTTP-date retry-after against the system clock by default', () => {
    vi.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00Z') })
    const thrown = generate(529, 'overloaded_error', { 'retry-after': 'Thu, 01 Jan 2026 00:00:07 GMT' })
    expect(toProviderError(thrown).retryAfterMs).toBe(7000)
  })

  it('maps connection failures and timeouts to retryable network errors without a status', () => {
    for (const thrown of [
      new Anthropic.APIConnectionError({ message: 'Connection error.' }),
      new Anthropic.APIConnectionTimeoutError(),
    ]) {
      const error = toProviderError(thrown)
      expect(error).toMatchObject({ errorType: 'network', message: thrown.message, retryable: true })
      expect(error.status).toBeUndefined()
    }
  })

  it('maps a user abort to a terminal network error without a status, as the SDK never retries it', () => {
    const error = toProviderError(new Anthropic.APIUserAbortError())
    expect(error).toMatchObject({ errorType: 'network', message: 'Request was aborted.', retryable: false })
    expect(error.status).toBeUndefined()
  })
})

describe('toProviderError on anything else', () => {
  it('returns a ProviderError unchanged', () => {
    const original = new ProviderError({ errorType: 'server_error', message: 'in-band', retryable: true })
    expect(toProviderError(original)).toBe(original)
  })

  it('maps a plain error or a thrown value to a retryable stream error', () => {
    expect(toProviderError(new TypeError('terminated'))).toMatchObject({
      errorType: 'stream',
      message: 'terminated',
      retryable: true,
    })
    expect(toProviderError('socket hang up')).toMatchObject({
      errorType: 'stream',
      message: 'socket hang up',
    })
  })
})

describe('retryAfterMs', () => {
  const now = () => Date.parse('2026-01-01T00:00:00Z')
  const cases: Array<[name: string, headers: Record<string, string> | undefined, ms: number | undefined]> = [
    ['retry-after-ms wins over retry-after', { 'retry-after-ms': '250', 'retry-after': '9' }, 250],
    ['a fractional retry-after-ms is kept', { 'retry-after-ms': '12.5' }, 12.5],
    ['retry-after is in seconds', { 'retry-after': '2' }, 2000],
    ['fractional seconds', { 'retry-after': '0.5' }, 500],
    ['a non-numeric retry-after-ms falls back', { 'retry-after-ms': 'soon', 'retry-after': '1' }, 1000],
    ['a retry-after-ms of 0 is absent', { 'retry-after-ms': '0', 'retry-after': '3' }, 3000],
    ['a retry-after-ms of 0 alone leaves the default backoff', { 'retry-after-ms': '0' }, undefined],
    ['a retry-after of 0 leaves the default backoff', { 'retry-after': '0' }, undefined],
    ['a negative retry-after-ms leaves the default backoff', { 'retry-after-ms': '-5' }, undefined],
    [
      'a negative retry-after-ms shadows retry-after',
      { 'retry-after-ms': '-5', 'retry-after': '1' },
      undefined,
    ],
    ['numbers are read with parseFloat', { 'retry-after-ms': '250ms' }, 250],
    ['an HTTP date, from now', { 'retry-after': 'Thu, 01 Jan 2026 00:00:04 GMT' }, 4000],
    [
      'a past HTTP date leaves the default backoff',
      { 'retry-after': 'Wed, 31 Dec 2025 23:59:00 GMT' },
      undefined,
    ],
    [
      'a delay longer than one timer leaves the default backoff',
      { 'retry-after-ms': '2147483648' },
      undefined,
    ],
    ['an unreadable retry-after', { 'retry-after': 'later' }, undefined],
    ['no delay headers', {}, undefined],
    ['no headers at all', undefined, undefined],
  ]
  for (const [name, headers, ms] of cases) {
    it(name, () => {
      expect(retryAfterMs(headers === undefined ? undefined : new Headers(headers), now)).toBe(ms)
    })
  }
})

describe('sdkRetryable', () => {
  it('ignores an x-should-retry value other than true or false', () => {
    expect(sdkRetryable(400, new Headers({ 'x-should-retry': 'maybe' }))).toBe(false)
    expect(sdkRetryable(529, new Headers({ 'x-should-retry': 'maybe' }))).toBe(true)
  })
})
