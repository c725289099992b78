// OpenAI-compatible providers described by the catalog: each names a rule family (prefix granularity,
// minimum, lifetime, routing key, usage field names, billed writes) and its models' prices, and so runs on
// the OpenAI Chat adapter, mock and prefix simulator without code of its own. A user's catalog file adds
// more (`--catalog FILE` or CACHELAB_CATALOG; compatible-file.ts reads it).

import { CachelabError } from '../harness/errors.ts'
import {
  type BuiltInProviderId,
  type CompatibleProviderId,
  PROVIDER_IDS,
  type ProviderId,
} from '../harness/types.ts'
import { ANTHROPIC_COMPATIBLE } from './catalog/anthropic-compatible.ts'
import type {
  CatalogSource,
  CompatibleCacheRules,
  CompatibleModelSpec,
  CompatibleProviderSpec,
  RoutingKey,
  UsageFields,
} from './catalog/compatible-types.ts'
import type { ModelEntry, OpenAIPrefixRules } from './catalog/types.ts'

export type {
  CatalogSource,
  CompatibleCacheRules,
  CompatibleModelSpec,
  CompatibleProviderSpec,
  RoutingKey,
  UsageFields,
}

/** A compatible provider resolved: its models are catalog entries. */
export interface CompatibleProvider extends Omit<CompatibleProviderSpec, 'id' | 'models' | 'defaultModel'> {
  id: CompatibleProviderId
  defaultModel: string
  models: ModelEntry[]
  /** `shipped` with cachelab, or the catalog file it came from. */
  origin: string
}

