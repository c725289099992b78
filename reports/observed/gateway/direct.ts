// The direct route of a gateway's client: the requests the client sent the gateway, simulated as if sent
// straight to the provider of their API, in order, on one account's fresh caches. Its exchanges are the
// baseline a gateway's upstream side is measured against (reports/gateway-rows.ts).

import type { AssistantMessage } from '../../../harness/types.ts'
import { modeledLatencyMs } from '../../../providers/port.ts'
import { CacheSimulators, type SimulatorOptions } from '../../../providers/sim/index.ts'
import { SimulatorRejection } from '../../../providers/sim/types.ts'
import { type CapturedExchange, reportedUsage } from '../../../providers/wire/exchange.ts'
import { servedUsage } from '../capture/recorder.ts'
import { CaptureTracker } from '../capture/tracker.ts'

/** The answer the direct route's simulation assumes when the client side kept none. */
const NO_ANSWER: AssistantMessage = { role: 'assistant', content: [] }

/**
 * The client's exchanges (with their bodies: a capture with `keepBodies`) simulated on the direct route,
 * one per exchange in order: undefined for an exchange without a body or one the provider would refuse.
 */
export function simulateDirect(
  client: readonly CapturedExchange[],
  options: SimulatorOptions = {},
): (CapturedExchange | undefined)[] {
  const simulators = new CacheSimulators(options)
  const direct: (CapturedExchange | undefined)[] = []
  const tracker = new CaptureTracker({ linearize: (api, body) => simulators.linearize(api, body) })
  for (const exchange of client) {
    const body = exchange.request
    direct.push(undefined)
    if (body === undefined) continue
    const placement = tracker.place(exchange.api, exchange.session, body)
    const previous = tracker.previous(placement.conversation)
    const told = reportedUsage(exchange)
    let simulation: ReturnType<CacheSimulators['simulate']>
    try {
      simulation = simulators.simulate(exchange.api, {
        body,
        at: exchange.at,
        output: exchange.answer ?? NO_ANSWER,
        // The client's own output count, where it was told one (a gateway's zeros are none).
        ...(told !== undefined ? { outputTokens: told.output } : {}),
        ...(previous !== undefined ? { previous } : {}),
      })
    } catch (error) {
      if (error instanceof SimulatorRejection) continue
      throw error
    }
    const usage = servedUsage(simulators, exchange.api, body.model, simulation.counts)
    direct[direct.length - 1] = tracker.add({
      placement,
      api: exchange.api,
      body,
      at: exchange.at,
      status: 200,
      latencyMs: modeledLatencyMs(usage),
      stream: exchange.stream,
      usage,
      simulation,
      predicted: false,
    })
  }
  return direct
}
