// The built-in loop's rows: one per provider request, from the loop's request record and the simulator's
// view of the request (the mock provider's own simulation, or a predictor's in live runs), the break found
// by attribution over the wire. Holds only the previous request of the session, so a long session costs
// memory for one request, not all of them.

import type { RequestRecord } from '../harness/ports.ts'
import type { Seq, SessionEvent } from '../harness/types.ts'
import type { Prices } from '../providers/catalog.ts'
import type { PreviousRequest, Prompt, SimCounts, SimTrace } from '../providers/sim/types.ts'
import { type AttributedRequest, type Attribution, clientBreak } from './attribution.ts'
import { type Measured, type RowLabels, stepRow } from './rows.ts'
import type { SeriesLabels, StepRow } from './types.ts'

/** The simulator's view of one request. */
export interface Observation {
  prompt: Prompt
  trace: SimTrace
  /** The counts the simulator computed (in a live run, its prediction). */
  counts: SimCounts
}

/** Labels and lookups of one session's rows. */
export interface SessionRowContext extends SeriesLabels {
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
          ...(attribution.change !== undefined ? { change: attribution.change } : {}),
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
    const row = stepRow({ labels, measured })
    // The provider's own reason, beside cachelab's cause (only where the call asked for it).
    if (outcome.diagnosis !== undefined) row.providerDiagnosis = outcome.diagnosis
    return row
  }

  /** The previous request of the session, for a simulation to compute the next one's counterfactual. */
  previousRequest(): PreviousRequest | undefined {
    const previous = this.previous
    if (previous === undefined) return undefined
    const { machine, carry } = previous.trace
    return {
      prompt: previous.prompt,
      ...(machine !== undefined ? { machine } : {}),
      model: previous.model,
      carry,
    }
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
