// Amazon Bedrock's models: Claude with Bedrock's minimums and checkpoints, and Nova.

import { ANTHROPIC_BASE, ANTHROPIC_PRICING, anthropicPrices } from './anthropic.ts'
import type { ModelEntry, PriceSource, Prices, ThinkingHistory } from './types.ts'

/** Bedrock's pricing page (on-demand, us-east-1): the Nova list prices. */
const BEDROCK_PRICING: PriceSource = { url: 'https://aws.amazon.com/bedrock/pricing/', date: '2026-11-30' }

/**
 * A Bedrock Claude model: the Anthropic API's prices and lookback, Bedrock's minimum per checkpoint
 * (docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html, as tabulated by docs.litellm.ai
 * 2026-10-07), 1-hour TTL where Bedrock lists it.
 */
function bedrockClaude(
  model: string,
  minTokens: number,
  prices: Prices,
  thinkingHistory: ThinkingHistory,
  assumptions: string[],
): ModelEntry {
  return {
    vendor: 'bedrock',
    model,
    route: 'unsupported',
    toolUpdate: 'unsupported',
    cache: {
      ...ANTHROPIC_BASE,
      kind: 'bedrock',
      minTokens,
      thinkingHistory,
      ttlOptions: ['5m', '1h'],
      toolCheckpoints: true,
    },
    request: { kind: 'bedrock', family: 'claude' },
    // From Sonnet 4.5, Haiku 4.5 and Opus 4.5 on, a regional (geographic) profile costs 10% more than global.
    prices: {
      ...prices,
      regional: {
        multiplier: 1.1,
        source: { ...ANTHROPIC_PRICING, url: `${ANTHROPIC_PRICING.url}#third-party-platform-pricing` },
      },
    },
    tokenScale: 1,
    assumptions: [
      'prices: the Anthropic API prices as the global profile’s (Bedrock’s own page not retrieved)',
      'regional: a bare model id is priced as the global profile (current Claude models are served through inference profiles)',
      ...assumptions,
    ],
  }
}

/**
 * An Amazon Nova model: explicit checkpoints in `system` and `messages` only, 1,000 tokens per
 * checkpoint, 5-minute TTL, at most 32k tokens cached; reads at 25% of the input price, writes at the
 * input price (notes/2026-11-30-bedrock-cache-rules.md).
 */
function bedrockNova(model: string, input: number, output: number): ModelEntry {
  return {
    vendor: 'bedrock',
    model,
    route: 'unsupported',
    toolUpdate: 'unsupported',
    cache: {
      ...ANTHROPIC_BASE,
      kind: 'bedrock',
      minTokens: 1000,
      lookback: 1,
      collapseToolRuns: false,
      thinkingHistory: 'kept',
      ttlOptions: ['5m'],
      toolCheckpoints: false,
      maxCachedTokens: 32_000,
    },
    request: { kind: 'bedrock', family: 'nova' },
    prices: { input, cacheRead: input * 0.25, cacheWrite5m: input, output, source: BEDROCK_PRICING },
    tokenScale: 1,
    reasoning: 'never',
    assumptions: [
      'lookback: a checkpoint reads only an entry written at the same position (the 20-block lookback is documented for Claude only)',
      'maxCachedTokens: 32k as a gateway copy of the AWS table gives it (docs.portkey.ai)',
      'prices: on-demand us-east-1 list prices, not retrieved; cache writes at the input price',
    ],
  }
}

/** Bedrock's models: Claude and Nova. */
export const BEDROCK_MODELS: readonly ModelEntry[] = [
  bedrockClaude('anthropic.claude-sonnet-4-6', 1024, anthropicPrices(3, 15), 'kept', [
    '1h TTL: accepted (opencode#23106 tested it; the AWS list names Opus 4.5, Haiku 4.5, Sonnet 4.5)',
  ]),
  bedrockClaude('anthropic.claude-haiku-4-5-20251001-v1:0', 4096, anthropicPrices(1, 5), 'stripped', []),
  bedrockClaude('anthropic.claude-opus-4-6-v1', 4096, anthropicPrices(5, 25), 'kept', [
    '1h TTL: accepted (opencode#23106 tested it)',
  ]),
  bedrockNova('amazon.nova-pro-v1:0', 0.8, 3.2),
  bedrockNova('amazon.nova-lite-v1:0', 0.06, 0.24),
  bedrockNova('amazon.nova-micro-v1:0', 0.035, 0.14),
]
