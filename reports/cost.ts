// Cost of a request from its disjoint buckets and the catalog's prices, and the cost it would have had
// at its ideal read: lost tokens priced as reads instead of the writes, then uncached tokens, they became.

import type { Prices, Rates } from '../providers/catalog.ts'

/** The billed buckets of one request. */
export interface Buckets {
  uncached: number
  read: number
  write5m: number
  write1h: number
  output: number
}

const PER_MILLION = 1_000_000

/**
 * The rates a request is billed at: the long-context tier's when its prompt (uncached, read and written
 * tokens) is above the tier's threshold, every token of the request then at those rates; else the base.
 */
export function ratesFor(buckets: Buckets, prices: Prices): Rates {
  const tier = prices.longContext
  if (tier === undefined) return prices
  const prompt = buckets.uncached + buckets.read + buckets.write5m + buckets.write1h
  return prompt > tier.aboveTokens ? tier : prices
}

/** USD cost of a request. A write without a write price is billed as input. */
export function costUsd(buckets: Buckets, prices: Prices): number {
  const rates = ratesFor(buckets, prices)
  return (
    (buckets.uncached * rates.input +
      buckets.read * rates.cacheRead +
      buckets.write5m * (rates.cacheWrite5m ?? rates.input) +
      buckets.write1h * (rates.cacheWrite1h ?? rates.input) +
      buckets.output * rates.output) /
    PER_MILLION
  )
}

/** USD cost had `lost` more tokens been read: taken first from 5m writes, then 1h writes, then uncached. */
export function idealCostUsd(buckets: Buckets, lost: number, prices: Prices): number {
  let remaining = lost
  const take = (available: number) => {
    const moved = Math.min(available, remaining)
    remaining -= moved
    return moved
  }
  const fromWrite5m = take(buckets.write5m)
  const fromWrite1h = take(buckets.write1h)
  const fromUncached = take(buckets.uncached)
  return costUsd(
    {
      uncached: buckets.uncached - fromUncached,
      read: buckets.read + fromWrite5m + fromWrite1h + fromUncached,
      write5m: buckets.write5m - fromWrite5m,
      write1h: buckets.write1h - fromWrite1h,
      output: buckets.output,
    },
    prices,
  )
}

/**
 * USD cost of a Gemini explicit cache beside the requests that read it: its creation (its tokens at the
 * input price) and its storage for `seconds` (tokens × hours × the storage price per million per hour).
 * No request's usage carries either, so rows leave them out (notes/2026-11-30-gemini-explicit-caches.md).
 */
export function explicitCacheUsd(tokens: number, seconds: number, prices: Prices): number {
  const storage = (prices.cacheStoragePerHour ?? 0) * (seconds / 3600)
  // Creating a cache is billed as a prompt of its tokens: above the long-context threshold, at that tier.
  const creation = ratesFor({ uncached: tokens, read: 0, write5m: 0, write1h: 0, output: 0 }, prices).input
  return (tokens * creation + tokens * storage) / PER_MILLION
}
