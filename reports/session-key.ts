// The identity reports group by: one (scenario, variant, provider) is one session of a run, one summary
// row, one chart, one entry of a baseline.

import type { LoopName } from '../harness/loops/types.ts'
import type { ProviderId } from '../harness/types.ts'

/** The (scenario, variant, provider) a step or summary row belongs to. */
export interface SessionKey {
  /** Scenario name. */
  scenario: string
  /** Variant name within the scenario. */
  variant: string
  /** Provider id. */
  provider: ProviderId
  /** The agent loop; the model loop's sessions (and traffic no loop sent) key as they always did. */
  loop?: LoopName
}

/** The loop part of a key: empty for the model loop, so its keys stay what baselines hold. */
function loopPart(key: SessionKey): string | undefined {
  return key.loop === undefined || key.loop === 'model' ? undefined : key.loop
}

/** A string that is equal for rows of the same session and different otherwise. */
export function sessionKeyString(key: SessionKey): string {
  const loop = loopPart(key)
  return `${key.scenario}\u0000${key.variant}\u0000${key.provider}${loop === undefined ? '' : `\u0000${loop}`}`
}

/** The session as people read it: `scenario · variant · provider`. */
export function sessionLabel(key: SessionKey): string {
  const loop = loopPart(key)
  return `${key.scenario} · ${key.variant} · ${key.provider}${loop === undefined ? '' : ` · ${loop} loop`}`
}

/** Group rows by session, groups and rows within them in first-seen order. */
export function groupBySession<T extends SessionKey>(rows: readonly T[]): T[][] {
  const groups = new Map<string, T[]>()
  for (const row of rows) {
    const key = sessionKeyString(row)
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [row])
    else group.push(row)
  }
  return [...groups.values()]
}
