// What a user needs to write scenario files in their own project: `defineScenario` for editor help, the
// schema's types, and the helpers the built-in scenarios write their claims with. The package entry
// `cachelab` re-exports this file.

import type { StepRow } from '../reports/types.ts'
import type { Claim, ClaimVerdict, Scenario, Variant } from './types.ts'

export type { Policies } from '../harness/policies.ts'
export type {
  Arrival,
  Pace,
  PressurePrune,
  ScriptAction,
  StepScript,
  TextSpec,
  ToolCallScript,
  TurnScript,
} from '../harness/script.ts'
export type {
  CallConfig,
  Fault,
  ImageBlock,
  JsonObject,
  ProviderId,
  TextBlock,
  ToolSchema,
} from '../harness/types.ts'
export type { CacheRules } from '../providers/catalog.ts'
export type { BreakpointStrategy, BuildOptions } from '../providers/types.ts'
export type { BreakCause, StepRow } from '../reports/types.ts'
export {
  breaks,
  breaksText,
  breaksWith,
  lostTokens,
  providerLostTokens,
  tokensText,
  warmRatio,
  warmText,
} from './claims.ts'
export type { Claim, ClaimVerdict, Scenario, Variant } from './types.ts'

/**
 * A scenario as `defineScenario` takes it: the `Scenario` schema, with each claim's `variants` and its
 * `rows(variant)` limited to the variant names the scenario declares, so a misspelt one is a type error.
 */
export interface ScenarioDefinition<VariantName extends string>
  extends Omit<Scenario, 'variants' | 'claims'> {
  variants: Array<Variant & { name: VariantName }>
  claims: Array<ClaimDefinition<NoInfer<VariantName>>>
}

/** A claim of `defineScenario`: `Claim` with its variant names checked against the scenario's. */
export interface ClaimDefinition<VariantName extends string> extends Omit<Claim, 'variants' | 'check'> {
  variants: VariantName[]
  check(rows: (variant: VariantName) => readonly StepRow[]): ClaimVerdict
}

/**
 * Returns the scenario unchanged; it exists for the types: editor completion on every field, and claims
 * that can only name the scenario's own variants. `cachelab run --scenarios FILE` validates the same
 * schema at run time, so a file without types (`.js`, `.mjs`) gets the same checks as errors.
 */
export function defineScenario<const VariantName extends string>(
  scenario: ScenarioDefinition<VariantName>,
): Scenario {
  return scenario as Scenario
}
