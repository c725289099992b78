// The model catalog: per provider and model, the route capability, the cache rules the simulators
// follow, prices and the token scale. Values the sources disagree on are parameters whose default is
// the documented value; `notes/` and `shared/reference/providers.md` give the sources.

import { CachelabError } from '../harness/errors.ts'
import type { ToolUpdatePolicy } from '../harness/policies.ts'
import type { CompatibleProviderId, ProviderId, Route } from '../harness/types.ts'
import { compatibleProvider, compatibleProviders, findCompatible } from './compatible.ts'

/**
 * The vendor behind a provider id: the two OpenAI wire APIs share one catalog and one cache; a compatible
 * provider is its own vendor.
 */
export type Vendor = BuiltInVendor | CompatibleProviderId

/** The vendors with adapters of their own. */
export type BuiltInVendor = 'anthropic' | 'openai' | 'deepseek' | 'bedrock' | 'gemini'

/** How a route applies tool-set changes mid-session (DSH generation D). */
export type ToolUpdateMode = ToolUpdatePolicy

/** Anthropic's breakpoint cache. */
export interface AnthropicCacheRules {
  kind: 'anthropic'
  /** Smallest prefix (tokens) a breakpoint may write. */
  minTokens: number
  /** Positions checked per breakpoint, the breakpoint itself counted as the first. */
  lookback: number
  /** Count a run of consecutive tool_use (or tool_result) blocks as one lookback position. */
  collapseToolRuns: boolean
  /** Breakpoints allowed per request; one more is a 400. */
  maxBreakpoints: number
  /** Lifetimes of the two TTL options, in seconds. */
  ttlSeconds: { '5m': number; '1h': number }
  /**
   * What becomes of the thinking blocks of earlier turns: `stripped` from the prompt once a user turn that
   * is not only tool results follows them (older models and every Haiku), or `kept` (Opus 4.5+, Sonnet
   * 4.6+). Within a tool-use turn they are always kept (notes/2026-11-30-reasoning-and-caching.md).
   */
  thinkingHistory: ThinkingHistory
  /**
   * What becomes of Claude Code's billing block (a first `system` text block `x-anthropic-billing-header:
   * cc_version=…; cch=…;`, whose values change between conversations and, in some versions, between
   * requests): `stripped` before the prompt is processed (nothing of it cached or billed), or `cached`
   * as prompt text like any other block. Sources disagree (notes/2026-12-01-billing-block.md).
   */
  billingBlock: BillingBlock
}

/** How an Anthropic model treats the thinking blocks of earlier turns. */
export type ThinkingHistory = 'stripped' | 'kept'

/** How a provider treats Claude Code's billing block in `system`. */
export type BillingBlock = 'stripped' | 'cached'

/**
 * Whether a model reasons: `never`; `on-request` (when the request turns reasoning on: Anthropic
 * `thinking`, OpenAI `reasoning_effort` or `reasoning.effort`); `by-default` (unless the request turns it
 * off: DeepSeek's thinking mode, Claude Opus 5's adaptive thinking).
 */
export type ReasoningMode = 'never' | 'on-request' | 'by-default'

/** OpenAI's automatic prefix cache (models before GPT-5.6). */
export interface OpenAIPrefixRules {
  kind: 'openai-prefix'
  minTokens: number
  /** Cache hits grow in steps of this many tokens past the minimum. */
  increment: number
  /** Tokens of the prompt start hashed (with `prompt_cache_key`) to pick a machine. */
  routingTokens: number
  /** Simulated machines behind the router. */
  machines: number
  /** Requests per minute per prefix and key above which traffic overflows to other machines. */
  overflowRpm: number
  /** Idle time after which an in-memory prefix is evicted (the documented lower bound is the default). */
  idleEvictionSeconds: number
  /** Upper bound of the idle eviction when sampled with randomness on. */
  idleEvictionMaxSeconds: number
  /** Retention of `prompt_cache_retention: '24h'`. */
  extendedRetentionSeconds: number
  /** Whether the model accepts `prompt_cache_retention: '24h'`. */
  extendedRetention: boolean
  /** The retention applied when a request names none. */
  defaultRetention: 'in_memory' | '24h'
}