/** Documents read on 2026-11-30 unless dated otherwise; the notes give the detail. */
const SHIPPED: readonly CompatibleProviderSpec[] = [
  {
    id: 'xai',
    name: 'xAI (Grok)',
    baseURL: 'https://api.x.ai/v1',
    keyVariable: 'XAI_API_KEY',
    baseURLVariable: 'XAI_BASE_URL',
    cache: {
      minimumTokens: 128,
      granularityTokens: 128,
      ttlSeconds: 300,
      routing: { kind: 'header', name: 'x-grok-conv-id' },
      usage: { cacheRead: 'prompt_tokens_details.cached_tokens' },
      writes: 'free',
    },
    models: [
      {
        model: 'grok-4.7',
        prices: { input: 3, cacheRead: 0.75, output: 15 },
        assumptions: ['prices: Grok 4 list prices with the 0.25× read a gateway measured'],
      },
    ],
    sources: [
      {
        url: 'https://docs.x.ai/developers/advanced-api-usage/prompt-caching/maximizing-cache-hits',
        date: '2026-11-30',
        says: 'automatic caching; x-grok-conv-id routes a conversation to one server, entries are per server',
      },
      {
        url: 'https://docs.x.ai/developers/advanced-api-usage/prompt-caching/usage-and-pricing',
        date: '2026-11-30',
        says: 'usage.prompt_tokens_details.cached_tokens, included in prompt_tokens',
      },
      {
        url: 'https://docs.apiyi.com/en/api-capabilities/grok/prompt-caching',
        date: '2026-08-19',
        says: 'gateway measurement: 128-token blocks, free writes, reads at 0.25× (secondary)',
      },
    ],
    assumptions: [
      'minimum: one 128-token block (not published)',
      'lifetime: 5 minutes idle ("evicted at any time"; not published)',
    ],
  },
  {
    id: 'kimi',
    name: 'Moonshot AI (Kimi)',
    baseURL: 'https://api.moonshot.ai/v1',
    keyVariable: 'MOONSHOT_API_KEY',
    baseURLVariable: 'MOONSHOT_BASE_URL',
    cache: {
      minimumTokens: 256,
      granularityTokens: 256,
      ttlSeconds: 300,
      routing: { kind: 'none' },
      usage: { cacheRead: 'prompt_tokens_details.cached_tokens' },
      writes: 'free',
    },
    models: [{ model: 'kimi-k3', prices: { input: 3, cacheRead: 0.3, output: 15 } }],
    sources: [
      {
        url: 'https://raw.githubusercontent.com/Leechael/pi-provider-kimi-code/main/docs/caching.md',
        date: '2026-11-30',
        says: 'probe: prefix matching in 256-token chunks; prompt_cache_key and cache_control ignored (secondary)',
      },
      {
        url: 'https://dev.to/teamorouter/how-to-access-kimi-k3-api-pricing-rate-limits-and-setup-guide-478g',
        date: '2026-11-30',
        says: 'kimi-k3: $3.00 miss, $0.30 hit, $15.00 output per million tokens (secondary)',
      },
    ],
    assumptions: [
      'usage: prompt_tokens_details.cached_tokens (client code reads it for K2 models; not in a primary source)',
      'minimum: one 256-token chunk; lifetime: 5 minutes idle (neither published)',
    ],
  },
  {
    id: 'openrouter',
    name: 'OpenRouter',
    baseURL: 'https://openrouter.ai/api/v1',
    keyVariable: 'OPENROUTER_API_KEY',
    baseURLVariable: 'OPENROUTER_BASE_URL',
    cache: {
      minimumTokens: 1024,
      granularityTokens: 128,
      ttlSeconds: 300,
      routing: { kind: 'body', field: 'session_id' },
      usage: {
        cacheRead: 'prompt_tokens_details.cached_tokens',
        cacheWrite: 'prompt_tokens_details.cache_write_tokens',
      },
      writes: 'free',
    },
    models: [{ model: 'openai/gpt-5.4', prices: { input: 2.5, cacheRead: 0.25, output: 15 } }],
    sources: [
      {
        url: 'https://openrouter.ai/docs/guides/best-practices/prompt-caching',
        date: '2026-11-30',
        says: 'sticky routing per conversation; session_id (body) or x-session-id keys it; upstream rules apply',
      },
      {
        url: 'https://openrouter.ai/docs/guides/best-practices/prompt-caching',
        date: '2026-06-07',
        says: 'OpenAI upstream: free writes, 1024-token minimum; usage cached_tokens and cache_write_tokens',
      },
    ],
    assumptions: [
      'an OpenAI model behind OpenRouter keeps OpenAI’s rules (1024 minimum, 128-token steps, 5 minutes)',
    ],
  },
  {
    id: 'mistral',
    name: 'Mistral AI',
    baseURL: 'https://api.mistral.ai/v1',
    keyVariable: 'MISTRAL_API_KEY',
    baseURLVariable: 'MISTRAL_BASE_URL',
    cache: {
      minimumTokens: 1024,
      granularityTokens: 128,
      ttlSeconds: 300,
      routing: { kind: 'body', field: 'prompt_cache_key' },
      usage: { cacheRead: 'prompt_tokens_details.cached_tokens' },
      writes: 'free',
    },
    models: [
      {
        model: 'mistral-medium-latest',
        prices: { input: 0.4, cacheRead: 0.04, output: 2 },
        assumptions: ['prices: Mistral Medium list prices assumed'],
      },
    ],
    sources: [
      {
        url: 'https://docs.mistral.ai/studio-api/conversations/advanced/prompt-caching',
        date: '2026-11-30',
        says: 'prefix caching; prompt_cache_key raises the chance of a hit; cached tokens at 10% of input',
      },
    ],
    assumptions: [
      'usage: prompt_tokens_details.cached_tokens (the page read does not show the field)',
      'minimum 1024, 128-token steps, 5 minutes idle: OpenAI’s numbers (none published)',
    ],
  },
  {
    id: 'qwen',
    name: 'Alibaba Cloud Model Studio (Qwen, compatible mode)',
    baseURL: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
    keyVariable: 'DASHSCOPE_API_KEY',
    baseURLVariable: 'DASHSCOPE_BASE_URL',
    cache: {
      minimumTokens: 256,
      granularityTokens: 256,
      ttlSeconds: 300,
      routing: { kind: 'none' },
      usage: { cacheRead: 'prompt_tokens_details.cached_tokens' },
      writes: 'free',
    },
    models: [
      {
        model: 'qwen3-max',
        prices: { input: 1.2, cacheRead: 0.24, output: 6 },
        assumptions: ['prices: qwen3-max international list prices assumed; the 20% read is documented'],
      },
    ],
    sources: [
      {
        url: 'https://www.alibabacloud.com/help/en/model-studio/context-cache',
        date: '2026-06-24',
        says: 'implicit cache: automatic, 256-token minimum, hits at 20% of input, creation at 100%, no lifetime',
      },
      {
        url: 'https://help.aliyun.com/zh/model-studio/context-cache',
        date: '2026-11-30',
        says: 'a later Chinese edition lists a 1024-token minimum for the implicit cache (conflict)',
      },
    ],
    assumptions: [
      'granularity: 256-token steps (not published)',
      'lifetime: 5 minutes idle ("periodically cleared"; not published)',
      'usage: prompt_tokens_details.cached_tokens, as in the OpenAI Chat shape the mode mirrors',
    ],
  },
  {
    id: 'glm',
    name: 'Z.ai (GLM)',
    baseURL: 'https://api.z.ai/api/paas/v4',
    keyVariable: 'ZAI_API_KEY',
    baseURLVariable: 'ZAI_BASE_URL',
    cache: {
      minimumTokens: 1024,
      granularityTokens: 128,
      ttlSeconds: 300,
      routing: { kind: 'none' },
      usage: { cacheRead: 'prompt_tokens_details.cached_tokens' },
      writes: 'free',
    },
    models: [
      {
        model: 'glm-4.6',
        prices: { input: 0.6, cacheRead: 0.11, output: 2.2 },
        assumptions: ['prices: GLM-4.6 list prices assumed'],
      },
    ],
    sources: [
      {
        url: 'https://docs.z.ai/guides/capabilities/cache',
        date: '2026-11-30',
        says: 'implicit caching on every mainstream model; usage.prompt_tokens_details.cached_tokens',
      },
    ],
    assumptions: [
      'matching: a prompt prefix (the page says "identical or highly similar" content)',
      'minimum 1024, 128-token steps, 5 minutes idle: OpenAI’s numbers (none published)',
    ],
  },
]

