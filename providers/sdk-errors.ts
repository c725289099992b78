// Failures from either official SDK, mapped into one ProviderError with the SDKs' own retry rules:
// `x-should-retry` decides when present, else 408, 409, 429 and 5xx retry; the delay comes from
// `retry-after-ms`, then `retry-after` (seconds or an HTTP date).

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

/** The delay a response asked for, in milliseconds. */
export function retryAfterMs(headers: Headers | undefined, now: () => number = Date.now): number | undefined {
  const ms = headers?.get('retry-after-ms')
  if (ms !== null && ms !== undefined && ms !== '' && Number.isFinite(Number(ms))) return Number(ms)
  const after = headers?.get('retry-after')
  if (after === null || after === undefined || after === '') return undefined
  const seconds = Number(after)
  if (Number.isFinite(seconds)) return seconds * 1000
  const date = Date.parse(after)
  return Number.isFinite(date) ? Math.max(0, date - now()) : undefined
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

/** Map anything an SDK call threw into a ProviderError. */
export function toProviderError(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error
  if (isSdkApiError(error)) {
    const status = error.status
    const retryAfter = retryAfterMs(error.headers)
    return new ProviderError({
      ...(status !== undefined ? { status } : {}),
      errorType: errorType(error.error, status === undefined ? 'network' : `http_${status}`),
      message: error.message,
      retryable: sdkRetryable(status, error.headers),
      ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
      ...(error.error !== undefined ? { body: error.error as JsonValue } : {}),
    })
  }
  const message = error instanceof Error ? error.message : String(error)
  return new ProviderError({ errorType: 'stream', message, retryable: true })
}
