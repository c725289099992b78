// The model catalog: per provider and model, the route capability, the cache rules the simulators
// follow, prices and the token scale. Values the sources disagree on are parameters whose default is
// the documented value; `notes/` and `shared/reference/providers.md` give the sources.

import { CachelabError } from '../harness/errors.ts'
import type { ProviderId } from '../harness/types.ts'
import { ANTHROPIC_MODELS } from './catalog/anthropic.ts'
import { BEDROCK_MODELS } from './catalog/bedrock.ts'
import { DEEPSEEK_MODELS } from './catalog/deepseek.ts'
import { GEMINI_MODELS } from './catalog/gemini.ts'
import { OPENAI_MODELS } from './catalog/openai.ts'
import type { BuiltInVendor, CacheRules, ModelEntry, Prices, Vendor } from './catalog/types.ts'
import { compatibleProvider, compatibleProviders, findCompatible } from './compatible.ts'

export { DEEPSEEK_DOCUMENTED } from './catalog/deepseek.ts'
export { GEMINI_MODELS } from './catalog/gemini.ts'
export type {
  AnthropicCacheRules,
  AnthropicRequestRules,
  BedrockCacheRules,
  BedrockRequestRules,
  BillingBlock,
  BuiltInVendor,
  CacheRules,
  DatedMinimum,
  DeepSeekCacheRules,
  DeepSeekRequestRules,
  GeminiCacheRules,
  GeminiRequestRules,
  LongContextRates,
  MeasuredParameter,
  ModelEntry,
  OpenAIBreakpointRules,
  OpenAIPrefixRules,
  OpenAIRequestRules,
  PriceSource,
  Prices,
  Rates,
  ReasoningEffort,
  ReasoningMode,
  RequestRules,
  ThinkingHistory,
  ThoughtSignatures,
  ToolUpdateMode,
  Vendor,
} from './catalog/types.ts'

/** The built-in catalog: the tables of each family, in this order. */
export const CATALOG: readonly ModelEntry[] = [
  ...ANTHROPIC_MODELS,
  ...OPENAI_MODELS,
  ...DEEPSEEK_MODELS,
  ...BEDROCK_MODELS,
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

/** Bedrock's geographic inference profiles: priced at the regional rates where the model has them. */
const GEOGRAPHIC_PROFILE = /^(us|eu|apac|jp|au|ca|us-gov)\./

/** A Bedrock entry as a profile bills it: a geographic profile at the model's regional rates. */
function bedrockProfileEntry(entry: ModelEntry, model: string): ModelEntry {
  const regional = entry.prices.regional
  if (regional === undefined || !GEOGRAPHIC_PROFILE.test(model)) return entry
  const { multiplier } = regional
  const { input, cacheRead, cacheWrite5m, cacheWrite1h, output } = entry.prices
  const prices: Prices = {
    input: input * multiplier,
    cacheRead: cacheRead * multiplier,
    ...(cacheWrite5m !== undefined ? { cacheWrite5m: cacheWrite5m * multiplier } : {}),
    ...(cacheWrite1h !== undefined ? { cacheWrite1h: cacheWrite1h * multiplier } : {}),
    output: output * multiplier,
    source: regional.source,
  }
  return { ...entry, prices }
}

/** The catalog entry of a model, or undefined when the catalog does not list it. */
export function findModel(vendor: Vendor, model: string): ModelEntry | undefined {
  if (isBuiltInVendor(vendor)) {
    const name = vendor === 'bedrock' ? bedrockBaseModel(model) : model
    const entry = CATALOG.find(
      (candidate) =>
        candidate.vendor === vendor &&
        (candidate.model === name || candidate.snapshots?.includes(name) === true),
    )
    return entry !== undefined && vendor === 'bedrock' ? bedrockProfileEntry(entry, model) : entry
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
  // An entry shares as much as the closest of its names: the catalog's, and the API's own ids that are
  // names of their own (`deepseek-v4-flash`), not dated snapshots, whose digits match any name's end.
  const closeness = (entry: ModelEntry) =>
    Math.max(
      ...[entry.model, ...(entry.snapshots ?? []).filter((snapshot) => !/-\d{8}$/.test(snapshot))].map(
        shared,
      ),
    )
  return catalogEntries()
    .filter((entry) => entry.vendor === vendor)
    .reduce((best, entry) => (closeness(entry) > closeness(best) ? entry : best), fallback)
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
