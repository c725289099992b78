// Gemini's models: implicit caching with each documented minimum dated, thought signatures and prices.

import { CachelabError } from '../../harness/errors.ts'
import type {
  DatedMinimum,
  GeminiRequestRules,
  LongContextRates,
  ModelEntry,
  PriceSource,
  Prices,
} from './types.ts'

/** The minimums of the Gemini caching page over time (ai.google.dev/gemini-api/docs/caching). */
const GEMINI_PAGE = 'https://ai.google.dev/gemini-api/docs/caching'
/** Implicit caching launch: 2.5 Flash 1,024, 2.5 Pro 2,048 (developers blog and the page of May 2025). */
const GEMINI_LAUNCH = { date: '2025-05-08', source: `${GEMINI_PAGE} (implicit caching launch)` }
/** The page with Gemini 3 previews: 2.5 Flash and 3 Flash Preview 1,024, 2.5 Pro and 3 Pro Preview 4,096. */
const GEMINI_3_PREVIEW = { date: '2026-05-07', source: `${GEMINI_PAGE} (last updated 2026-05-07)` }
/** The current page: 2.5 Flash and 2.5 Pro 2,048; 3.5 Flash and later, 3.1 Pro Preview 4,096. */
const GEMINI_CURRENT = {
  date: '2026-07-07',
  source: `${GEMINI_PAGE} (last updated 2026-07-07, unchanged to 2026-10-13)`,
}

function gemini(
  model: string,
  minimums: readonly DatedMinimum[],
  prices: Prices,
  request: GeminiRequestRules,
  assumptions: string[] = [],
): ModelEntry {
  const latest = minimums.at(-1)
  if (latest === undefined) throw new CachelabError('invariant', `no minimum for ${model}`)
  return {
    vendor: 'gemini',
    model,
    // A `system` role inside `contents` is a 400: the prompt lives in `systemInstruction` only.
    route: 'unsupported',
    toolUpdate: 'unsupported',
    cache: {
      kind: 'gemini',
      minTokens: latest.minTokens,
      minimums,
      increment: 1,
      implicitRetentionSeconds: 300,
      implicitMissRate: 0.1,
      explicitDefaultTtlSeconds: 3600,
    },
    request,
    prices,
    // Gemini's tokenizer is not public: o200k_base counts stand in (notes/2026-11-30-gemini-tokens.md).
    tokenScale: 1,
    reasoning: 'by-default',
    assumptions: [
      'implicit cache: a prefix readable for 5 minutes after it was last sent, token granularity',
      'tokens: o200k_base estimate (Gemini tokenizer not public)',
      ...assumptions,
    ],
  }
}

/** Gemini's pricing page (paid tier, standard). */
const GEMINI_PRICING: PriceSource = {
  url: 'https://ai.google.dev/gemini-api/docs/pricing',
  date: '2026-11-30',
}
/** The models.dev snapshot bundled in opencode 1.18.33, where Google's page was not read. */
const MODELS_DEV: PriceSource = {
  url: 'https://models.dev (snapshot bundled in opencode 1.18.33, google)',
  date: '2026-11-30',
}

/**
 * Gemini prices per million tokens for prompts up to 200k tokens (cached tokens counted in the prompt), the
 * explicit cache's storage per million tokens per hour, and the Pro models' rates for longer prompts.
 */
function geminiPrices(
  input: number,
  cacheRead: number,
  output: number,
  storagePerHour: number,
  more: { longContext?: LongContextRates; source?: PriceSource } = {},
): Prices {
  return {
    input,
    cacheRead,
    output,
    cacheStoragePerHour: storagePerHour,
    ...(more.longContext !== undefined ? { longContext: more.longContext } : {}),
    source: more.source ?? GEMINI_PRICING,
  }
}

/** The rates of a Gemini prompt over 200k tokens. */
function over200k(input: number, cacheRead: number, output: number): LongContextRates {
  return { aboveTokens: 200_000, input, cacheRead, output }
}

