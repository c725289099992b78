import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROVIDER_IDS } from '../harness/types.ts'
import { withCacheRules } from '../providers/catalog.ts'
import { type MockProviders, resolveModel, startMockProviders } from '../providers/index.ts'
import { stepsCsv } from '../reports/csv.ts'
import { SCENARIOS } from './index.ts'
import { replaySession } from './replay.ts'
import { defaultBuild, planMatrix, runSession, sessionIdOf } from './run.ts'

let mock: MockProviders
beforeAll(() => {
  mock = startMockProviders()
})
afterAll(() => mock.close())

// Summarizer calls and failed or cancelled attempts reach the provider but are not rebuilt from the log, so a replay
// of those scenarios would run on a different cache; the long session is the benchmark's. Gemini's
// explicit caches are created by the adapter as it sends, a call the log does not hold either.
const REPLAYABLE = SCENARIOS.filter(
  (scenario) =>
    !['compaction-summary', 'flaky-provider', 'mid-turn-input', 'long-session', 'explicit-cache'].includes(
      scenario.name,
    ),
)

describe('replaying a session log', () => {
  // The replay hands the simulator the same objects request after request (the memoized fast paths),
  // while a run through the SDK and MSW hands it freshly parsed JSON: equal rows prove the fast paths.
  it.each(planMatrix(REPLAYABLE, PROVIDER_IDS).plans.map((plan) => [sessionIdOf(plan), plan] as const))(
    'reproduces every step row of %s from the log alone',
    async (_name, plan) => {
      const run = await runSession(plan, { runId: 'r', stream: false, mock })
      const replayed = replaySession(run.events, {
        provider: plan.provider,
        ...(plan.model !== undefined ? { model: plan.model } : {}),
        build: { ...defaultBuild(plan.provider, sessionIdOf(plan), false), ...plan.variant.build },
        ...(plan.variant.rules !== undefined
          ? {
              simulator: {
                models: [withCacheRules(resolveModel(plan.provider, plan.model), plan.variant.rules)],
              },
            }
          : {}),
        labels: { runId: 'r', scenario: plan.scenario.name, variant: plan.variant.name },
      })
      const steps = run.rows.filter((row) => row.ok && row.step > 0)
      expect(stepsCsv(replayed)).toBe(stepsCsv(steps))
    },
  )
})