/** OpenAI's breakpoint cache (GPT-5.6 and later). */
export interface OpenAIBreakpointRules {
  kind: 'openai-breakpoint'
  /** Smallest prefix (tokens) before a breakpoint that is cached. */
  minTokens: number
  /** New cache writes one request may create. */
  maxWritesPerRequest: number
  /** Latest breakpoints of a conversation considered for reads (guide: 50, SDK docstring: 80). */
  readHorizon: number
  /** Lifetime of a written breakpoint: `prompt_cache_options.ttl` defaults to '30m', its only value (SDK docstring). */
  ttlSeconds: number
  routingTokens: number
  machines: number
}

/** DeepSeek's disk cache of prefix units. */
export interface DeepSeekCacheRules {
  kind: 'deepseek'
  /** `units`: whole-unit matching (current docs); `legacy`: longest prefix in `legacyUnitTokens` steps. */
  mode: 'units' | 'legacy'
  /** Carve a unit every this many tokens of a long input or output; 0 turns it off (not published). */
  intervalTokens: number
  /** Storage unit of the legacy rules. */
  legacyUnitTokens: number
  /** Unused units are cleared after this long ("a few hours to a few days"). */
  evictionSeconds: number
  /**
   * Units become readable this long after the start of the request that persists them ("construction
   * takes seconds"); 0 by default: recorded sessions show no delay at their gaps
   * (notes/2026-11-30-deepseek-construction-delay.md).
   */
  persistDelaySeconds: number
  /**
   * Reads are reported in whole multiples of this many tokens (the unit's position rounded down); 0 reads
   * the unit's exact position, the documented mode. Measured, not documented: see `readGranularitySource`.
   */
  readGranularityTokens: number
  /** Where `readGranularityTokens` comes from, when it was measured rather than documented. */
  readGranularitySource?: MeasuredParameter
}

/** A simulator parameter taken from recorded usage rather than from the provider's documentation. */
export interface MeasuredParameter {
  /** The recorded data (files, sessions) the value was measured on. */
  source: string
  /** When it was measured (ISO date). */
  date: string
  /** How much data agreed with it, in words and counts ("18 of 18 reads …"). */
  sample: string
  /** The design note with the evidence. */
  note: string
}

/**
 * Bedrock's cache checkpoints (Converse `cachePoint` blocks): Anthropic's breakpoint machinery with the
 * Bedrock rules as parameters (notes/2026-11-30-bedrock-cache-rules.md).
 */
export interface BedrockCacheRules extends Omit<AnthropicCacheRules, 'kind' | 'billingBlock'> {
  kind: 'bedrock'
  /** The `cachePoint.ttl` values the model takes; another is a ValidationException. */
  ttlOptions: readonly ('5m' | '1h')[]
  /** Whether `toolConfig.tools` may carry a cache point (Claude: yes; Nova: no). */
  toolCheckpoints: boolean
  /** Most prompt tokens a request may cache (Nova); a checkpoint past it writes nothing. */
  maxCachedTokens?: number
}

/** A minimum as one version of the provider's documentation stated it. */
export interface DatedMinimum {
  /** Smallest prompt (tokens) that is cached. */
  minTokens: number
  /** When the documentation said so: the page's "last updated" date or the snapshot's date (ISO). */
  date: string
  /** The page or announcement. */
  source: string
}

/**
 * Gemini's caches (notes/2026-11-30-gemini-implicit-caching.md): implicit prefix caching on by default
 * (free writes, reads at the cache price, no guarantee), and explicit `cachedContents` with a TTL and a
 * storage price.
 */