/** Every shipped compatible provider: the Chat Completions ones, then the Anthropic-compatible ones. */
const SHIPPED_ALL: readonly CompatibleProviderSpec[] = [...SHIPPED, ...ANTHROPIC_COMPATIBLE]

/** Ids a catalog file may not take: the built-in providers, their vendors, and the providers being added with code. */
const BUILT_IN_IDS: readonly string[] = [
  ...(['anthropic', 'openai-chat', 'openai-responses', 'deepseek'] satisfies BuiltInProviderId[]),
  'openai',
  'gemini',
  'bedrock',
  'cachelab',
]

/** The catalog entry of a compatible model: OpenAI's prefix cache with the provider's numbers. */
function modelEntry(spec: CompatibleProviderSpec, model: CompatibleModelSpec): ModelEntry {
  const numbers = { ...spec.cache, ...model.cache }
  const cache: OpenAIPrefixRules = {
    kind: 'openai-prefix',
    minTokens: numbers.minimumTokens,
    increment: numbers.granularityTokens,
    routingTokens: 256,
    machines: 16,
    overflowRpm: 15,
    idleEvictionSeconds: numbers.ttlSeconds,
    idleEvictionMaxSeconds: numbers.ttlSeconds,
    extendedRetentionSeconds: numbers.ttlSeconds,
    extendedRetention: false,
    defaultRetention: 'in_memory',
  }
  const assumptions = [...(spec.assumptions ?? []), ...(model.assumptions ?? [])]
  return {
    vendor: spec.id as CompatibleProviderId,
    model: model.model,
    route: model.route ?? 'unsupported',
    toolUpdate: 'unsupported',
    cache,
    // An Anthropic-compatible API takes Anthropic's request schema (the mocks' validation reads it).
    request:
      spec.wire === 'messages'
        ? { kind: 'anthropic', thinking: ['enabled', 'adaptive'], temperature: true }
        : { kind: 'openai' },
    prices: model.prices,
    tokenScale: 1,
    reasoning: 'never',
    ...(assumptions.length > 0 ? { assumptions } : {}),
  }
}

