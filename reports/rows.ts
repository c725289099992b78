// The row core: per-step rows, one per provider request, built the same way whichever port the request
// came through (the built-in loop's builder is session-row-builder.ts; captures, external and library
// loops and imported transcripts have their own translators). Loads no attribution and no simulator:
// a port that finds its breaks itself hands them in.

import type { Usage } from '../harness/types.ts'
import type { Prices } from '../providers/catalog.ts'
import type { Counterfactual, SimCounts } from '../providers/sim/types.ts'
import type { Attribution } from './attribution.ts'
import { type Buckets, costUsd, idealCostUsd } from './cost.ts'
import type { BreakCause, StepRow } from './types.ts'

/** The buckets of a normalized usage. */
export function bucketsOf(usage: Usage): Buckets {
  const write1h = usage.cacheWrite1h ?? 0
  const write = usage.cacheWrite ?? 0
  return {
    uncached: usage.uncached,
    read: usage.cacheRead ?? 0,
    write5m: usage.cacheWrite5m ?? write - write1h,
    write1h,
    output: usage.output,
  }
}

/** What a row says about a request besides its measurements. */
export type RowLabels = Pick<
  StepRow,
  | 'runId'
  | 'scenario'
  | 'variant'
  | 'provider'
  | 'model'
  | 'route'
  | 'turn'
  | 'step'
  | 'attempt'
  | 'headerReason'
  | 'startsSeries'
  | 'virtualTimeS'
  | 'latencyMs'
>

/** What a successful request measured, and what its port knows about why. */
export interface Measured {
  /** The usage the provider reported (normalized). */
  usage: Usage
  /** First successful request of its session. */
  cold: boolean
  /**
   * The simulator's read of the request had it extended the previous one unchanged; none for a cold one.
   * A port may name a provider-side cause the simulator does not (a re-rendering the wire shows).
   */
  counterfactual: (Omit<Counterfactual, 'cause'> & { cause?: BreakCause }) | undefined
  /** The client-side break the port found (wire node, event, cause), if any. */
  attribution: Attribution | undefined
  prices: Prices
  /** The simulator's prediction, when the usage came from the real provider. */
  predicted?: SimCounts
}

/** What a port knows of a request's conversation and source beside its labels. */
export type ConversationLabels = Partial<
  Pick<StepRow, 'loop' | 'session' | 'conversationKind' | 'agent' | 'simulatedAs'>
>

/**
 * One observed exchange, as every port hands it to the row core: the built-in loop, external and library
 * loops, captures (agents' included) and imported transcripts each translate what they saw into this.
 */
export interface ObservedStep {
  labels: RowLabels
  /** The conversation the request belongs to and the agent or loop that sent it, where the port knows. */
  conversation?: ConversationLabels | undefined
  /** What the request measured; absent for a failed attempt and for a request answered without usage. */
  measured?: Measured
  /** The provider answered the request but reported no usage (`measured` absent). */
  unreported?: Unreported
}

/** A request the provider answered without reporting its usage to the client. */
export interface Unreported {
  /** First answered request of its session. */
  cold: boolean
  /**
   * The simulator's count of the request (what the simulated provider billed, or its prediction of a live
   * one), kept beside the row as a prediction, never as its usage.
   */
  simulated?: SimCounts
}

/**
 * The row core: the one function that builds every step row, whichever port the request came through.
 * The ideal, the loss, the break, the provider-side cause and the cost are defined once, here.
 */
export function stepRow(step: ObservedStep): StepRow {
  const row =
    step.measured !== undefined
      ? measuredRow(step.labels, step.measured)
      : step.unreported !== undefined
        ? unreportedRow(step.labels, step.unreported)
        : failedRow(step.labels)
  // Set on the row just built: copying a row of 34 keys into a spread literal costs V8 far more.
  return step.conversation === undefined ? row : Object.assign(row, step.conversation)
}

/** The row of a failed attempt: labels only, every token column 0. */
function failedRow(labels: RowLabels): StepRow {
  const fields = {
    ok: false,
    cold: false,
    inputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    uncachedTokens: 0,
    outputTokens: 0,
    hitRatio: undefined,
    idealCacheReadTokens: 0,
    lostTokens: 0,
    breakNode: undefined,
    breakEventSeq: undefined,
    breakCause: undefined,
    providerCause: undefined,
    providerLostTokens: 0,
    providerLostUsd: 0,
    costUsd: 0,
    idealCostUsd: 0,
    predictedCacheReadTokens: undefined,
    predictedCacheWriteTokens: undefined,
  } as const
  return labeled(labels, fields)
}

/**
 * The row of a request answered without usage: a request (`ok`), its numbers unknown. They are 0 so that
 * sums over rows add only what was reported; `usageNotReported` tells every writer to leave them empty.
 */
function unreportedRow(labels: RowLabels, unreported: Unreported): StepRow {
  const row = failedRow(labels)
  row.ok = true
  row.cold = unreported.cold
  row.predictedCacheReadTokens = unreported.simulated?.read
  row.predictedCacheWriteTokens = unreported.simulated?.write
  row.usageNotReported = true
  return row
}