export interface GeminiCacheRules {
  kind: 'gemini'
  /** Smallest prompt (tokens) an implicit or explicit cache holds: the latest documented minimum. */
  minTokens: number
  /** Every minimum the documentation stated for the model, oldest first; `minTokens` is the last. */
  minimums: readonly DatedMinimum[]
  /** Implicit reads grow in steps of this many tokens past the minimum (not documented: 1 assumed). */
  increment: number
  /**
   * Assumed: an implicit prefix stays readable this long after the last request that sent or read it
   * ("send requests with similar prefix in a short amount of time"; no lifetime is published).
   */
  implicitRetentionSeconds: number
  /**
   * Assumed: with a seed, the share of implicit hits that miss anyway ("no cost saving guarantee"); off
   * without a seed, so runs stay deterministic.
   */
  implicitMissRate: number
  /** Lifetime of an explicit cache created without `ttl` or `expireTime` (documented: 1 hour). */
  explicitDefaultTtlSeconds: number
}

export type CacheRules =
  | AnthropicCacheRules
  | OpenAIPrefixRules
  | OpenAIBreakpointRules
  | DeepSeekCacheRules
  | BedrockCacheRules
  | GeminiCacheRules

/** What an Anthropic model's Messages API accepts beyond the common schema (the mocks' validation reads it). */
export interface AnthropicRequestRules {
  kind: 'anthropic'
  /**
   * The `thinking.type` values the model takes. `enabled` (a fixed `budget_tokens`) is deprecated on the
   * 4.6 models and refused from Claude 4.7 on; `adaptive` exists from the 4.6 models on.
   */
  thinking: readonly ('enabled' | 'adaptive')[]
  /** False when a `temperature` other than 1 is a 400 ("`temperature` is deprecated for this model."). */
  temperature: boolean
  /**
   * The largest `max_tokens` the model takes (its output limit: 64,000 on Claude 4.5, 128,000 from 4.6 on,
   * as the AI SDK's Anthropic provider 3.0.140 lists them), where known; a larger value is a 400. Unset: the
   * largest limit of any current Claude model bounds it (the mocks' validation).
   */
  maxOutputTokens?: number
}

/** A reasoning effort of the OpenAI APIs (`reasoning_effort`, `reasoning.effort`). */
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh'

/** What an OpenAI model's Chat Completions and Responses APIs accept beyond the common schema. */
export interface OpenAIRequestRules {
  kind: 'openai'
  /**
   * Set for a reasoning model: it refuses `max_tokens`, and `temperature` or `top_p` other than 1 unless
   * the request's effort is `none`. `defaultEffort` is the effort of a request that names none.
   */
  reasoning?: { defaultEffort: ReasoningEffort }
}

/** What a DeepSeek model's Chat Completions API accepts beyond the common schema. */
export interface DeepSeekRequestRules {
  kind: 'deepseek'
  /**
   * Whether thinking mode is on when a request sets no `thinking.type` (V4: on). In thinking mode every
   * assistant message with tool calls must carry its `reasoning_content`.
   */
  thinkingByDefault: boolean
  /**
   * The largest `max_tokens` the API takes for the model: a value outside 1..this is a 400 ("Invalid
   * max_tokens value, the valid range of max_tokens is [1, 393216]" on V4, MoonshotAI/kimi-code#2656;
   * 384K on DeepSeek's pricing page).
   */
  maxOutputTokens: number
}

/** What a Bedrock model's Converse API accepts beyond the common schema. */
export interface BedrockRequestRules {
  kind: 'bedrock'
  /** The model family behind the id: Claude (Anthropic's rules) or Amazon Nova. */
  family: 'claude' | 'nova'
}

/**
 * How a Gemini model signs its answers and checks the signatures sent back
 * (ai.google.dev/gemini-api/docs/thought-signatures, "Thought signatures for different models"):
 * `validated` (Gemini 3) signs the first function call of each answer, and a text answer it thought over
 * on its last part, and refuses a current turn whose steps' first function calls come back unsigned;
 * `optional` (Gemini 2.5) signs the first part of an answer with function calls when it thinks, and
 * checks nothing.
 */
