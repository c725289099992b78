// The long session run in process: the loop, the adapter, the simulator and the report rows, with no
// SDK or HTTP between them (transport is timed by the step benchmark). The long-session benchmark times
// it at several lengths; the library test holds it to its warm hit ratio.

import { VirtualClock } from '../harness/clock.ts'
import { AgentLoop } from '../harness/loop.ts'
import { DEFAULT_POLICIES } from '../harness/policies.ts'
import type { RequestRecord, World } from '../harness/ports.ts'
import { seededRandom } from '../harness/random.ts'
import { DEFAULT_PACE, resolveText } from '../harness/script.ts'
import type { ProviderId } from '../harness/types.ts'
import { createAdapter, resolveModel, simulatedEndpoint } from '../providers/index.ts'
import { simulatorPort } from '../providers/port.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { TokenCounter } from '../providers/sim/tokens.ts'
import type { BuildOptions } from '../providers/types.ts'
import { SessionRowBuilder } from '../reports/session-row-builder.ts'
import type { StepRow } from '../reports/types.ts'
import { longSession, longSessionScript } from './long-session.ts'
import { defaultBuild } from './run.ts'

/**
 * Replay the long session at `turns` turns on a fresh simulator and token memo (so each run pays for its
 * own tokenization); returns its rows.
 */
export async function replayLongSession(
  turns: number,
  provider: ProviderId,
  onRequest?: (index: number, record: RequestRecord) => void,
  build: Partial<BuildOptions> = {},
): Promise<StepRow[]> {
  const entry = resolveModel(provider)
  const sessionId = `long-session.default.${provider}`
  const rows: StepRow[] = []
  let loop: AgentLoop | undefined
  const port = simulatorPort({
    adapter: createAdapter(provider, simulatedEndpoint(provider)),
    build: { ...defaultBuild(provider, sessionId, false), ...build },
    simulators: new CacheSimulators({ counter: new TokenCounter() }),
    previous: () => builder.previousRequest(),
  })
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
        onRequest?.(rows.length, record)
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
