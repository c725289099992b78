// The design variants of the loop under test, as policies a scenario variant sets (ARCHITECTURE.md's
// policy table). Each policy names the DSH generation or seed it models.

import type { PruneKeep, Route } from './types.ts'

/** Where the system prompt lives: the request header (DSH B) or surface node 0 (DSH C). */
export type SystemPromptPolicy = 'header' | 'surface'

/** At a new request series with an unchanged rendering: rewrite node 0 anyway (DSH C) or keep the live node (seed 004). */
export type SeriesStartPolicy = 'consolidate' | 'keep-live'

/** The series-start policies a session can be re-derived under. */
export const SERIES_START_POLICIES: readonly SeriesStartPolicy[] = ['consolidate', 'keep-live']

/** Session-stable opener content (seed 000): none, frozen per instance, recomputed after history, or durable history. */
export type SessionPrefixPolicy = 'off' | 'frozen' | 'after-slot' | 'opener'

/** How tool-set changes reach the model (DSH D). */
export type ToolUpdatePolicy = 'unsupported' | 'addition-only' | 'in-history'

/** How images are offloaded once a request carries too many: in stable quanta, or just enough each request. */
export type ImageOffloadPolicy = 'quantized' | 'per-request'

/** The full policy set of one variant. */
export interface Policies {
  systemPrompt: SystemPromptPolicy
  /** Overrides the model catalog's route capability when set. */
  route?: Route
  seriesStart: SeriesStartPolicy
  sessionPrefix: SessionPrefixPolicy
  /** Overrides the model catalog's tool-update capability when set. */
  toolUpdates?: ToolUpdatePolicy
  /** Which part of a long tool result a prune keeps (DSH's pruner keeps head and tail: `middle` is pruned). */
  pruneKeep: PruneKeep
  /** The summarizer call replays the conversation prefix (cache-friendly) or sends its own prompt. */
  summaryReplayPrefix: boolean
  imageOffload: ImageOffloadPolicy
  /** Images a request may carry before offload starts. */
  imageLimit: number
  /** Quantum of the `quantized` offload: images are removed in groups of this many. */
  imageQuantum: number
}

/** DSH generation C as the default loop. */
export const DEFAULT_POLICIES: Policies = {
  systemPrompt: 'surface',
  seriesStart: 'consolidate',
  sessionPrefix: 'off',
  pruneKeep: 'middle',
  summaryReplayPrefix: true,
  imageOffload: 'quantized',
  imageLimit: 20,
  imageQuantum: 10,
}