export type ThoughtSignatures = 'validated' | 'optional'

/** What a Gemini model's `generateContent` accepts beyond the common schema. */
export interface GeminiRequestRules {
  kind: 'gemini'
  /** Whether `thinkingConfig.thinkingBudget: 0` turns thinking off (2.5 Flash) or is a 400 (2.5 Pro). */
  thinkingCanBeOff: boolean
  /** How the model signs its answers and whether it refuses function calls sent back unsigned. */
  thoughtSignatures: ThoughtSignatures
}

export type RequestRules =
  | AnthropicRequestRules
  | OpenAIRequestRules
  | DeepSeekRequestRules
  | BedrockRequestRules
  | GeminiRequestRules

/** Prices in USD per million tokens. */
export interface Prices {
  input: number
  cacheRead: number
  /** Anthropic 5-minute writes, OpenAI GPT-5.6+ writes. */
  cacheWrite5m?: number
  /** Anthropic 1-hour writes. */
  cacheWrite1h?: number
  output: number
  /** Gemini explicit caches: USD per million cached tokens per hour of storage. */
  cacheStoragePerHour?: number
}

/** One model of the catalog. */
export interface ModelEntry {
  vendor: Vendor
  model: string
  /**
   * Which system-prompt routes the model accepts. `in-history`: a `system` message later in the
   * conversation is accepted and read, so a changed prompt can be appended after the cached history (and
   * the head can still be rewritten). `unsupported`: only the head (Anthropic's top-level `system`, the
   * first message elsewhere) carries the prompt; Anthropic answers a `role: "system"` message inside
   * `messages` with a 400, and OpenAI-style APIs accept it but the model does not act on it as its prompt.
   * A variant that needs `in-history` runs only on a model listing it (see `scenarios/requirements.ts`).
   */
  route: Route
  /** The tool-update mode the loop uses by default on this model (DSH D); a variant may override it. */
  toolUpdate: ToolUpdateMode
  cache: CacheRules
  /** The request parameters the model accepts, as far as the mocks refuse what it does not. */
  request: RequestRules
  prices: Prices
  /** Multiplier from o200k_base counts to this provider's tokenizer (1 until calibrated with keys). */
  tokenScale: number
  /** Whether the model reasons (the mock providers answer with reasoning accordingly); `on-request` when absent. */
  reasoning?: ReasoningMode
  /** Values taken on assumption rather than from a primary source. */
  assumptions?: string[]
  /**
   * Set on the entry a simulator uses for a model the catalog lacks: the catalog model whose rules and
   * prices stand in for it (`simulationModel`), named wherever the model is (log, CSV, report).
   */
  simulatedAs?: string
}

const ANTHROPIC_BASE: Omit<AnthropicCacheRules, 'minTokens'> = {
  kind: 'anthropic',
  lookback: 20,
  collapseToolRuns: true,
  maxBreakpoints: 4,
  ttlSeconds: { '5m': 300, '1h': 3600 },
  thinkingHistory: 'kept',
  // Anthropic's own API: Claude Code users report its prefix cache warm though the block's `cch` changes.
  billingBlock: 'stripped',
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

function anthropicPrices(input: number, output: number): Prices {
  return { input, cacheRead: input * 0.1, cacheWrite5m: input * 1.25, cacheWrite1h: input * 2, output }
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
    prices,
    tokenScale: 1,
    ...(assumptions !== undefined ? { assumptions } : {}),
  }
}

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

/** Gemini prices per million tokens, prompts up to 200k tokens (ai.google.dev/gemini-api/docs/pricing). */
function geminiPrices(input: number, cacheRead: number, output: number, storagePerHour: number): Prices {
  return { input, cacheRead, output, cacheStoragePerHour: storagePerHour }
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
    geminiPrices(1.25, 0.125, 10, 4.5),
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
    geminiPrices(2, 0.2, 12, 4.5),
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
      geminiPrices(input, cacheRead, output, 1),
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
    geminiPrices(0.5, 0.05, 3, 1),
    GEMINI_3,
    [
      'prices: the models.dev snapshot bundled in opencode 1.18.33 (google)',
      'storage: 2.5 Flash price assumed',
    ],
  ),
]

