// The SDKs' retry timing, which the loop follows itself so that every attempt is logged and reported.

import type { Random } from './random.ts'

/** The SDKs' retry delay: `retry-after-ms` when sane, else 0.5 s doubling to 8 s, less up to 25% jitter. */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined, random: Random): number {
  if (retryAfterMs !== undefined && retryAfterMs >= 0 && retryAfterMs < 60_000) return retryAfterMs
  const base = Math.min(0.5 * 2 ** attempt, 8)
  return Math.round(base * (1 - random.next() * 0.25) * 1000)
}
