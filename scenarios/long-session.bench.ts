// Benchmark (b) and (c): replaying the long-session scenario at 250, 500 and 1,000 turns through the
// loop, the adapter, the simulator and the report rows (in process: transport is benchmark (a)). The
// time must grow near-linearly with the turns; the peak memory of the 1,000-turn replay is reported.
// Beside the replay's late/early cost per request stands the bare SDK→MSW round trip's own, at the same
// two bodies: what sending a body of that size costs the client library, with no simulation behind it.

import { http } from 'msw'
import { setupServer } from 'msw/node'
import { Bench } from 'tinybench'
import type { LlmCall } from '../harness/ports.ts'
import type { ProviderId } from '../harness/types.ts'
import { adapterPort, createAdapter, simulatedEndpoint } from '../providers/index.ts'
import { MockContext } from '../providers/mock/context.ts'
import { mockHandlers } from '../providers/mock/handlers.ts'
import { replayLongSession } from './long-session-replay.ts'
import { defaultBuild } from './run.ts'

const LENGTHS = [250, 500, 1000] as const

export interface LongSessionFigures {
  provider: ProviderId
  medianMs: Record<number, number>
  /** time(1,000 turns) / time(500 turns). */
  ratio1000to500: number
  ratio500to250: number
  /** Mean cost of the last 100 requests over the first 100, within one 1,000-turn replay. */
  lateToEarlyRequestCost: number
  /**
   * The bare SDK→MSW round trip's cost of the replay's last request over its 51st (the middle of the
   * early hundred), each sent alone to a handler that parses the body and answers a recorded reply.
   */
  bareLateToEarly: number
  peakHeapMb: number
  peakRssMb: number
}

/** Run the benchmark for one provider. */
export async function benchLongSession(provider: ProviderId, iterations = 7): Promise<LongSessionFigures> {
  await replayLongSession(100, provider)
  const collect = (globalThis as { gc?: () => void }).gc
  const bench = new Bench({
    name: `long-session replay (${provider})`,
    iterations,
    time: 0,
    warmupIterations: 1,
    warmupTime: 0,
  })
  // Each iteration starts from a collected heap, so one length's garbage is not billed to the next.
  for (const turns of LENGTHS) {
    bench.add(`${turns} turns`, async () => void (await replayLongSession(turns, provider)), {
      beforeEach: () => collect?.(),
    })
  }
  await bench.run()
  const medianMs: Record<number, number> = {}
  for (const task of bench.tasks) {
    const result = task.result
    medianMs[Number.parseInt(task.name, 10)] =
      result !== undefined && 'latency' in result ? result.latency.p50 : Number.NaN
  }

  // Per-request cost early and late in one replay, and its peak memory.
  collect?.()
  const stamps: number[] = []
  let peakHeap = 0
  let peakRss = 0
  const calls: LlmCall[] = []
  const started = performance.now()
  await replayLongSession(1000, provider, (index, record) => {
    stamps[index] = performance.now() - started
    calls[index] = record.call
    if (index % 25 === 0) {
      const memory = process.memoryUsage()
      peakHeap = Math.max(peakHeap, memory.heapUsed)
      peakRss = Math.max(peakRss, memory.rss)
    }
  })
  const span = (from: number, to: number) => ((stamps[to] ?? 0) - (stamps[from] ?? 0)) / (to - from)
  const count = stamps.length - 1
  return {
    provider,
    medianMs,
    ratio1000to500: (medianMs[1000] ?? 0) / (medianMs[500] ?? 1),
    ratio500to250: (medianMs[500] ?? 0) / (medianMs[250] ?? 1),
    lateToEarlyRequestCost: span(count - 100, count) / span(1, 101),
    bareLateToEarly: await bareLateToEarly(provider, calls[51] as LlmCall, calls[count] as LlmCall),
    peakHeapMb: peakHeap / 1e6,
    peakRssMb: peakRss / 1e6,
  }
}

/**
 * The bare round trip's late/early ratio: the provider's adapter sends the early and the late body through
 * its SDK to an MSW handler that parses the body and answers the mock's reply to the early one, recorded
 * once; the median of `iterations` sends of each.
 */
async function bareLateToEarly(
  provider: ProviderId,
  early: LlmCall,
  late: LlmCall,
  iterations = 31,
): Promise<number> {
  const context = new MockContext()
  let recording = true
  let recorded: { status: number; headers: [string, string][]; body: ArrayBuffer } | undefined
  const server = setupServer(
    http.post('*', async ({ request }) => {
      if (recording) return undefined
      JSON.parse(await request.text())
      const reply = recorded as NonNullable<typeof recorded>
      return new Response(reply.body.slice(0), { status: reply.status, headers: reply.headers })
    }),
    ...mockHandlers(context),
  )
  server.events.on('response:mocked', async ({ response }) => {
    if (!recording) return
    recorded = {
      status: response.status,
      headers: [...response.headers.entries()],
      body: await response.clone().arrayBuffer(),
    }
  })
  server.listen({ onUnhandledRequest: 'error' })
  try {
    const adapter = createAdapter(provider, simulatedEndpoint(provider))
    const build = defaultBuild(provider, `bare.${provider}`, false)
    await adapterPort({ adapter, build, mode: 'simulated' }).send(early)
    // The recording listener reads the body after the reply reached the SDK: let it finish.
    await new Promise((resolve) => setTimeout(resolve, 50))
    recording = false
    if (recorded === undefined) throw new Error(`no reply recorded for ${provider}`)
    const median = async (call: LlmCall) => {
      const built = adapter.buildRequest(call.request, build)
      const times: number[] = []
      for (let index = 0; index < iterations; index += 1) {
        const started = performance.now()
        await adapter.send(built, { stream: false, headers: {} })
        times.push(performance.now() - started)
      }
      times.sort((left, right) => left - right)
      return times[Math.floor(times.length / 2)] ?? Number.NaN
    }
    await median(early)
    return (await median(late)) / (await median(early))
  } finally {
    server.close()
  }
}
