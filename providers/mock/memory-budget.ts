// How `serve`'s memory budget is shared among what a long-lived server accumulates: the simulators'
// tries, the token-count memo, the previous request each captured session keeps for its
// counterfactual, and the request fingerprints the providers' cache diagnostics are answered from. Each part is bounded by its share (estimated bytes, deterministic), so the process
// stays near the budget however many sessions come and go (notes/2026-11-30-serve-scale.md).

import { TokenCounter } from '../sim/tokens.ts'

/** `serve --memory-budget` when not given, in MiB. */
export const DEFAULT_MEMORY_BUDGET_MB = 384

/** The shares of one budget. */
export interface MemoryPlan {
  /** The whole budget, bytes. */
  budgetBytes: number
  /** Bytes the simulators' tries may hold before expired entries are pruned. */
  simulatorBytes: number
  /** The token counter of the server, its memo bounded by its share. */
  counter: TokenCounter
  /** Bytes of previous requests the capture tracker keeps. */
  trackerBytes: number
  /** Bytes of request fingerprints kept for the providers' cache diagnostics (mock/diagnostics.ts). */
  fingerprintBytes: number
}

/**
 * Share a budget: half to the tries (the cache state the numbers depend on), a quarter to the token memo
 * (three parts counts, one part token arrays), three sixteenths to the sessions' previous requests and a
 * sixteenth to the diagnostics' fingerprints (hashes and token counts: a sixteenth of 384 MiB keeps about
 * 10,000 requests of a thousand segments each).
 */
export function planMemory(budgetMb: number): MemoryPlan {
  const budgetBytes = budgetMb * 1024 * 1024
  const memo = budgetBytes / 4
  return {
    budgetBytes,
    simulatorBytes: budgetBytes / 2,
    counter: new TokenCounter({ countBytes: (memo * 3) / 4, arrayBytes: memo / 4 }),
    trackerBytes: (budgetBytes * 3) / 16,
    fingerprintBytes: budgetBytes / 16,
  }
}