/** DeepSeek V4: thinking mode is on unless a request turns it off; up to 384 Ki output tokens. */
const DEEPSEEK_V4: DeepSeekRequestRules = {
  kind: 'deepseek',
  thinkingByDefault: true,
  maxOutputTokens: 393_216,
}

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
    prices,
    tokenScale: 1,
    assumptions: [
      'prices: the Anthropic API prices (Bedrock on-demand, us-east-1, not retrieved)',
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
    prices: { input, cacheRead: input * 0.25, cacheWrite5m: input, output },
    tokenScale: 1,
    reasoning: 'never',
    assumptions: [
      'lookback: a checkpoint reads only an entry written at the same position (the 20-block lookback is documented for Claude only)',
      'maxCachedTokens: 32k as a gateway copy of the AWS table gives it (docs.portkey.ai)',
      'prices: on-demand us-east-1 list prices, not retrieved; cache writes at the input price',
    ],
  }
}

/** The built-in catalog. */
export const CATALOG: readonly ModelEntry[] = [
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
    { input: 0.2, cacheRead: 0.02, output: 1.25 },
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
  ...['gpt-5.6-sol', 'gpt-5.6-terra', 'gpt-5.6-luna'].map((model) =>
    openai(
      model,
      OPENAI_BREAKPOINT,
      { input: 5, cacheRead: 0.5, cacheWrite5m: 6.25, output: 30 },
      { defaultEffort: 'medium' },
    ),
  ),
  {
    vendor: 'deepseek',
    model: 'deepseek-flash',
    route: 'in-history',
    toolUpdate: 'addition-only',
    cache: DEEPSEEK_V4_UNITS,
    request: DEEPSEEK_V4,
    prices: { input: 0.3, cacheRead: 0.006, output: 1.2 },
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
    prices: { input: 1.32, cacheRead: 0.044, output: 3.96 },
    tokenScale: 1,
    reasoning: 'by-default',
    assumptions: ['prices: peak-hour rates; off-peak is half', 'route: no in-history declaration found'],
  },
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
  ...GEMINI_MODELS,
]

/** The model each built-in vendor uses when none is named (`defaultModel` covers every vendor). */
export const DEFAULT_MODELS: Readonly<Record<BuiltInVendor, string>> = {
  anthropic: 'claude-sonnet-4-6',
  openai: 'gpt-5.4',
  deepseek: 'deepseek-flash',
  bedrock: 'anthropic.claude-sonnet-4-6',
  gemini: 'gemini-2.5-flash',
}

/** The vendor of a provider id. */
export function vendorOf(provider: ProviderId): Vendor {
  switch (provider) {
    case 'anthropic':
      return 'anthropic'
    case 'openai-chat':
    case 'openai-responses':
      return 'openai'
    case 'deepseek':
      return 'deepseek'
    case 'gemini':
      return 'gemini'
    case 'bedrock':
      return 'bedrock'
    default:
      return provider
  }
}

/** Whether a vendor is built in (else a compatible provider of the catalog). */
export function isBuiltInVendor(vendor: Vendor): vendor is BuiltInVendor {
  return (
    vendor === 'anthropic' ||
    vendor === 'openai' ||
    vendor === 'deepseek' ||
    vendor === 'bedrock' ||
    vendor === 'gemini'
  )
}

/** The model a vendor uses when none is named. */
export function defaultModel(vendor: Vendor): string {
  return isBuiltInVendor(vendor) ? DEFAULT_MODELS[vendor] : compatibleProvider(vendor).defaultModel
}

