// DeepSeek's models: cache units at the request's ends, the read grid, thinking mode and prices.

import type { DeepSeekCacheRules, DeepSeekRequestRules, ModelEntry, PriceSource } from './types.ts'

/** DeepSeek's pricing page (peak-hour rates). */
const DEEPSEEK_PRICING: PriceSource = {
  url: 'https://api-docs.deepseek.com/quick_start/pricing',
  date: '2026-11-30',
}

/** DeepSeek's rules as its caching guide documents them: reads at the exact unit position. */
export const DEEPSEEK_DOCUMENTED: DeepSeekCacheRules = {
  kind: 'deepseek',
  mode: 'units',
  intervalTokens: 0,
  legacyUnitTokens: 64,
  evictionSeconds: 6 * 3600,
  persistDelaySeconds: 0,
  readGranularityTokens: 0,
}

/** The V4 models (flash, pro): the documented rules, with reads on the 128-token grid the live logs show. */
const DEEPSEEK_V4_UNITS: DeepSeekCacheRules = {
  ...DEEPSEEK_DOCUMENTED,
  readGranularityTokens: 128,
  readGranularitySource: {
    source:
      'two live DSH session logs on deepseek-v4-flash (deepseek-ai/deepseek-harness snapshots goal-multi-turn-actions and permission-policy-context)',
    date: '2026-11-30',
    sample:
      '18 of 18 non-zero reads are multiples of 128; the simulator with the grid predicts 17 of 17 reads after a first request exactly',
    note: 'notes/2026-11-30-calibration.md',
  },
}

/** DeepSeek V4: thinking mode is on unless a request turns it off; up to 384 Ki output tokens. */
const DEEPSEEK_V4: DeepSeekRequestRules = {
  kind: 'deepseek',
  thinkingByDefault: true,
  maxOutputTokens: 393_216,
}

/** DeepSeek's models. */
export const DEEPSEEK_MODELS: readonly ModelEntry[] = [
  {
    vendor: 'deepseek',
    model: 'deepseek-flash',
    // DSH's catalog name; DeepSeek's API (and pi-ai, and DSH's logs) name the model `deepseek-v4-flash`.
    snapshots: ['deepseek-v4-flash'],
    route: 'in-history',
    toolUpdate: 'addition-only',
    cache: DEEPSEEK_V4_UNITS,
    request: DEEPSEEK_V4,
    prices: { input: 0.3, cacheRead: 0.006, output: 1.2, source: DEEPSEEK_PRICING },
    tokenScale: 1,
    reasoning: 'by-default',
    assumptions: ['prices: peak-hour rates; off-peak is half'],
  },
  {
    vendor: 'deepseek',
    model: 'deepseek-v4-pro',
    route: 'unsupported',
    toolUpdate: 'unsupported',
    cache: DEEPSEEK_V4_UNITS,
    request: DEEPSEEK_V4,
    prices: { input: 1.32, cacheRead: 0.044, output: 3.96, source: DEEPSEEK_PRICING },
    tokenScale: 1,
    reasoning: 'by-default',
    assumptions: ['prices: peak-hour rates; off-peak is half', 'route: no in-history declaration found'],
  },
]
