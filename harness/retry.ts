// The SDKs' retry timing, which the loop follows itself so that every attempt is logged and reported.

import type { Random } from './random.ts'

/** The longest delay one timer can hold (setTimeout fires at once for anything longer). */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * The delay before retry number `attempt + 1` (`attempt` counts the retries already made, so the first
 * retry is 0), as @anthropic-ai/sdk 1.14 `retryRequest` computes it: the delay the response asked for
 * when it is positive and fits one timer, else 0.5 s doubling to 8 s, less up to 25% jitter. Rounded to
 * whole milliseconds so logs stay short.
 */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined, random: Random): number {
  if (retryAfterMs !== undefined && retryAfterMs > 0 && retryAfterMs <= MAX_TIMER_MS) return retryAfterMs
  const base = Math.min(0.5 * 2 ** attempt, 8)
  return Math.round(base * (1 - random.next() * 0.25) * 1000)
}
