// Anthropic's models: cache rules (breakpoints, lookback, lifetimes, minimums), request rules and prices.

import type { Route } from '../../harness/types.ts'
import type {
  AnthropicCacheRules,
  AnthropicRequestRules,
  ModelEntry,
  PriceSource,
  Prices,
  Rates,
} from './types.ts'

/** The Anthropic API's cache rules but the minimum: Bedrock's Claude models start from them. */
export const ANTHROPIC_BASE: Omit<AnthropicCacheRules, 'minTokens'> = {
  kind: 'anthropic',
  lookback: 20,
  collapseToolRuns: true,
  maxBreakpoints: 4,
  ttlSeconds: { '5m': 300, '1h': 3600 },
  thinkingHistory: 'kept',
  // Anthropic's own API: Claude Code users report its prefix cache warm though the block's `cch` changes.
  billingBlock: 'stripped',
}

/** Claude Opus 4 and 4.1: extended thinking only, any temperature, 32k output. */
const CLAUDE_OPUS_4: AnthropicRequestRules = {
  kind: 'anthropic',
  thinking: ['enabled'],
  temperature: true,
  maxOutputTokens: 32_000,
}
/** Claude 4.5 and earlier: extended thinking only, any temperature. */
const CLAUDE_4_5: AnthropicRequestRules = {
  kind: 'anthropic',
  thinking: ['enabled'],
  temperature: true,
  maxOutputTokens: 64_000,
}
/** Claude 4.6: extended (deprecated, still accepted) and adaptive thinking, any temperature. */
const CLAUDE_4_6: AnthropicRequestRules = {
  kind: 'anthropic',
  thinking: ['enabled', 'adaptive'],
  temperature: true,
  maxOutputTokens: 128_000,
}
/** Claude 4.7 and later: adaptive thinking only. */
const CLAUDE_4_7: AnthropicRequestRules = {
  kind: 'anthropic',
  thinking: ['adaptive'],
  temperature: true,
  maxOutputTokens: 128_000,
}

function anthropic(
  model: string,
  minTokens: number,
  prices: Prices,
  route: Route,
  request: AnthropicRequestRules,
  assumptions?: string[],
  more: Partial<Pick<ModelEntry, 'reasoning' | 'snapshots'>> &
    Partial<Pick<AnthropicCacheRules, 'thinkingHistory'>> = {},
): ModelEntry {
  const { reasoning, snapshots, ...rules } = more
  return {
    vendor: 'anthropic',
    model,
    route,
    toolUpdate: 'unsupported',
    cache: { ...ANTHROPIC_BASE, minTokens, ...rules },
    request,
    prices,
    tokenScale: 1,
    ...(reasoning !== undefined ? { reasoning } : {}),
    ...(snapshots !== undefined ? { snapshots } : {}),
    ...(assumptions !== undefined ? { assumptions } : {}),
  }
}

/** Anthropic's pricing page: the model table, the long-context table and the prompt-caching multipliers. */
export const ANTHROPIC_PRICING: PriceSource = {
  url: 'https://platform.claude.com/docs/en/about-claude/pricing',
  date: '2026-12-01',
}

/** The rates of a base input price with Anthropic's cache multipliers: reads 0.1×, 5m writes 1.25×, 1h writes 2×. */
function anthropicRates(input: number, output: number, readMultiplier = 0.1): Rates {
  return {
    input,
    cacheRead: input * readMultiplier,
    cacheWrite5m: input * 1.25,
    cacheWrite1h: input * 2,
    output,
  }
}

/** Prices from a base input and output price and Anthropic's cache multipliers, sourced from its pricing page. */
export function anthropicPrices(
  input: number,
  output: number,
  more: { readMultiplier?: number; source?: PriceSource; longContext?: Prices['longContext'] } = {},
): Prices {
  return {
    ...anthropicRates(input, output, more.readMultiplier),
    ...(more.longContext !== undefined ? { longContext: more.longContext } : {}),
    source: more.source ?? ANTHROPIC_PRICING,
  }
}

/**
 * Sonnet 4 and 4.5 with the 1M-token context window: a prompt over 200k tokens bills input at $6 and output
 * at $22.50 per million, the cache multipliers applied to the higher input price (pricing page, "Long
 * context pricing"). Sonnet 4.6 and the Opus 4.6+ models bill their 1M window at the standard rates.
 */
const SONNET_4_LONG_CONTEXT = { aboveTokens: 200_000, ...anthropicRates(6, 22.5) }

/** The page of a model's own overview (its specifications list its prices). */
function overview(model: string): PriceSource {
  return { url: `https://platform.claude.com/docs/en/models/${model}/overview`, date: '2026-12-01' }
}

