// Anthropic's models: cache rules (breakpoints, lookback, lifetimes, minimums), request rules and prices.

import type { Route } from '../../harness/types.ts'
import type { AnthropicCacheRules, AnthropicRequestRules, ModelEntry, Prices } from './types.ts'

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
  more: Pick<ModelEntry, 'reasoning'> & Partial<Pick<AnthropicCacheRules, 'thinkingHistory'>> = {},
): ModelEntry {
  const { reasoning, ...rules } = more
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
    ...(assumptions !== undefined ? { assumptions } : {}),
  }
}

export function anthropicPrices(input: number, output: number): Prices {
  return { input, cacheRead: input * 0.1, cacheWrite5m: input * 1.25, cacheWrite1h: input * 2, output }
}

/** Anthropic's models. */
export const ANTHROPIC_MODELS: readonly ModelEntry[] = [
  anthropic('claude-sonnet-4-6', 1024, anthropicPrices(3, 15), 'unsupported', CLAUDE_4_6),
  anthropic('claude-haiku-4-5', 4096, anthropicPrices(1, 5), 'unsupported', CLAUDE_4_5, undefined, {
    thinkingHistory: 'stripped',
  }),
  anthropic('claude-opus-4-8', 1024, anthropicPrices(5, 25), 'in-history', {
    ...CLAUDE_4_7,
    temperature: false,
  }),
  anthropic(
    'claude-opus-5',
    512,
    anthropicPrices(5, 25),
    'in-history',
    CLAUDE_4_7,
    [
      'prices: Opus 4.5–4.8 prices assumed',
      'temperature: accepted (refused on Opus 4.7 and 4.8; not confirmed for Opus 5)',
    ],
    { reasoning: 'by-default' },
  ),
  anthropic(
    'claude-opus-5-5',
    512,
    { input: 4, cacheRead: 0.2, cacheWrite5m: 5, cacheWrite1h: 8, output: 20 },
    'in-history',
    CLAUDE_4_7,
    [
      "prices: Claude Code 2.1.328's bundled model catalog (tier_4_20_cache_read_0_20; the opencode 1.18.33 models.dev snapshot agrees)",
      'minimum: Opus 5 assumed',
      'route: in-history, as Claude Code 2.1.328 sends it system messages inside messages',
    ],
    { reasoning: 'by-default' },
  ),
  anthropic('claude-sonnet-5', 1024, anthropicPrices(3, 15), 'unsupported', CLAUDE_4_7, [
    'prices: Sonnet 4.x prices assumed',
    'temperature: accepted (not confirmed either way)',
  ]),
]
