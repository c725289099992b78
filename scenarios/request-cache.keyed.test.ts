// The keyed request-cache e2e: the keyed scenarios against each provider whose key is set (or against
// `cachelab serve` when the base URLs point there). Fails when the real cache hit ratio regresses, and
// writes per-step observed vs predicted reads to reports/out/keyed/.

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { config as loadDotenv } from 'dotenv'
import { beforeAll, describe, expect, it } from 'vitest'
import { VirtualClock } from '../harness/clock.ts'
import { PROVIDER_IDS, type ProviderId } from '../harness/types.ts'
import { ENV_NAMES, liveEndpoint, resolveModel, vendorOf } from '../providers/index.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { type FidelityRow, fidelityCsv, fidelityRows } from '../reports/fidelity.ts'
import type { StepRow } from '../reports/types.ts'
import { keyedScenarios } from './keyed.ts'
import { runSession } from './run.ts'

loadDotenv({ quiet: true })
const requireKeys = process.env.CACHELAB_REQUIRE_KEYS === '1'
const outDir = process.env.CACHELAB_KEYED_OUT ?? join('reports', 'out', 'keyed')
const minimumHitRatio = Number(process.env.CACHELAB_KEYED_MIN_HIT_RATIO ?? '0.6')
const salt = process.env.CACHELAB_KEYED_SALT ?? new Date().toISOString().slice(0, 10)
/** Set by the loopback runner: against the simulator itself, every prediction must match exactly. */
const exactPredictions = process.env.CACHELAB_KEYED_EXACT_PREDICTIONS === '1'

/** Token-weighted read / input over successful requests after each session's warm-up request. */
function warmHitRatio(rows: readonly StepRow[]): number {
  const warm = rows.filter((row) => row.ok && !row.cold)
  const input = warm.reduce((sum, row) => sum + row.inputTokens, 0)
  return input === 0 ? 0 : warm.reduce((sum, row) => sum + row.cacheReadTokens, 0) / input
}

for (const provider of PROVIDER_IDS) {
  const found = liveEndpoint(provider, process.env)
  if ('missing' in found) {
    if (requireKeys) {
      describe(provider, () => {
        it(`has ${found.missing}`, () => {
          throw new Error(
            `${found.missing} is not set, and CACHELAB_REQUIRE_KEYS=1 forbids skipping ${provider}`,
          )
        })
      })
    } else {
      console.warn(`[keyed] ${provider} skipped: set ${found.missing} to run it`)
      describe.skip(`${provider} (skipped: ${found.missing} is not set)`, () => {
        it('runs the request-cache scenarios', () => {})
      })
    }
    continue
  }
  describeProvider(provider)
}

function describeProvider(provider: ProviderId): void {
  describe(provider, () => {
    const model = process.env[ENV_NAMES[vendorOf(provider)].model]?.trim() || undefined
    const entry = resolveModel(provider, model)
    const sessions = new Map<string, StepRow[]>()
    const fidelity: FidelityRow[] = []

    beforeAll(async () => {
      const predictor = new CacheSimulators()
      const clock = new VirtualClock()
      for (const scenario of keyedScenarios(entry, salt)) {
        for (const variant of scenario.variants) {
          const result = await runSession(
            { scenario, variant, provider },
            { runId: `keyed-${salt}`, model: entry.model, stream: false, env: process.env, predictor, clock },
          )
          sessions.set(`${scenario.name}.${variant.name}`, result.rows)
          fidelity.push(...fidelityRows(result.rows, result.predicted))
        }
      }
      mkdirSync(outDir, { recursive: true })
      writeFileSync(join(outDir, `${provider}.csv`), fidelityCsv(fidelity))
    })

    const rowsOf = (name: string) => {
      const rows = sessions.get(name)
      if (rows === undefined) throw new Error(`no session ${name}`)
      return rows
    }

    it.runIf(exactPredictions)(
      'predicts every observed read and write exactly when the upstream is the simulator',
      () => {
        expect(fidelity.length).toBeGreaterThan(0)
        for (const { row, predicted } of fidelity) {
          expect({ read: row.cacheReadTokens, write: row.cacheWriteTokens }).toEqual({
            read: predicted?.read,
            write: predicted?.write,
          })
        }
      },
    )

    it('append-only: every request after the warm-up reads cache, and the warm hit ratio holds', () => {
      const rows = rowsOf('append-only.default')
      expect(rows.every((row) => row.ok)).toBe(true)
      for (const row of rows.filter((candidate) => !candidate.cold)) {
        expect(row.cacheReadTokens, `turn ${row.turn} step ${row.step} read no cache`).toBeGreaterThan(0)
      }
      expect(warmHitRatio(rows)).toBeGreaterThanOrEqual(minimumHitRatio)
    })

    it('prompt-change: the request after the change reads more appended in history than with message 0 rewritten', () => {
      const afterChange = (rows: StepRow[]) => rows.find((row) => row.turn === 3 && row.step === 1) as StepRow
      const unsupported = afterChange(rowsOf('prompt-change.unsupported'))
      expect(unsupported.ok).toBe(true)
      if (entry.route !== 'in-history') return
      const inHistory = afterChange(rowsOf('prompt-change.in-history'))
      expect(inHistory.cacheReadTokens).toBeGreaterThan(unsupported.cacheReadTokens)
      expect(warmHitRatio(rowsOf('prompt-change.in-history'))).toBeGreaterThanOrEqual(minimumHitRatio)
    })

    it('series-start-unchanged: after the prune, keeping the live prompt node reads at least what consolidating does', () => {
      const afterPrune = (rows: StepRow[]) => rows.find((row) => row.headerReason === 'series') as StepRow
      const keepLive = afterPrune(rowsOf('series-start-unchanged.keep-live'))
      const consolidate = afterPrune(rowsOf('series-start-unchanged.consolidate'))
      expect(keepLive.cacheReadTokens).toBeGreaterThanOrEqual(consolidate.cacheReadTokens)
      if (entry.route === 'in-history')
        expect(keepLive.cacheReadTokens).toBeGreaterThan(consolidate.cacheReadTokens)
    })
  })
}
