// The scenario script vocabulary: what the user says, what the model answers, what tools return, and
// what happens between turns (idle time, prompt and tool changes, compaction, restarts, faults).

import { fillerText } from './filler.ts'
import type { CallConfig, Fault, ImageBlock, JsonObject, PruneKeep, TextBlock, ToolSchema } from './types.ts'

/** Text given literally, or as a size in tokens filled deterministically. */
export type TextSpec = string | { tokens: number; seed?: string }

/** Resolve a text spec deterministically: literal text, or filler seeded by the spec or the caller. */
export function resolveText(spec: TextSpec, seed: string): string {
  return typeof spec === 'string' ? spec : fillerText(spec.tokens, spec.seed ?? seed)
}

/** A tool call the model makes and what the tool returns. */
export interface ToolCallScript {
  name: string
  arguments: JsonObject
  result: TextSpec
  isError?: true
}

/** One model call: its text and tool calls. A step without tool calls ends the turn. */
export interface StepScript {
  text?: TextSpec
  toolCalls?: ToolCallScript[]
  /**
   * The user cancels this step while its response streams: the attempt is discarded (an
   * `assistant/attempt` with the `cancelled` type, no assistant message) and the turn ends `aborted`.
   * The provider has still read the request, so what it cached stays cached.
   */
  cancel?: true
  /** Input that arrives while this step's request is in flight, delivered as each kind says (seed 003). */
  arrivals?: Arrival[]
}

/**
 * User or plugin input that arrives while a turn runs (seed 003: followup, steer, inject). Steer and
 * followup wake the agent; inject is silent. Where each lands decides what the next request carries.
 */
export type Arrival =
  /** The user adds to the running task: the message enters the next step (this turn's, if it has one). */
  | { delivery: 'steer'; text: TextSpec }
  /** The user queues the next task: it waits for this turn to end and opens a turn of its own, with these steps. */
  | { delivery: 'followup'; text: TextSpec; steps: StepScript[] }
  /** A plugin adds context silently: it is committed at once and joins whatever request comes next. */
  | { delivery: 'inject'; text: TextSpec; plugin: string }

/** A user turn. */
export interface TurnScript {
  kind: 'turn'
  user: TextSpec | Array<TextBlock | ImageBlock>
  steps: StepScript[]
}

/** Everything a script can do. */
export type ScriptAction =
  | TurnScript
  /** Time passes with no requests. */
  | { kind: 'idle'; seconds: number }
  /** The rendered system prompt changes from the next step on. */
  | { kind: 'set-system'; text: TextSpec }
  /** The active tool set changes from the next step on. */
  | { kind: 'set-tools'; tools: ToolSchema[] }
  /** The call configuration changes from the next step on. */
  | { kind: 'set-config'; config: Partial<Omit<CallConfig, 'provider'>> }
  /** What the session prefix describes changes (a skill catalog, a workspace baseline). */
  | { kind: 'set-prefix-source'; text: TextSpec }
  /** A plugin injects context at the user position before the next turn. */
  | { kind: 'inject'; text: TextSpec; plugin: string }
  /** Summary compaction: every node after the system head except the last `retainNodes` becomes one summary. */
  | { kind: 'compact'; retainNodes: number; summaryTokens: number }
  /** Tool-result pruning: results over `thresholdChars` outside the last `skipLastNodes` nodes keep `keepChars` (which part: `keep`, else the policy). */
  | { kind: 'prune'; thresholdChars: number; keepChars: number; skipLastNodes: number; keep?: PruneKeep }
  /**
   * The deployment prunes under context pressure from now on (DSH's pressure compaction, pruner first):
   * at each step's pre-step, when the context measured after the previous call is at least
   * `contextTokens` (the loop's estimate), results over `thresholdChars` outside the last
   * `skipLastNodes` nodes keep `keepChars`. Inside a turn too: seed 004's cliff came at step 2.
   */
  | ({ kind: 'pressure-prune' } & PressurePrune)
  /** The process restarts: a new loop instance resumes the same log. */
  | { kind: 'restart' }
  /** The next provider request fails this way (simulated providers only). */
  | { kind: 'fault'; fault: Fault }
  /** The next request explicitly starts a new message series. */
  | { kind: 'start-series' }

/** When and how the loop prunes tool results under context pressure. */
export interface PressurePrune {
  /** The measured context (the loop's estimate of the last request and its answer) that triggers a prune. */
  contextTokens: number
  thresholdChars: number
  keepChars: number
  skipLastNodes: number
  keep?: PruneKeep
}

/** The pace of a scenario in virtual time. */
export interface Pace {
  /** Seconds between the end of a turn and the next user message. */
  turnGapSeconds: number
  /** Seconds each tool call takes. */
  toolSeconds: number
}

export const DEFAULT_PACE: Pace = { turnGapSeconds: 20, toolSeconds: 1 }
