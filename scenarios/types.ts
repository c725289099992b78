// What a scenario is: a script of turns and events, the variants it compares, and one sentence on what
// it demonstrates.

import type { Policies } from '../harness/policies.ts'
import type { Pace, ScriptAction, TextSpec } from '../harness/script.ts'
import type { ProviderId, ToolSchema } from '../harness/types.ts'
import type { CacheRules } from '../providers/catalog.ts'
import type { BuildOptions } from '../providers/types.ts'

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
}