/** Gemini 2.5 Flash: thinking can be turned off; signatures optional. */
const GEMINI_25_FLASH: GeminiRequestRules = {
  kind: 'gemini',
  thinkingCanBeOff: true,
  thoughtSignatures: 'optional',
}
/** Gemini 2.5 Pro: always thinks; signatures optional. */
const GEMINI_25_PRO: GeminiRequestRules = {
  kind: 'gemini',
  thinkingCanBeOff: false,
  thoughtSignatures: 'optional',
}
/** Gemini 3.x: always thinks (`minimal` is the lowest level); function-call signatures validated. */
const GEMINI_3: GeminiRequestRules = {
  kind: 'gemini',
  thinkingCanBeOff: false,
  thoughtSignatures: 'validated',
}

/** Gemini models: each minimum the documentation stated, dated; the last one applies. */
export const GEMINI_MODELS: readonly ModelEntry[] = [
  gemini(
    'gemini-2.5-flash',
    [
      { minTokens: 1024, ...GEMINI_LAUNCH },
      { minTokens: 1024, ...GEMINI_3_PREVIEW },
      { minTokens: 2048, ...GEMINI_CURRENT },
    ],
    geminiPrices(0.3, 0.03, 2.5, 1),
    GEMINI_25_FLASH,
  ),
  gemini(
    'gemini-2.5-pro',
    [
      { minTokens: 2048, ...GEMINI_LAUNCH },
      { minTokens: 4096, ...GEMINI_3_PREVIEW },
      { minTokens: 2048, ...GEMINI_CURRENT },
    ],
    geminiPrices(1.25, 0.125, 10, 4.5, { longContext: over200k(2.5, 0.25, 15) }),
    GEMINI_25_PRO,
  ),
  gemini(
    'gemini-3.5-flash',
    [{ minTokens: 4096, ...GEMINI_CURRENT }],
    geminiPrices(0.5, 0.05, 3, 1),
    GEMINI_3,
    ['prices: Gemini 3 Flash Preview prices assumed'],
  ),
  gemini(
    'gemini-3.1-pro-preview',
    [
      { minTokens: 4096, ...GEMINI_3_PREVIEW, source: `${GEMINI_3_PREVIEW.source}: Gemini 3 Pro Preview` },
      { minTokens: 4096, ...GEMINI_CURRENT },
    ],
    geminiPrices(2, 0.2, 12, 4.5, { longContext: over200k(4, 0.4, 18) }),
    GEMINI_3,
    ['prices: Gemini 3 Pro Preview prices assumed'],
  ),
  // Gemini CLI 0.61.0's defaults: its router, the flash model it routes to, its next-speaker check.
  ...(
    [
      ['gemini-3.5-flash-lite', 0.3, 0.03, 2.5],
      ['gemini-3.8-flash', 0.75, 0.075, 3.75],
    ] as const
  ).map(([model, input, cacheRead, output]) =>
    gemini(
      model,
      [{ minTokens: 4096, ...GEMINI_CURRENT }],
      geminiPrices(input, cacheRead, output, 1, { source: MODELS_DEV }),
      GEMINI_3,
      [
        'prices: the models.dev snapshot bundled in opencode 1.18.33 (google)',
        'storage: 2.5 Flash price assumed',
      ],
    ),
  ),
  gemini(
    'gemini-3-flash-preview',
    [{ minTokens: 1024, ...GEMINI_3_PREVIEW, source: `${GEMINI_3_PREVIEW.source}: Gemini 3 Flash Preview` }],
    geminiPrices(0.5, 0.05, 3, 1, { source: MODELS_DEV }),
    GEMINI_3,
    [
      'prices: the models.dev snapshot bundled in opencode 1.18.33 (google)',
      'storage: 2.5 Flash price assumed',
    ],
  ),
]
