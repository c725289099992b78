// What a scenario is: a script of turns and events, the variants it compares, and one sentence on what
// it demonstrates.

import type { Policies } from '../harness/policies.ts'
import type { Pace, ScriptAction, TextSpec } from '../harness/script.ts'
import type { ProviderId, ToolSchema } from '../harness/types.ts'
import type { BuildOptions } from '../providers/types.ts'

/** One design variant: policy and request-building choices applied to the same script. */
export interface Variant {
  name: string
  policies?: Partial<Policies>
  build?: Partial<Omit<BuildOptions, 'stream'>>
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
