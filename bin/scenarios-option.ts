// `--scenarios PATH` and `--scenario NAME`: which scenarios a command knows (the user's files beside the
// built-ins) and which of them a run covers.

import { SCENARIOS } from '../scenarios/index.ts'
import { loadUserScenarios, type UserScenario } from '../scenarios/load.ts'
import type { Scenario } from '../scenarios/types.ts'
import { listOption } from './args.ts'

/** The scenarios a command knows: the user's (from `--scenarios`, when given) and the built-ins. */
export interface KnownScenarios {
  user: UserScenario[]
  builtIn: readonly Scenario[]
}

/** Load the files `--scenarios` names (none when the flag is absent). */
export async function knownScenarios(scenariosFlag: string | undefined): Promise<KnownScenarios> {
  const user = scenariosFlag === undefined ? [] : await loadUserScenarios(scenariosFlag, SCENARIOS)
  return { user, builtIn: SCENARIOS }
}

/** Every known scenario, the user's first. */
export function allScenarios(known: KnownScenarios): Scenario[] {
  return [...known.user.map((entry) => entry.scenario), ...known.builtIn]
}

/**
 * The scenarios a run covers. `--scenario` names any known scenario, the user's or built-in ones, and
 * `all` is every one of them; without it a run covers the user's scenarios when `--scenarios` gave some
 * (a user who points at their files wants their numbers, not the built-in matrix), else the built-ins.
 */
export function chosenScenarios(known: KnownScenarios, scenarioFlag: string | undefined): Scenario[] {
  const every = allScenarios(known)
  const named = listOption(
    scenarioFlag,
    every.map((scenario) => scenario.name),
    'scenario',
  )
  if (named !== undefined) return every.filter((scenario) => named.includes(scenario.name))
  if (scenarioFlag === undefined && known.user.length > 0) return known.user.map((entry) => entry.scenario)
  return every
}
