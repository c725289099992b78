// The public surface of harness/: the loop under test, its vocabulary, the session log and derivation.

export { VirtualClock } from './clock.ts'
export { deriveRequest } from './derive.ts'
export { CachelabError } from './errors.ts'
export { fillerText } from './filler.ts'
export { AgentLoop } from './loop.ts'
export type { Policies } from './policies.ts'
export { DEFAULT_POLICIES } from './policies.ts'
export type {
  LlmCall,
  LlmOutcome,
  LlmPort,
  LoopEnvironment,
  LoopSetup,
  RequestRecord,
  World,
} from './ports.ts'
export type { Arrival, Pace, PressurePrune, ScriptAction, StepScript, TurnScript } from './script.ts'
export { resolveText } from './script.ts'
export { SessionProjection } from './session.ts'
export { JsonlSessionWriter, readSessionLog } from './store.ts'
export type {
  DerivedRequest,
  Message,
  ProviderId,
  RequestHeader,
  SessionEvent,
  SessionEventType,
  Usage,
} from './types.ts'
export { PROVIDER_IDS, SESSION_FORMAT_VERSION } from './types.ts'
