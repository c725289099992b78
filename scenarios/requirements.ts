// What a variant needs from the model it runs on, and which model each (scenario, provider) runs on: one
// model for all of a scenario's variants, so they stay comparable, chosen so that every variant can run
// on it; a variant the model cannot serve is not applicable there and produces no numbers.

import { DEFAULT_POLICIES } from '../harness/policies.ts'
import type { ProviderId } from '../harness/types.ts'
import {
  acceptsSystemInHistory,
  catalogEntries,
  type ModelEntry,
  resolveModel,
  vendorOf,
} from '../providers/catalog.ts'
import type { Scenario, Variant } from './types.ts'

/**
 * A capability a variant needs from the model. `system-in-history`: the variant appends a changed system
 * prompt as a system message after the history, which only a model with the `in-history` route accepts
 * (Anthropic refuses it with a 400) and reads (OpenAI-style APIs accept it from any model).
 * `long-lifetime`: see below.
 */
export type Requirement =
  | { kind: 'system-in-history' }
  /**
   * The variant asks for a cache lifetime longer than the default (Anthropic's 1-hour TTL, OpenAI's 24h
   * retention): a cache whose lifetime no request can set (Gemini's implicit one), a prefix cache without
   * an extended retention (a compatible provider's) or a model taking only 5-minute cache points cannot.
   */
  | { kind: 'long-lifetime' }

/** A variant that does not run on the model its scenario runs on, and why. */
export interface NotApplicable {
  scenario: string
  variant: string
  provider: ProviderId
  model: string
  /** One sentence a user can act on: what the variant needs and what the model lacks. */
  reason: string
}

/** The model a scenario runs on for one provider, and the variants that cannot run on it. */
export interface ModelChoice {
  entry: ModelEntry
  notApplicable: Array<{ variant: Variant; reason: string }>
}

/** The capabilities a variant needs, from its policies. */
export function variantRequirements(variant: Variant): Requirement[] {
  const policies = { ...DEFAULT_POLICIES, ...variant.policies }
  // A prompt in the request header never becomes a message, whatever the route says.
  const appendsSystem = policies.systemPrompt === 'surface' && policies.route === 'in-history'
  const longLifetime = variant.build?.anthropicTtl === '1h' || variant.build?.retention === '24h'
  return [
    ...(appendsSystem ? [{ kind: 'system-in-history' as const }] : []),
    ...(longLifetime ? [{ kind: 'long-lifetime' as const }] : []),
  ]
}

/**
 * Why a request cannot ask the model's cache for a longer lifetime, or undefined when it can (or the cache
 * keeps prefixes for hours anyway).
 */
function lifetimeGap(entry: ModelEntry): string | undefined {
  switch (entry.cache.kind) {
    case 'anthropic':
    case 'openai-breakpoint':
    case 'deepseek':
      return undefined
    case 'openai-prefix':
      return entry.cache.extendedRetention
        ? undefined
        : `needs a cache lifetime option beyond the idle one; ${entry.model} has none (its prefixes live ${entry.cache.idleEvictionSeconds} s idle)`
    case 'bedrock':
      return entry.cache.ttlOptions.includes('1h')
        ? undefined
        : `needs a cache lifetime option beyond 5 minutes; ${entry.model} takes only 5-minute cache points`
    case 'gemini':
      return `needs a cache lifetime a request can set; ${entry.model}'s implicit cache has none (an explicit cache holds a fixed head: see the explicit-cache scenario)`
  }
}

/** Why a model cannot serve a requirement, or undefined when it can. */
export function unmetReason(requirement: Requirement, entry: ModelEntry): string | undefined {
  switch (requirement.kind) {
    case 'system-in-history':
      return acceptsSystemInHistory(entry)
        ? undefined
        : `needs the in-history system-prompt route; ${entry.model} reads the system prompt only at the head (route '${entry.route}')`
    case 'long-lifetime':
      return lifetimeGap(entry)
  }
}

/** Why a model cannot run a variant (its first unmet requirement), or undefined when it can. */
export function variantUnmet(variant: Variant, entry: ModelEntry): string | undefined {
  for (const requirement of variantRequirements(variant)) {
    const reason = unmetReason(requirement, entry)
    if (reason !== undefined) return reason
  }
  return undefined
}

/**
 * The model a scenario runs on for a provider. An explicit `model` is taken as is (an unknown one is a
 * usage error), and the variants it cannot serve are not applicable. Otherwise the provider's default
 * model when it serves every variant of the scenario, else the first catalog model of the vendor that
 * does, else the default with the variants it cannot serve not applicable. The choice looks at all of the
 * scenario's variants, not a filtered few, so a variant's numbers do not depend on which others ran.
 */
export function chooseModel(scenario: Scenario, provider: ProviderId, model?: string): ModelChoice {
  const servesAll = (entry: ModelEntry) =>
    scenario.variants.every((variant) => variantUnmet(variant, entry) === undefined)
  const vendor = vendorOf(provider)
  const fallback = resolveModel(provider, model)
  const entry =
    model !== undefined || servesAll(fallback)
      ? fallback
      : (catalogEntries().find((candidate) => candidate.vendor === vendor && servesAll(candidate)) ??
        fallback)
  const notApplicable: ModelChoice['notApplicable'] = []
  for (const variant of scenario.variants) {
    const reason = variantUnmet(variant, entry)
    if (reason !== undefined) notApplicable.push({ variant, reason })
  }
  return { entry, notApplicable }
}
