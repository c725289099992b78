// Benchmark (b) and (c): replaying the long-session scenario at 250, 500 and 1,000 turns through the
// loop, the adapter, the simulator and the report rows (in process: transport is benchmark (a)). The
// time must grow near-linearly with the turns; the peak memory of the 1,000-turn replay is reported.
// Beside the replay's late/early cost per request stands the bare SDK→MSW round trip's own, at the same
// two bodies: what sending a body of that size costs the client library, with no simulation behind it.

import { Bench } from 'tinybench'
import type { LlmCall } from '../harness/ports.ts'
import type { ProviderId } from '../harness/types.ts'
import { BareRoundTrip } from './bare-round-trip.ts'
import { replayLongSession } from './long-session-replay.ts'

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

  const timed = await timedReplay(1000, provider)
  return {
    provider,
    medianMs,
    ratio1000to500: (medianMs[1000] ?? 0) / (medianMs[500] ?? 1),
    ratio500to250: (medianMs[500] ?? 0) / (medianMs[250] ?? 1),
    lateToEarlyRequestCost: timed.lateToEarly,
    bareLateToEarly: await bareLateToEarly(provider, timed.early, timed.late),
    peakHeapMb: timed.peakHeapMb,
    peakRssMb: timed.peakRssMb,
  }
}

/** The 10,000-turn replay of one provider: that it runs, in what time, and its late/early cost. */
export interface LongReplayFigures {
  provider: ProviderId
  turns: number
  requests: number
  wallMs: number
  /** Mean cost of the last 100 requests over the first 100. */
  lateToEarlyRequestCost: number
  /** The bare SDK→MSW round trip's cost of the last request over the 51st's. */
  bareLateToEarly: number
  peakRssMb: number
}

/** Replay the long session once at `turns` (default 10,000) turns. */
export async function benchLongReplay(provider: ProviderId, turns = 10_000): Promise<LongReplayFigures> {
  const timed = await timedReplay(turns, provider)
  return {
    provider,
    turns,
    requests: timed.requests,
    wallMs: timed.wallMs,
    lateToEarlyRequestCost: timed.lateToEarly,
    bareLateToEarly: await bareLateToEarly(provider, timed.early, timed.late),
    peakRssMb: timed.peakRssMb,
  }
}

/**
 * One replay from a collected heap, each request's end stamped (requests count from 1): the mean cost of the last 100 requests over
 * the first 100 (from the second on), the 51st and the last call (kept alone: a long replay's calls
 * together would hold every request's message list), and the peak memory, sampled every 25 requests.
 */
async function timedReplay(turns: number, provider: ProviderId) {
  ;(globalThis as { gc?: () => void }).gc?.()
  const stamps: number[] = []
  let peakHeap = 0
  let peakRss = 0
  let early: LlmCall | undefined
  let late: LlmCall | undefined
  const started = performance.now()
  await replayLongSession(turns, provider, (index, record) => {
    stamps[index] = performance.now() - started
    if (index === 51) early = record.call
    late = record.call
    if (index % 25 === 0) {
      const memory = process.memoryUsage()
      peakHeap = Math.max(peakHeap, memory.heapUsed)
      peakRss = Math.max(peakRss, memory.rss)
    }
  })
  const wallMs = performance.now() - started
  const span = (from: number, to: number) => ((stamps[to] ?? 0) - (stamps[from] ?? 0)) / (to - from)
  const count = stamps.length - 1
  if (early === undefined || late === undefined)
    throw new Error(`the ${turns}-turn replay made too few requests`)
  return {
    requests: count,
    wallMs,
    lateToEarly: span(count - 100, count) / span(1, 101),
    early,
    late,
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
  const bare = BareRoundTrip.start()
  try {
    await bare.prime(provider, early)
    const median = async (call: LlmCall) => {
      const built = bare.build(provider, call)
      const times: number[] = []
      for (let index = 0; index < iterations; index += 1) {
        const started = performance.now()
        await bare.send(provider, built)
        times.push(performance.now() - started)
      }
      times.sort((left, right) => left - right)
      return times[Math.floor(times.length / 2)] ?? Number.NaN
    }
    await median(early)
    return (await median(late)) / (await median(early))
  } finally {
    bare.close()
  }
}
