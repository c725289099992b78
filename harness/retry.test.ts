import { describe, expect, it } from 'vitest'
import { type Random, seededRandom } from './random.ts'
import { retryDelayMs } from './retry.ts'

/** A generator that always draws `value`: 0 is no jitter, 0.999 is the most the jitter can take. */
const fixed = (value: number): Random => ({ next: () => value })

describe('retry delays', () => {
  it('follow retry-after-ms when given, else back off from 0.5 s with jitter', () => {
    const random = seededRandom(3)
    expect(retryDelayMs(0, 1234, random)).toBe(1234)
    const delay = retryDelayMs(0, undefined, random)
    expect(delay).toBeGreaterThan(375)
    expect(delay).toBeLessThanOrEqual(500)
    expect(retryDelayMs(10, undefined, random)).toBeLessThanOrEqual(8000)
  })

  it.each([1, 1234, 12.5, 59_999, 60_000, 120_000, 2 ** 31 - 1])(
    'honour a retry-after-ms of %d exactly, whatever the attempt',
    (retryAfterMs) => {
      expect(retryDelayMs(0, retryAfterMs, fixed(0.5))).toBe(retryAfterMs)
      expect(retryDelayMs(5, retryAfterMs, fixed(0.5))).toBe(retryAfterMs)
    },
  )

  // @anthropic-ai/sdk 1.14 client.ts retryRequest: a delay that is not `> 0 && <= 2 ** 31 - 1` (none,
  // 0, negative, a past date, more than one timer holds) gets calculateDefaultRetryTimeoutMillis.
  // (openai 6.49 sleeps any parsed value as is, so 0 or a negative there retries at once.)
  it.each([0, -1, -60_000, 2 ** 31, Number.NaN])(
    'ignore a retry-after-ms of %d and back off as if none were given',
    (retryAfterMs) => {
      expect(retryDelayMs(0, retryAfterMs, fixed(0))).toBe(500)
      expect(retryDelayMs(2, retryAfterMs, fixed(0))).toBe(2000)
    },
  )

  it('numbers attempts as the SDKs count retries made: the first retry backs off from 0.5 s', () => {
    // calculateDefaultRetryTimeoutMillis: numRetries = maxRetries - retriesRemaining, 0 before the first retry.
    expect(retryDelayMs(0, undefined, fixed(0))).toBe(500)
    expect(retryDelayMs(1, undefined, fixed(0))).toBe(1000)
  })

  it('double from 0.5 s on each attempt and stop at 8 s', () => {
    const delays = [0, 1, 2, 3, 4, 5, 6, 20].map((attempt) => retryDelayMs(attempt, undefined, fixed(0)))
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000, 8000])
  })

  it('take off at most 25% for jitter', () => {
    const delays = [0, 1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, undefined, fixed(0.999)))
    expect(delays).toEqual([375, 750, 1501, 3001, 6002, 6002])
  })

  it('stay within [75%, 100%] of the base delay for any draw', () => {
    const random = seededRandom(42)
    for (let draw = 0; draw < 1000; draw += 1) {
      const attempt = draw % 7
      const base = Math.min(500 * 2 ** attempt, 8000)
      const delay = retryDelayMs(attempt, undefined, random)
      expect(delay).toBeGreaterThanOrEqual(0.75 * base)
      expect(delay).toBeLessThanOrEqual(base)
    }
  })

  it('give the same delays for the same seed', () => {
    const delays = (seed: number) => {
      const random = seededRandom(seed)
      return [0, 1, 2, 3].map((attempt) => retryDelayMs(attempt, undefined, random))
    }
    expect(delays(7)).toEqual(delays(7))
  })
})
