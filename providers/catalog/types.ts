// The catalog's vocabulary: a model entry (route, cache rules, request rules, prices, token scale) and
// the rule shapes of each provider family. The tables are beside it, one file per family.

import type { ToolUpdatePolicy } from '../../harness/policies.ts'
import type { CompatibleProviderId, Route } from '../../harness/types.ts'

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

/** The per-token rates of one price tier, in USD per million tokens. */
export interface Rates {
  input: number
  cacheRead: number
  /** Anthropic 5-minute writes, OpenAI GPT-5.6+ writes. */
  cacheWrite5m?: number
  /** Anthropic 1-hour writes. */
  cacheWrite1h?: number
  output: number
}

/**
 * The rates of a request whose prompt (uncached + read + written tokens) is above `aboveTokens`: every
 * token of that request, output included, is billed at them (Anthropic's long-context pricing, Gemini's
 * prompts over 200k tokens).
 */
export interface LongContextRates extends Rates {
  aboveTokens: number
}

/** Where a model's prices come from: the provider's page and the date it said so. */
export interface PriceSource {
  /** The page (a URL), with the table or section when the page holds several. */
  url: string
  /** When the page said so (ISO date): its "last updated" date or the day it was read. */
  date: string
}

/** Prices in USD per million tokens. */
export interface Prices extends Rates {
  /** Gemini explicit caches: USD per million cached tokens per hour of storage. */
  cacheStoragePerHour?: number
  /** The tier above a prompt length, where the provider prices long prompts differently. */
  longContext?: LongContextRates
  /** Where the prices come from (every built-in model has one; a user's compatible file may not). */
  source?: PriceSource
  /**
   * Bedrock: what a geographic cross-region inference profile (`us.`, `eu.`, `apac.`, …) bills, as a
   * multiple of these rates, which are the global profile's (`global.`); with its source.
   */
  regional?: { multiplier: number; source: PriceSource }
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
   * Dated snapshot ids the provider documents as this model (its alias points at them, same prices):
   * they resolve to this entry; any other id the catalog lacks is a stand-in (`simulatedAs`).
   */
  snapshots?: readonly string[]
  /**
   * Set on the entry a simulator uses for a model the catalog lacks: the catalog model whose rules and
   * prices stand in for it (`simulationModel`), named wherever the model is (log, CSV, report).
   */
  simulatedAs?: string
}
