// The loop's boundary: what the world offers it each step, the provider port it sends through, the
// records it emits per request, and its environment and setup. Providers and reports build on these.

import type { VirtualClock } from './clock.ts'
import type { Policies, ToolUpdatePolicy } from './policies.ts'
import type { HeaderDecision } from './projections.ts'
import type { Random } from './random.ts'
import type { Pace, PressurePrune } from './script.ts'
import type {
  AdapterConfigDefaults,
  AssistantMessage,
  AttemptError,
  CallConfig,
  DerivedRequest,
  ProviderDiagnosis,
  Route,
  SessionEvent,
  ToolSchema,
  Usage,
  WireSources,
} from './types.ts'

/** What the outside world offers the loop at each step: the rendered prompt, tools, config, prefix source. */
export interface World {
  system: string
  tools: ToolSchema[]
  config: CallConfig
  /** What a session prefix describes (skill catalog, workspace baseline). */
  prefixSource: string
  /** Pruning under context pressure, when the deployment has it (it outlives a loop instance). */
  pressurePrune?: PressurePrune
}

/** One provider call the loop asks for. */
export interface LlmCall {
  request: DerivedRequest
  /** What the model answers in a simulated run; a live run records it in place of the real answer. */
  scripted: AssistantMessage
  /** Virtual start time, seconds. */
  at: number
  turn: number
  step: number
  attempt: number
  purpose: 'step' | 'summary'
}

/** The wire body a call sent and its provenance. */
export interface WireRecord {
  body: Record<string, unknown>
  sources: WireSources
}

/** How a provider call ended. */
export type LlmOutcome =
  | {
      ok: true
      message: AssistantMessage
      usage: Usage
      latencyMs: number
      wire: WireRecord
      /** The provider's cache diagnostics against the session's previous request, when the call asked for them. */
      diagnosis?: ProviderDiagnosis
    }
  | { ok: false; error: AttemptError; retryAfterMs?: number; latencyMs: number; wire?: WireRecord }

/** The provider side of the loop. */
export interface LlmPort {
  send(call: LlmCall): Promise<LlmOutcome>
}

/** Everything reports need about one request (one row of steps.csv). */
export interface RequestRecord {
  sessionId: string
  call: LlmCall
  /** The header written for this request, if one was. */
  header?: HeaderDecision
  route: Route
  /** Log length when the request was derived: the prefix the invariant re-derives it from. */
  logLength: number
  outcome: LlmOutcome
}

/** The loop's environment: identity, time, randomness, the provider port and the event sink. */
export interface LoopEnvironment {
  sessionId: string
  clock: VirtualClock
  random: Random
  llm: LlmPort
  /** Persists each committed event (the JSONL writer); called before the next event is made. */
  sink?: (event: SessionEvent) => void
  onRequest?: (record: RequestRecord) => void
}

/** The fixed setup of a loop: policies and the capabilities of the route. */
export interface LoopSetup {
  policies: Policies
  route: Route
  /** Config values the provider's adapter supplies when the world's config leaves them out. */
  adapterDefaults?: AdapterConfigDefaults
  /** How tool-set changes reach the model on this route (policy override or catalog capability). */
  toolUpdate: ToolUpdatePolicy
  pace: Pace
  /** Retries after a failed attempt (the SDKs' default is 2). */
  maxRetries: number
}