/** A spec resolved into a provider; `origin` says where it was described. */
export function resolveCompatible(spec: CompatibleProviderSpec, origin: string): CompatibleProvider {
  const { models, defaultModel, ...rest } = spec
  return {
    ...rest,
    id: spec.id as CompatibleProviderId,
    defaultModel: defaultModel ?? models[0]?.model ?? '',
    models: models.map((model) => modelEntry(spec, model)),
    origin,
  }
}

const SHIPPED_PROVIDERS: readonly CompatibleProvider[] = SHIPPED_ALL.map((spec) =>
  resolveCompatible(spec, 'shipped'),
)

/** The providers of user catalog files, set once before a command runs (`useCatalog`). */
let userProviders: readonly CompatibleProvider[] = []

/**
 * Merge a user's providers into the catalog: a provider with a shipped id replaces the shipped one, a
 * built-in id is refused. Called by the command line before anything runs (and by tests).
 */
export function useCatalog(providers: readonly CompatibleProvider[]): void {
  for (const provider of providers) {
    if (BUILT_IN_IDS.includes(provider.id))
      throw new CachelabError('usage', `${provider.origin}: provider id ${provider.id} is built in`)
  }
  userProviders = providers
}

/** The merged list for the user providers it was made from (a request path asks for it many times). */
let merged: { users: readonly CompatibleProvider[]; providers: readonly CompatibleProvider[] } | undefined

/**
 * Every compatible provider: the shipped ones (unless a user file replaces them), then the user's. The
 * same frozen list until `useCatalog` changes the user's.
 */
export function compatibleProviders(): readonly CompatibleProvider[] {
  if (merged === undefined || merged.users !== userProviders) {
    const replaced = new Set(userProviders.map((provider) => provider.id))
    const providers = [
      ...SHIPPED_PROVIDERS.filter((provider) => !replaced.has(provider.id)),
      ...userProviders,
    ]
    merged = { users: userProviders, providers: Object.freeze(providers) }
  }
  return merged.providers
}

/** The compatible provider of an id, or undefined. */
export function findCompatible(id: string): CompatibleProvider | undefined {
  return compatibleProviders().find((provider) => provider.id === id)
}

/** The compatible provider of an id; an unknown one is an invariant failure (ids are checked at the edges). */
export function compatibleProvider(id: CompatibleProviderId): CompatibleProvider {
  const provider = findCompatible(id)
  if (provider === undefined)
    throw new CachelabError('usage', `unknown provider ${id}: not in the catalog (see --catalog)`)
  return provider
}

/** The ids of the shipped providers (the tests and the README list them). */
export const SHIPPED_COMPATIBLE_IDS: readonly string[] = SHIPPED_ALL.map((spec) => spec.id)

/** Whether a compatible provider speaks Anthropic's Messages API (else OpenAI Chat Completions). */
export function speaksMessages(provider: Pick<CompatibleProviderSpec, 'wire'>): boolean {
  return provider.wire === 'messages'
}

/** The built-in and vendor names a compatible provider may not take. */
export function isReservedId(id: string): boolean {
  return BUILT_IN_IDS.includes(id)
}

/** Every provider id: the built-in ones, then the catalog's compatible ones (user files included). */
export function knownProviderIds(): ProviderId[] {
  return [...PROVIDER_IDS, ...compatibleProviders().map((provider) => provider.id)]
}

/** Whether an id names a provider (built in, or in the catalog). */
export function isProviderId(id: string): id is ProviderId {
  return knownProviderIds().includes(id as ProviderId)
}