/** The fields of a row besides its labels. */
type RowFields = Omit<StepRow, keyof RowLabels | keyof ConversationLabels>

/**
 * A row: its labels, then its fields, in that order, as one object literal. V8 (Node 20) keeps an object
 * built by `Object.assign` or a spread past a dozen keys as a hash table: about 1.7 KB a row against 0.3
 * as a literal, every read a lookup, and an import's rows were most of what its garbage collector copied
 * (notes/2026-12-05-import-against-ccusage.md). A loop's labels carry its name after the others: those are
 * copied as they come, the key where it was.
 */
function labeled(labels: RowLabels, fields: RowFields): StepRow {
  if ('loop' in labels) return Object.assign({}, labels as RowLabels & Pick<StepRow, 'loop'>, fields)
  return {
    runId: labels.runId,
    scenario: labels.scenario,
    variant: labels.variant,
    provider: labels.provider,
    model: labels.model,
    route: labels.route,
    turn: labels.turn,
    step: labels.step,
    attempt: labels.attempt,
    headerReason: labels.headerReason,
    startsSeries: labels.startsSeries,
    virtualTimeS: labels.virtualTimeS,
    latencyMs: labels.latencyMs,
    ok: fields.ok,
    cold: fields.cold,
    inputTokens: fields.inputTokens,
    cacheReadTokens: fields.cacheReadTokens,
    cacheWriteTokens: fields.cacheWriteTokens,
    uncachedTokens: fields.uncachedTokens,
    outputTokens: fields.outputTokens,
    hitRatio: fields.hitRatio,
    idealCacheReadTokens: fields.idealCacheReadTokens,
    lostTokens: fields.lostTokens,
    breakNode: fields.breakNode,
    breakEventSeq: fields.breakEventSeq,
    breakCause: fields.breakCause,
    providerCause: fields.providerCause,
    providerLostTokens: fields.providerLostTokens,
    providerLostUsd: fields.providerLostUsd,
    costUsd: fields.costUsd,
    idealCostUsd: fields.idealCostUsd,
    predictedCacheReadTokens: fields.predictedCacheReadTokens,
    predictedCacheWriteTokens: fields.predictedCacheWriteTokens,
  }
}

/**
 * The row of a successful request: the one definition of every metric, whichever port the request came
 * through. The ideal is the counterfactual's read (never below the actual read), the warm read never
 * below the ideal; a provider-side cause stands alone as the break when the port found no client break.
 * Beside a real provider's usage (a prediction given), the loss is the simulator's own: its ideal minus
 * its predicted read, added to the observed read.
 */
function measuredRow(labels: RowLabels, measured: Measured): StepRow {
  const buckets = bucketsOf(measured.usage)
  const input = measured.usage.input
  const read = buckets.read
  const counterfactual = measured.counterfactual
  // The counterfactual is the simulator's read; it is compared with the simulator's own read of the
  // request. Beside a real provider that is the prediction, so a provider that reads less than the
  // published rules (or more) moves the read, not the loss: the gap shows in the prediction columns.
  const simulated = measured.predicted?.read ?? read
  const simulatedIdeal = Math.max(simulated, counterfactual?.ideal ?? simulated)
  const warm = Math.max(simulatedIdeal, counterfactual?.warm ?? simulatedIdeal)
  const providerCause = warm > simulatedIdeal ? counterfactual?.cause : undefined
  const attribution =
    measured.attribution ?? (providerCause !== undefined ? { cause: providerCause } : undefined)
  const lost = Math.min(simulatedIdeal - simulated, input - read)
  const ideal = read + lost
  const providerLost = warm - simulatedIdeal
  const prices = measured.prices
  const row = labeled(labels, {
    ok: true,
    cold: measured.cold,
    inputTokens: input,
    cacheReadTokens: read,
    cacheWriteTokens: buckets.write5m + buckets.write1h,
    uncachedTokens: buckets.uncached,
    outputTokens: buckets.output,
    hitRatio: input === 0 ? undefined : read / input,
    idealCacheReadTokens: ideal,
    lostTokens: lost,
    breakNode: attribution?.node,
    breakEventSeq: attribution?.eventSeq,
    breakCause: attribution?.cause,
    providerCause,
    providerLostTokens: providerLost,
    providerLostUsd: idealCostUsd(buckets, lost, prices) - idealCostUsd(buckets, lost + providerLost, prices),
    costUsd: costUsd(buckets, prices),
    idealCostUsd: idealCostUsd(buckets, lost, prices),
    predictedCacheReadTokens: measured.predicted?.read,
    predictedCacheWriteTokens: measured.predicted?.write,
  })
  // Only a break's row carries it: the rows without one keep the literal's shape (see `labeled`).
  if (attribution?.change !== undefined) row.breakChange = attribution.change
  return row
}
