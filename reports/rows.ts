// Per-step rows: one per provider request, from the loop's request record and the simulator's view of
// the request (the mock provider's own simulation, or a predictor's in live runs). Holds only the
// previous request of the session, so a long session costs memory for one request, not all of them.

import type { RequestRecord } from '../harness/ports.ts'
import type { ProviderId, Seq, SessionEvent, Usage } from '../harness/types.ts'
import type { Prices } from '../providers/catalog.ts'
import type { Counterfactual, PreviousRequest, Prompt, SimCounts, SimTrace } from '../providers/sim/types.ts'
import { type AttributedRequest, type Attribution, clientBreak } from './attribution.ts'
import { type Buckets, costUsd, idealCostUsd } from './cost.ts'
import type { BreakCause, StepRow } from './types.ts'

/** The simulator's view of one request. */
export interface Observation {
  prompt: Prompt
  trace: SimTrace
  /** The counts the simulator computed (in a live run, its prediction). */
  counts: SimCounts
}

/** Labels and lookups of one session's rows. */
export interface SessionRowContext {
  runId: string
  scenario: string
  variant: string
  provider: ProviderId
  model: string
  prices: Prices
  /** The session log as it grows (the loop's projection log). */
  log: readonly SessionEvent[]
  /** A live run: the observation is the simulator's prediction beside the provider's usage. */
  predicted?: boolean
}

interface Previous extends AttributedRequest {
  at: number
  logLength: number
  /** The model the request ran on (its call configuration's). */
  model: string
}

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
  /** What the request measured; absent for a failed attempt. */
  measured?: Measured
}

/**
 * The row core: the one function that builds every step row, whichever port the request came through.
 * The ideal, the loss, the break, the provider-side cause and the cost are defined once, here.
 */
export function stepRow(step: ObservedStep): StepRow {
  const row = step.measured === undefined ? failedRow(step.labels) : measuredRow(step.labels, step.measured)
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
  return labeled(labels, {
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
}

export class SessionRowBuilder {
  private readonly context: SessionRowContext
  private previous: Previous | undefined

  constructor(context: SessionRowContext) {
    this.context = context
  }

  /** The row of one request. */
  add(record: RequestRecord, observation: Observation | undefined): StepRow {
    const { call, outcome } = record
    const labels: RowLabels = {
      runId: this.context.runId,
      scenario: this.context.scenario,
      variant: this.context.variant,
      provider: this.context.provider,
      model: call.request.config.model,
      route: record.route,
      turn: call.turn,
      step: call.step,
      attempt: call.attempt,
      headerReason: record.header?.reason,
      startsSeries: record.header?.startsSeries === true,
      virtualTimeS: call.at,
      latencyMs: outcome.latencyMs,
    }
    if (!outcome.ok) return stepRow({ labels })
    const previous = this.previous
    let attribution: Attribution | undefined
    if (previous !== undefined && observation !== undefined) {
      const current: AttributedRequest = {
        prompt: observation.prompt,
        body: outcome.wire.body,
        sources: outcome.wire.sources,
        trace: observation.trace,
      }
      attribution = clientBreak(
        previous,
        current,
        (seq) => this.context.log[seq],
        (seq) => this.offloadOf(seq, previous.logLength, record.logLength),
      )
      if (attribution?.node !== undefined && call.purpose === 'summary') {
        // A summarizer call that does not extend the conversation diverges because of the compaction itself.
        const start = this.compactionStart(record.logLength)
        attribution = {
          node: attribution.node,
          ...(start !== undefined ? { eventSeq: start } : {}),
          cause: 'compaction-summary',
        }
      }
    }
    if (observation !== undefined && call.purpose === 'step') {
      this.previous = {
        prompt: observation.prompt,
        body: outcome.wire.body,
        sources: outcome.wire.sources,
        trace: observation.trace,
        at: call.at,
        logLength: record.logLength,
        model: call.request.config.model,
      }
    }
    const measured: Measured = {
      usage: outcome.usage,
      cold: previous === undefined,
      // The simulator read the counterfactual itself; a simulation without one (no previous request
      // given) has nothing to compare with.
      counterfactual: previous === undefined ? undefined : observation?.trace.counterfactual,
      attribution,
      prices: this.context.prices,
      ...(this.context.predicted === true && observation !== undefined
        ? { predicted: observation.counts }
        : {}),
    }
    return stepRow({ labels, measured })
  }

  /** The previous request of the session, for a simulation to compute the next one's counterfactual. */
  previousRequest(): PreviousRequest | undefined {
    const previous = this.previous
    if (previous === undefined) return undefined
    const machine = previous.trace.machine
    return { prompt: previous.prompt, ...(machine !== undefined ? { machine } : {}), model: previous.model }
  }

  /** The seq of the latest compaction/start before `logLength`. */
  private compactionStart(logLength: number): Seq | undefined {
    for (let index = logLength - 1; index >= 0; index -= 1) {
      if (this.context.log[index]?.type === 'compaction/start') return index
    }
    return undefined
  }

  /** The image/offload event committed since the previous request that targets `seq`, if any. */
  private offloadOf(seq: Seq, from: number, to: number): SessionEvent | undefined {
    for (let index = to - 1; index >= from; index -= 1) {
      const event = this.context.log[index]
      if (event?.type === 'image/offload' && event.data.targets.some((target) => target.seq === seq))
        return event
    }
    return undefined
  }
}
