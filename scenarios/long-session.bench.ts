// Benchmark (b) and (c): replaying the long-session scenario at 250, 500 and 1,000 turns through the
// loop, the adapter, the simulator and the report rows (in process: transport is benchmark (a)). The
// time must grow near-linearly with the turns; the peak memory of the 1,000-turn replay is reported.

import { Bench } from 'tinybench'
import type { ProviderId } from '../harness/types.ts'
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
  const started = performance.now()
  await replayLongSession(1000, provider, (index) => {
    stamps[index] = performance.now() - started
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
    peakHeapMb: peakHeap / 1e6,
    peakRssMb: peakRss / 1e6,
  }
}
