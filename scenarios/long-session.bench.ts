// Benchmark (b) and (c): replaying the long-session scenario at 250, 500 and 1,000 turns through the
// loop, the adapter, the simulator and the report rows (in process: transport is benchmark (a)). The
// time must grow near-linearly with the turns; the peak memory of the 1,000-turn replay is reported.

import { Bench } from 'tinybench'
import { VirtualClock } from '../harness/clock.ts'
import { AgentLoop, resolveText, type World } from '../harness/loop.ts'
import { DEFAULT_POLICIES } from '../harness/policies.ts'
import { seededRandom } from '../harness/random.ts'
import { DEFAULT_PACE } from '../harness/script.ts'
import type { ProviderId } from '../harness/types.ts'
import { createAdapter, resolveModel, simulatedEndpoint } from '../providers/index.ts'
import { simulatorPort } from '../providers/port.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { TokenCounter } from '../providers/sim/tokens.ts'
import { SessionRowBuilder } from '../reports/rows.ts'
import type { StepRow } from '../reports/types.ts'
import { longSession, longSessionScript } from './long-session.ts'
import { defaultBuild } from './run.ts'

const LENGTHS = [250, 500, 1000] as const

/**
 * Replay the long session at `turns` turns on a fresh simulator and token memo (so each run pays for its
 * own tokenization); returns its rows.
 */
export async function replayLongSession(
  turns: number,
  provider: ProviderId,
  onRequest?: (index: number) => void,
): Promise<StepRow[]> {
  const entry = resolveModel(provider)
  const sessionId = `long-session.default.${provider}`
  const port = simulatorPort({
    adapter: createAdapter(provider, simulatedEndpoint(provider)),
    build: defaultBuild(provider, sessionId, false),
    simulators: new CacheSimulators({ counter: new TokenCounter() }),
  })
  const rows: StepRow[] = []
  let loop: AgentLoop | undefined
  const builder = new SessionRowBuilder({
    runId: 'bench',
    scenario: longSession.name,
    variant: 'default',
    provider,
    model: entry.model,
    prices: entry.prices,
    get log() {
      return loop?.session.log ?? []
    },
  })
  const clock = new VirtualClock()
  loop = AgentLoop.start(
    {
      sessionId,
      clock,
      random: seededRandom(1),
      llm: port,
      onRequest: (record) => {
        const simulation = port.last
        rows.push(
          builder.add(
            record,
            simulation === undefined
              ? undefined
              : { prompt: simulation.prompt, trace: simulation.trace, counts: simulation.counts },
          ),
        )
        onRequest?.(rows.length)
      },
    },
    {
      policies: DEFAULT_POLICIES,
      route: entry.route,
      toolUpdate: entry.toolUpdate,
      pace: { ...DEFAULT_PACE, ...longSession.pace },
      maxRetries: 2,
    },
  )
  const world: World = {
    system: resolveText(longSession.system, 'long-session:system'),
    tools: longSession.tools,
    config: {
      provider,
      model: entry.model,
      ...(longSession.maxTokens !== undefined ? { maxTokens: longSession.maxTokens } : {}),
    },
    prefixSource: '',
  }
  for (const action of longSessionScript(turns)) {
    if (action.kind === 'turn') await loop.turn(action, world)
  }
  return rows
}

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
