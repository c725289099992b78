// The scenario library: every scenario by name, in the order `cachelab list` shows them.

import { appendOnly } from './append-only.ts'
import type { Scenario } from './types.ts'

export type { Scenario, Variant } from './types.ts'

export const SCENARIOS: readonly Scenario[] = [appendOnly]

/** A scenario by name, or undefined. */
export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((scenario) => scenario.name === name)
}
