// Failures from either official SDK, mapped into one ProviderError with the SDKs' own retry rules:
// `x-should-retry` decides when present, else 408, 409, 429 and 5xx retry, as do connection failures
// (never a user abort); the delay comes from `retry-after-ms`, then `retry-after` (seconds or an HTTP date).

import type { JsonValue } from '../harness/types.ts'
import { ProviderError } from './types.ts'

interface SdkApiError {
  status: number | undefined
  headers: Headers | undefined
  error: unknown
  message: string
}

function isSdkApiError(error: unknown): error is SdkApiError {
  return (
    typeof error === 'object' && error !== null && 'status' in error && 'headers' in error && 'error' in error
  )
}

/** Whether the SDKs retry a response with this status and headers. */
export function sdkRetryable(status: number | undefined, headers: Headers | undefined): boolean {
  const directive = headers?.get('x-should-retry')
  if (directive === 'true') return true
  if (directive === 'false') return false
  if (status === undefined) return true
  return status === 408 || status === 409 || status === 429 || status >= 500
}

/** The longest delay one timer can hold; the SDKs use their own backoff for anything longer. */
const maxTimerMs = 2 ** 31 - 1

/**
 * The delay a response asked for, in milliseconds, read as the SDKs' `retryRequest` reads it:
 * `retry-after-ms` (parseFloat), and when that is absent, unreadable or 0, `retry-after` (seconds, else
 * an HTTP date from `now`). A delay that is not positive or does not fit one timer (0, a past date, an
 * unreadable date) is `undefined`, so the caller's default backoff applies, as in @anthropic-ai/sdk
 * (openai 6.x instead sleeps such a delay as is, i.e. retries at once).
 */
export function retryAfterMs(headers: Headers | undefined, now: () => number = Date.now): number | undefined {
  let delay: number | undefined
  const ms = headers?.get('retry-after-ms')
  if (ms) {
    const parsed = Number.parseFloat(ms)
    if (!Number.isNaN(parsed)) delay = parsed
  }
  const after = headers?.get('retry-after')
  if (after && !delay) {
    const seconds = Number.parseFloat(after)
    delay = Number.isNaN(seconds) ? Date.parse(after) - now() : seconds * 1000
  }
  return delay !== undefined && delay > 0 && delay <= maxTimerMs ? delay : undefined
}

/**
 * Whether the caller aborted the request, which neither SDK retries. Both SDKs throw their own class of
 * that name; it is told by the name so this module loads without either SDK (they are optional peers).
 */
function isUserAbort(error: unknown): boolean {
  return (error as { constructor?: { name?: unknown } }).constructor?.name === 'APIUserAbortError'
}

/** The provider's error type from an error body (`{error: {type}}` for OpenAI and Anthropic alike). */
function errorType(body: unknown, fallback: string): string {
  if (typeof body === 'object' && body !== null) {
    const record = body as Record<string, unknown>
    if (typeof record.type === 'string' && record.type !== 'error') return record.type
    const inner = record.error
    if (
      typeof inner === 'object' &&
      inner !== null &&
      typeof (inner as Record<string, unknown>).type === 'string'
    ) {
      return (inner as Record<string, string>).type ?? fallback
    }
  }
  return fallback
}

/** Map anything an SDK call threw into a ProviderError; `now` dates an HTTP-date `retry-after`. */
export function toProviderError(error: unknown, now: () => number = Date.now): ProviderError {
  if (error instanceof ProviderError) return error
  if (isSdkApiError(error)) {
    const status = error.status
    const retryAfter = retryAfterMs(error.headers, now)
    return new ProviderError({
      ...(status !== undefined ? { status } : {}),
      errorType: errorType(error.error, status === undefined ? 'network' : `http_${status}`),
      message: error.message,
      retryable: !isUserAbort(error) && sdkRetryable(status, error.headers),
      ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
      ...(error.error !== undefined ? { body: error.error as JsonValue } : {}),
    })
  }
  const message = error instanceof Error ? error.message : String(error)
  return new ProviderError({ errorType: 'stream', message, retryable: true })
}