/** Every model of the catalog: the built-in ones, then the compatible providers' (user files included). */
export function catalogEntries(): readonly ModelEntry[] {
  return [...CATALOG, ...compatibleProviders().flatMap((provider) => provider.models)]
}

/** Whether a model accepts and reads `system` messages inside the conversation history. */
export function acceptsSystemInHistory(entry: ModelEntry): boolean {
  return entry.route === 'in-history'
}

/** Geographic and global prefixes of Bedrock's cross-region inference profiles (`us.anthropic…`). */
const INFERENCE_PROFILE = /^(us|eu|apac|jp|au|ca|us-gov|global)\./

/** A Bedrock model id without its inference-profile prefix: the profile serves the same model. */
export function bedrockBaseModel(model: string): string {
  return model.replace(INFERENCE_PROFILE, '')
}

/** The catalog entry of a model, or undefined when the catalog does not list it. */
export function findModel(vendor: Vendor, model: string): ModelEntry | undefined {
  if (isBuiltInVendor(vendor)) {
    const name = vendor === 'bedrock' ? bedrockBaseModel(model) : model
    return CATALOG.find((entry) => entry.vendor === vendor && entry.model === name)
  }
  return findCompatible(vendor)?.models.find((entry) => entry.model === model)
}

/** The entry for a provider and optional model; an unknown model is a usage error naming the known ones. */
export function resolveModel(provider: ProviderId, model?: string): ModelEntry {
  const vendor = vendorOf(provider)
  const name = model ?? defaultModel(vendor)
  const entry = findModel(vendor, name)
  if (entry === undefined) {
    const known = catalogEntries()
      .filter((candidate) => candidate.vendor === vendor)
      .map((candidate) => candidate.model)
    throw new CachelabError(
      'usage',
      `unknown ${provider} model ${JSON.stringify(name)} (known: ${known.join(', ')})`,
    )
  }
  return entry
}

/**
 * The catalog model that stands in for one the catalog lacks: the vendor's model sharing the most of its
 * name at both ends once a date suffix is dropped (`claude-opus-4-7` is `claude-opus-4-8`, `gpt-6.1-sol`
 * is `gpt-5.6-sol`), the vendor default when none shares anything.
 */
export function standInModel(vendor: Vendor, model: string): ModelEntry {
  const name = model.replace(/-\d{8}$/, '')
  const undated = findModel(vendor, name)
  if (undated !== undefined) return undated
  const shared = (candidate: string) => {
    let prefix = 0
    while (prefix < candidate.length && candidate[prefix] === name[prefix]) prefix += 1
    let suffix = 0
    while (
      suffix < candidate.length - prefix &&
      suffix < name.length - prefix &&
      candidate[candidate.length - 1 - suffix] === name[name.length - 1 - suffix]
    )
      suffix += 1
    return prefix + suffix
  }
  const fallback = findModel(vendor, defaultModel(vendor))
  if (fallback === undefined) throw new CachelabError('invariant', `no default model for ${vendor}`)
  return catalogEntries()
    .filter((entry) => entry.vendor === vendor)
    .reduce((best, entry) => (shared(entry.model) > shared(best.model) ? entry : best), fallback)
}

/**
 * The entry a simulator uses for a request's model: the catalog's, or, when the catalog does not list
 * it (the loopback server accepts any model), its stand-in's rules and prices under the requested name,
 * with `simulatedAs` naming the stand-in.
 */
export function simulationModel(vendor: Vendor, model: string): ModelEntry {
  const entry = findModel(vendor, model)
  if (entry !== undefined) return entry.model === model ? entry : { ...entry, model }
  const standIn = standInModel(vendor, model)
  return { ...standIn, model, simulatedAs: standIn.model }
}

/** Apply overrides to a model entry's cache rules (tests and what-if runs change parameters this way). */
export function withCacheRules<T extends CacheRules>(entry: ModelEntry, rules: Partial<T>): ModelEntry {
  return { ...entry, cache: { ...entry.cache, ...rules } as CacheRules }
}
