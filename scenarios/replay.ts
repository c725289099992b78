// Replaying a session log: every step request is re-derived from the log prefix before its answer,
// built into a wire body by the provider's adapter, simulated and turned into a report row, with no SDK
// or HTTP in between. It proves a log alone reproduces a run's numbers, and it is what the long-session
// benchmark times.

import { deriveRequest } from '../harness/derive.ts'
import type { RequestRecord } from '../harness/ports.ts'
import { SessionProjection } from '../harness/session.ts'
import type { HeaderReason, ProviderId, SessionEvent } from '../harness/types.ts'
import { resolveModel } from '../providers/catalog.ts'
import { createAdapter, simulatedEndpoint } from '../providers/index.ts'
import { wireUsage } from '../providers/mock/usage.ts'
import { CacheSimulators, type SimulatorOptions } from '../providers/sim/index.ts'
import type { BuildOptions } from '../providers/types.ts'
import { SessionRowBuilder } from '../reports/session-row-builder.ts'
import type { StepRow } from '../reports/types.ts'

export interface ReplayOptions {
  provider: ProviderId
  model?: string
  /** Request-building options the run used (defaults: the provider's). */
  build: BuildOptions
  simulator?: SimulatorOptions
  /** Labels of the rows. */
  labels: { runId: string; scenario: string; variant: string }
  /** Called after each request with its index (benchmarks sample memory here). */
  onRequest?: (index: number) => void
}

/**
 * The rows of a session log's successful step requests, recomputed from the log. Failed attempts and
 * compaction summarizer calls (one-shot requests the log does not rebuild) are left out.
 */
export function replaySession(events: readonly SessionEvent[], options: ReplayOptions): StepRow[] {
  const first = events[0]
  if (first?.type !== 'session/start') throw new Error('a session log begins with session/start')
  const projection = SessionProjection.empty(first.data.sessionId)
  const entry = resolveModel(options.provider, options.model)
  const adapter = createAdapter(options.provider, simulatedEndpoint(options.provider))
  const simulators = new CacheSimulators(options.simulator)
  const builder = new SessionRowBuilder({
    ...options.labels,
    provider: options.provider,
    model: entry.model,
    prices: entry.prices,
    log: projection.log,
  })
  const rows: StepRow[] = []
  let header: { reason: HeaderReason; startsSeries: boolean } | undefined
  for (const event of events) {
    if (event.type === 'request/header') {
      header = {
        reason: event.data.reason,
        startsSeries: event.data.reason === 'series' || event.data.startsSeries === true,
      }
    }
    if (event.type === 'assistant/message') {
      const request = deriveRequest(projection)
      const at = event.time - (event.data.latencyMs ?? 0) / 1000
      const built = adapter.buildRequest(request, options.build)
      const previous = builder.previousRequest()
      const simulation = simulators.simulate(adapter.api, {
        body: built.body,
        at,
        output: event.data.message,
        ...(previous !== undefined ? { previous } : {}),
      })
      const usage = adapter.parseUsage(
        wireUsage(adapter.api, simulation.counts, simulators.openai.reportsWrites(entry.model)),
      )
      const record: RequestRecord = {
        sessionId: projection.sessionId,
        call: {
          request,
          scripted: event.data.message,
          at,
          turn: event.data.turn,
          step: event.data.step,
          attempt: event.data.attempt,
          purpose: 'step',
        },
        ...(header !== undefined && event.data.attempt === 0 ? { header } : {}),
        route: request.route,
        logLength: event.seq,
        outcome: {
          ok: true,
          message: event.data.message,
          usage,
          latencyMs: event.data.latencyMs ?? 0,
          wire: { body: built.body, sources: built.sources },
        },
      }
      rows.push(
        builder.add(record, {
          prompt: simulation.prompt,
          trace: simulation.trace,
          counts: simulation.counts,
        }),
      )
      options.onRequest?.(rows.length)
      header = undefined
    }
    projection.apply(event)
  }
  return rows
}
