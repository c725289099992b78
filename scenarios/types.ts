// What a scenario is: a script of turns and events, the variants it compares, and one sentence on what
// it demonstrates.

import type { Policies } from '../harness/policies.ts'
import type { Pace, ScriptAction, TextSpec } from '../harness/script.ts'
import type { ProviderId, ToolSchema } from '../harness/types.ts'
import type { CacheRules } from '../providers/catalog.ts'
import type { BuildOptions } from '../providers/types.ts'
import type { StepRow } from '../reports/types.ts'

/** One design variant: policy and request-building choices applied to the same script. */
export interface Variant {
  name: string
  policies?: Partial<Policies>
  build?: Partial<Omit<BuildOptions, 'stream'>>
  /** Script actions of these kinds are skipped (a `none` variant of an optional step). */
  skip?: Array<ScriptAction['kind']>
  /** Replaces the scenario's script for this variant. */
  script?: ScriptAction[]
  /** Overrides of the simulated provider's cache rules for this variant (a documented rule that changed). */
  rules?: Partial<CacheRules>
}

export interface Scenario {
  name: string
  /** What the scenario demonstrates, in one sentence. */
  demonstrates: string
  variants: Variant[]
  /** The rendered system prompt at the start. */
  system: TextSpec
  tools: ToolSchema[]
  /** What a session prefix describes at the start (session-prefix scenarios). */
  prefixSource?: TextSpec
  pace?: Partial<Pace>
  /** Output cap of every request. */
  maxTokens?: number
  /** Providers the scenario runs on when the run names none (default: all). */
  providers?: ProviderId[]
  script: ScriptAction[]
  /** What `demonstrates` says, as checks evaluated on every run. */
  claims: Claim[]
}

/** What a claim found on one provider: whether it holds, and the numbers it saw. */
export interface ClaimVerdict {
  holds: boolean
  /** The observed numbers, in a few words (`ttl-5m: ttl-expired at 4.1, 8,421 tokens`). */
  observed: string
}

/**
 * One checkable statement behind a scenario's `demonstrates` sentence: evaluated per provider on the rows
 * of the variants it names, when all of them ran.
 */
export interface Claim {
  /** Unique within its scenario (`expires-after-gap`). */
  id: string
  /** The statement as a sentence. */
  text: string
  /** The variants whose rows it reads. */
  variants: string[]
  /** Providers it applies to (default: every provider the scenario runs on). */
  providers?: ProviderId[]
  /** The verdict from the step rows of each named variant on one provider. */
  check(rows: (variant: string) => readonly StepRow[]): ClaimVerdict
}
