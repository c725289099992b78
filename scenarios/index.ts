// The scenario library: every scenario by name, in the order `cachelab list` shows them.

import { appendOnly } from './append-only.ts'
import { compactionSummary } from './compaction-summary.ts'
import { explicitCache } from './explicit-cache.ts'
import { flakyProvider } from './flaky-provider.ts'
import { idleTtl } from './idle-ttl.ts'
import { imageOffload } from './image-offload.ts'
import { longSession } from './long-session.ts'
import { midTurnInput } from './mid-turn-input.ts'
import { parallelToolResults } from './parallel-tool-results.ts'
import { promptChange } from './prompt-change.ts'
import { resume } from './resume.ts'
import { seriesStartUnchanged } from './series-start-unchanged.ts'
import { sessionPrefix } from './session-prefix.ts'
import { toolResultPrune } from './tool-result-prune.ts'
import { toolSchemaChange } from './tool-schema-change.ts'
import type { Scenario } from './types.ts'

export { replaySession } from './replay.ts'
export { chooseModel, type NotApplicable, type Requirement, variantRequirements } from './requirements.ts'
export {
  type MatrixPlan,
  planMatrix,
  runSession,
  type SessionOptions,
  type SessionPlan,
  type SessionResult,
} from './run.ts'
export type { Scenario, Variant } from './types.ts'

export const SCENARIOS: readonly Scenario[] = [
  appendOnly,
  promptChange,
  seriesStartUnchanged,
  sessionPrefix,
  compactionSummary,
  toolResultPrune,
  toolSchemaChange,
  idleTtl,
  parallelToolResults,
  resume,
  imageOffload,
  flakyProvider,
  midTurnInput,
  longSession,
  explicitCache,
]

/** A scenario by name, or undefined. */
export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((scenario) => scenario.name === name)
}