/** Anthropic's models. */
export const ANTHROPIC_MODELS: readonly ModelEntry[] = [
  anthropic('claude-sonnet-4-6', 1024, anthropicPrices(3, 15), 'unsupported', CLAUDE_4_6),
  anthropic('claude-haiku-4-5', 4096, anthropicPrices(1, 5), 'unsupported', CLAUDE_4_5, undefined, {
    thinkingHistory: 'stripped',
    snapshots: ['claude-haiku-4-5-20251001'],
  }),
  anthropic('claude-opus-4-8', 1024, anthropicPrices(5, 25), 'in-history', {
    ...CLAUDE_4_7,
    temperature: false,
  }),
  anthropic('claude-opus-4-7', 2048, anthropicPrices(5, 25), 'unsupported', CLAUDE_4_7, [
    'route: no in-history declaration found for Opus 4.7',
  ]),
  anthropic('claude-opus-4-6', 4096, anthropicPrices(5, 25), 'unsupported', CLAUDE_4_6),
  anthropic('claude-opus-4-5', 4096, anthropicPrices(5, 25), 'unsupported', CLAUDE_4_5, undefined, {
    snapshots: ['claude-opus-4-5-20251101'],
  }),
  anthropic(
    'claude-sonnet-4-5',
    1024,
    anthropicPrices(3, 15, { longContext: SONNET_4_LONG_CONTEXT }),
    'unsupported',
    CLAUDE_4_5,
    undefined,
    { thinkingHistory: 'stripped', snapshots: ['claude-sonnet-4-5-20250929'] },
  ),
  anthropic(
    'claude-sonnet-4',
    1024,
    anthropicPrices(3, 15, { longContext: SONNET_4_LONG_CONTEXT }),
    'unsupported',
    CLAUDE_4_5,
    undefined,
    { thinkingHistory: 'stripped', snapshots: ['claude-sonnet-4-20250514', 'claude-sonnet-4-0'] },
  ),
  anthropic('claude-opus-4-1', 1024, anthropicPrices(15, 75), 'unsupported', CLAUDE_OPUS_4, undefined, {
    thinkingHistory: 'stripped',
    snapshots: ['claude-opus-4-1-20250805'],
  }),
  anthropic('claude-opus-4', 1024, anthropicPrices(15, 75), 'unsupported', CLAUDE_OPUS_4, undefined, {
    thinkingHistory: 'stripped',
    snapshots: ['claude-opus-4-20250514', 'claude-opus-4-0'],
  }),
  anthropic(
    'claude-opus-5',
    512,
    anthropicPrices(5, 25),
    'in-history',
    CLAUDE_4_7,
    ['temperature: accepted (refused on Opus 4.7 and 4.8; not confirmed for Opus 5)'],
    { reasoning: 'by-default' },
  ),
  anthropic(
    'claude-opus-5-5',
    512,
    anthropicPrices(4, 20, { readMultiplier: 0.05 }),
    'in-history',
    CLAUDE_4_7,
    [
      'minimum: Opus 5 assumed',
      'route: in-history, as Claude Code 2.1.328 sends it system messages inside messages',
    ],
    { reasoning: 'by-default' },
  ),
  anthropic(
    'claude-sonnet-5',
    1024,
    anthropicPrices(2, 10, { source: overview('sonnet-5') }),
    'unsupported',
    { ...CLAUDE_4_7, temperature: false },
    ['minimum: Sonnet 4.6 assumed'],
  ),
  anthropic(
    'claude-sonnet-5-5',
    1024,
    // Reads cut from 0.10× to 0.05× on 2026-10-07; earlier rows are priced at today's rate.
    anthropicPrices(2, 10, { readMultiplier: 0.05 }),
    'unsupported',
    { ...CLAUDE_4_7, temperature: false },
    ['minimum: Sonnet 4.6 assumed', 'temperature: refused as on Sonnet 5 (assumed)'],
  ),
  anthropic(
    'claude-haiku-5-5',
    4096,
    // A prompt over 100k tokens (reads and writes counted) bills every token of the request at 5×.
    anthropicPrices(0.1, 0.5, { longContext: { aboveTokens: 100_000, ...anthropicRates(0.5, 2.5) } }),
    'unsupported',
    CLAUDE_4_7,
    ['minimum: Haiku 4.5 assumed'],
    { thinkingHistory: 'stripped' },
  ),
  ...(
    [
      ['claude-fable-5', 0.1],
      ['claude-mythos-5', 0.1],
      ['claude-fable-5-1', 0.025],
      ['claude-mythos-5-1', 0.025],
    ] as const
  ).map(([model, readMultiplier]) =>
    anthropic(
      model,
      1024,
      anthropicPrices(10, 50, { readMultiplier }),
      'in-history',
      CLAUDE_4_7,
      ['minimum: Opus 4.8 assumed'],
      { reasoning: 'by-default' },
    ),
  ),
]
