// OpenAI's models: the automatic prefix cache or explicit breakpoints (GPT-5.6), reasoning defaults and prices.

import type {
  ModelEntry,
  OpenAIBreakpointRules,
  OpenAIPrefixRules,
  OpenAIRequestRules,
  PriceSource,
  Prices,
} from './types.ts'

/** OpenAI's pricing page (standard tier). */
const OPENAI_PRICING: PriceSource = { url: 'https://platform.openai.com/docs/pricing', date: '2026-12-01' }
/** The models.dev snapshot bundled in opencode 1.18.33, where OpenAI's page was not read. */
const MODELS_DEV: PriceSource = {
  url: 'https://models.dev (snapshot bundled in opencode 1.18.33, openai)',
  date: '2026-11-30',
}

const OPENAI_PREFIX: OpenAIPrefixRules = {
  kind: 'openai-prefix',
  minTokens: 1024,
  increment: 128,
  routingTokens: 256,
  machines: 16,
  overflowRpm: 15,
  idleEvictionSeconds: 300,
  idleEvictionMaxSeconds: 600,
  extendedRetentionSeconds: 86_400,
  extendedRetention: true,
  defaultRetention: 'in_memory',
}

const OPENAI_BREAKPOINT: OpenAIBreakpointRules = {
  kind: 'openai-breakpoint',
  minTokens: 1024,
  maxWritesPerRequest: 4,
  readHorizon: 50,
  ttlSeconds: 1800,
  routingTokens: 256,
  machines: 16,
}

function openai(
  model: string,
  cache: OpenAIPrefixRules | OpenAIBreakpointRules,
  prices: Prices,
  reasoning: OpenAIRequestRules['reasoning'],
  assumptions?: string[],
): ModelEntry {
  return {
    vendor: 'openai',
    model,
    route: 'in-history',
    toolUpdate: 'unsupported',
    cache,
    request: { kind: 'openai', ...(reasoning !== undefined ? { reasoning } : {}) },
    prices: { source: OPENAI_PRICING, ...prices },
    tokenScale: 1,
    ...(assumptions !== undefined ? { assumptions } : {}),
  }
}

/** OpenAI's models (Chat Completions and Responses share them). */
export const OPENAI_MODELS: readonly ModelEntry[] = [
  openai('gpt-5.4', OPENAI_PREFIX, { input: 2.5, cacheRead: 0.25, output: 15 }, { defaultEffort: 'none' }),
  openai(
    'gpt-5.4-mini',
    OPENAI_PREFIX,
    { input: 0.75, cacheRead: 0.075, output: 4.5 },
    { defaultEffort: 'none' },
    ['reasoning: default effort `none` assumed as on GPT-5.4'],
  ),
  openai(
    'gpt-5.4-nano',
    OPENAI_PREFIX,
    { input: 0.2, cacheRead: 0.02, output: 1.25, source: MODELS_DEV },
    { defaultEffort: 'none' },
    [
      'prices: the models.dev snapshot bundled in opencode 1.18.33 (openai)',
      'reasoning: default effort `none` assumed as on GPT-5.4',
    ],
  ),
  {
    ...openai('gpt-4.1', OPENAI_PREFIX, { input: 2, cacheRead: 0.5, output: 8 }, undefined),
    reasoning: 'never',
  },
  // opencode's model to switch to: a second non-reasoning chat model beside GPT-4.1.
  {
    ...openai(
      'gpt-4.1-mini',
      OPENAI_PREFIX,
      { input: 0.4, cacheRead: 0.1, output: 1.6, source: MODELS_DEV },
      undefined,
      ['prices: the models.dev snapshot bundled in opencode 1.18.33 (openai)'],
    ),
    reasoning: 'never',
  },
  // Codex's models of the shared samples and their families: GPT-5 prices, cached input at 0.1×.
  ...['gpt-5', 'gpt-5-codex', 'gpt-5.1', 'gpt-5.1-codex'].map((model) =>
    openai(
      model,
      OPENAI_PREFIX,
      { input: 1.25, cacheRead: 0.125, output: 10 },
      { defaultEffort: model.startsWith('gpt-5.1') ? 'none' : 'medium' },
    ),
  ),
  ...['gpt-5.6-sol', 'gpt-5.6-terra', 'gpt-5.6-luna'].map((model) =>
    openai(
      model,
      OPENAI_BREAKPOINT,
      { input: 5, cacheRead: 0.5, cacheWrite5m: 6.25, output: 30 },
      { defaultEffort: 'medium' },
    ),
  ),
]
