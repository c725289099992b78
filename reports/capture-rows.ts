// The captured-traffic port: exchanges of a capture (serve --record, or the in-process recorder) become
// the same step rows as a run's, through the one row core. Attribution is wire-level (no session log
// names an event); the ideal is the simulator's counterfactual read, as in a run. What changed at a break
// is the one the tracker computed while serving (`CapturedExchange.change`), where the capture kept it.

import { simulationModel, vendorOf } from '../providers/catalog.ts'
import { answered, type CapturedExchange, reportedUsage } from '../providers/wire/exchange.ts'
import { costUsd } from './cost.ts'
import { type RowLabels, stepRow } from './rows.ts'
import type { StepRow } from './types.ts'
import { wireBreak, withProviderSide } from './wire-attribution.ts'

/** The labels every row of a capture shares: the run id and the scenario a capture is reported as. */
export interface CaptureLabels {
  runId: string
  /** The scenario column of a capture's rows (sessions are its variants); `capture` by default. */
  scenario: string
}

/** The default scenario name of captured traffic. */
export const CAPTURE_SCENARIO = 'capture'

/** Rows of one captured conversation, request by request; holds only the previous successful request. */
export class CaptureRowBuilder {
  private readonly labels: CaptureLabels
  private previous: CapturedExchange | undefined

  constructor(labels: CaptureLabels) {
    this.labels = labels
  }

  add(exchange: CapturedExchange): StepRow {
    const entry = simulationModel(vendorOf(exchange.provider), exchange.model)
    const labels: RowLabels = {
      runId: this.labels.runId,
      scenario: this.labels.scenario,
      variant: exchange.conversation,
      provider: exchange.provider,
      model: exchange.model,
      route: entry.route,
      turn: exchange.turn,
      step: exchange.step,
      attempt: exchange.attempt,
      headerReason: undefined,
      startsSeries: false,
      virtualTimeS: exchange.at,
      latencyMs: exchange.latencyMs,
    }
    const conversation = {
      ...conversationLabels(exchange),
      ...(entry.simulatedAs !== undefined ? { simulatedAs: entry.simulatedAs } : {}),
    }
    if (!answered(exchange)) return stepRow({ labels, conversation })
    const previous = this.previous
    this.previous = exchange
    const usage = reportedUsage(exchange)
    // Answered without usage: a request all the same, the next one's previous; what it read, lost and cost
    // is not known, so it names no break either.
    if (usage === undefined)
      return stepRow({
        labels,
        conversation,
        unreported: {
          cold: previous === undefined,
          ...(exchange.simulation !== undefined ? { simulated: exchange.simulation.counts } : {}),
        },
      })
    const found =
      previous === undefined
        ? undefined
        : wireBreak(previous.digest, exchange.digest, exchange.compactedBy !== undefined)
    // The text that changed is what the tracker kept while it served: the digests hold none.
    const attribution =
      found === undefined || exchange.change === undefined ? found : { ...found, change: exchange.change }
    const counterfactual = withProviderSide(
      attribution,
      previous === undefined ? undefined : exchange.simulation?.counterfactual,
      exchange.simulation?.counts.read ?? usage.cacheRead ?? 0,
    )
    const row = stepRow({
      labels,
      conversation,
      measured: {
        usage,
        cold: previous === undefined,
        counterfactual,
        attribution,
        prices: entry.prices,
        ...(exchange.simulation?.predicted === true ? { predicted: exchange.simulation.counts } : {}),
      },
    })
    const marked = exchange.simulation?.marked
    if (marked === undefined) return row
    // Marked, the same request would have read and written these, and answered the same output.
    row.markedCostUsd = costUsd(
      {
        uncached: marked.uncached,
        read: marked.read,
        write5m: marked.write5m,
        write1h: marked.write1h,
        output: usage.output,
      },
      entry.prices,
    )
    return row
  }
}

/** What a row says of its conversation: the session it belongs to, its kind and the agent that sent it. */
function conversationLabels(
  exchange: CapturedExchange,
): Pick<StepRow, 'session' | 'conversationKind' | 'agent'> {
  return {
    ...(exchange.session !== exchange.conversation ? { session: exchange.session } : {}),
    ...(exchange.kind !== 'main' ? { conversationKind: exchange.kind } : {}),
    ...(exchange.agent !== undefined ? { agent: exchange.agent } : {}),
  }
}

/** Rows of a capture's exchanges, in capture order; each conversation gets its own builder. */
export function captureRows(exchanges: Iterable<CapturedExchange>, labels: CaptureLabels): StepRow[] {
  const builders = new Map<string, CaptureRowBuilder>()
  const rows: StepRow[] = []
  for (const exchange of exchanges) {
    let builder = builders.get(exchange.conversation)
    if (builder === undefined) {
      builder = new CaptureRowBuilder(labels)
      builders.set(exchange.conversation, builder)
    }
    rows.push(builder.add(exchange))
  }
  return rows
}
