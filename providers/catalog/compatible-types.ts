// The vocabulary of compatible providers as a catalog describes them: their cache rules, usage fields,
// routing key, models and sources. The tables are compatible.ts (Chat Completions) and
// anthropic-compatible.ts (the vendors' Anthropic-compatible Messages APIs).

import type { Route } from '../../harness/types.ts'
import type { CompatibleWire } from '../types.ts'
import type { BillingBlock, Prices } from './types.ts'

/** Where a provider reads the key that keeps a conversation on the machine holding its cache. */
export type RoutingKey =
  /** The provider routes by the prompt alone (a key is ignored). */
  | { kind: 'none' }
  /** A top-level body field carries the key (`prompt_cache_key`, OpenRouter's `session_id`). */
  | { kind: 'body'; field: string }
  /** A request header carries the key (xAI's `x-grok-conv-id`). */
  | { kind: 'header'; name: string }

/**
 * Where the usage object reports the cache, as dotted paths under `usage`. `prompt_tokens` always
 * includes the cached tokens (every provider here folds them in, as OpenAI does).
 */
export interface UsageFields {
  /** Tokens read from the cache: `prompt_tokens_details.cached_tokens`, `prompt_cache_hit_tokens`. */
  cacheRead: string
  /** Tokens not read from the cache, when the provider reports them (`prompt_cache_miss_tokens`). */
  cacheMiss?: string
  /** Tokens written to the cache, when the provider reports them (`prompt_tokens_details.cache_write_tokens`). */
  cacheWrite?: string
}

/** The cache rules of a provider (each model may override the numbers). */
export interface CompatibleCacheRules {
  /** Smallest prompt prefix (tokens) that is cached. */
  minimumTokens: number
  /** Cache hits grow in steps of this many tokens past the minimum. */
  granularityTokens: number
  /** Idle time after which a cached prefix is gone. */
  ttlSeconds: number
  routing: RoutingKey
  usage: UsageFields
  /**
   * `free`: writing the cache costs the input price (the uncached bucket); `billed`: the prefix a request
   * caches is reported and priced as a cache write (`prices.cacheWrite5m`).
   */
  writes: 'free' | 'billed'
}

/** A document a rule comes from. */
export interface CatalogSource {
  url: string
  /** When the page was read or last updated (ISO date). */
  date: string
  /** What it settles. */
  says: string
}

/** One model of a compatible provider. */
export interface CompatibleModelSpec {
  model: string
  prices: Prices
  /** Whether a `system` message later in the conversation is read as the prompt (default `unsupported`). */
  route?: Route
  /** The provider's numbers this model does differently. */
  cache?: Partial<Pick<CompatibleCacheRules, 'minimumTokens' | 'granularityTokens' | 'ttlSeconds'>>
  assumptions?: string[]
}

/** A compatible provider as a catalog describes it. */
export interface CompatibleProviderSpec {
  /** The provider id (`cachelab run --provider xai`) and its `serve` path prefix (`/xai/v1`). */
  id: string
  /** The provider's name as people know it. */
  name: string
  /** The real API's base URL, as the OpenAI SDK takes it. */
  baseURL: string
  /** Environment variable of the API key (the keyed suite skips by its name). */
  keyVariable: string
  /** Environment variable that overrides the base URL. */
  baseURLVariable: string
  /** The model used when none is named; the first model when absent. */
  defaultModel?: string
  cache: CompatibleCacheRules
  models: CompatibleModelSpec[]
  sources: CatalogSource[]
  /** Rules taken on assumption rather than from a primary source. */
  assumptions?: string[]
  /**
   * The wire API: `chat` (OpenAI Chat Completions, the default) or `messages` (an Anthropic-compatible
   * Messages API, served by `serve` under `/<id>` as Anthropic's is under `/anthropic`; its id ends in
   * `-anthropic`). A `messages` provider reports usage in Anthropic's shape (`cache_read_input_tokens`,
   * `input_tokens` the uncached part) and ignores `cache_control`: it caches by prefix with its numbers.
   */
  wire?: CompatibleWire
  /** A `messages` provider: how Claude Code's billing block in `system` is treated (default `cached`, as text). */
  billingBlock?: BillingBlock
}
