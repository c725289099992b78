// The keyed request-cache e2e: the keyed scenarios against each provider whose key is set (or against
// `cachelab serve` when the base URLs point there). Every step's cache read and write must match the
// simulator's prediction within a tolerance, and each scenario's claim must hold; a variant the model
// cannot run is a skip that says why. Writes per-step observed vs predicted to reports/out/keyed/.

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { config as loadDotenv } from 'dotenv'
import { beforeAll, describe, expect, it } from 'vitest'
import type { ProviderId } from '../harness/types.ts'
import type { ModelEntry } from '../providers/catalog.ts'
import { knownProviderIds } from '../providers/compatible.ts'
import { diagnosable } from '../providers/diagnostics.ts'
import { envNames } from '../providers/endpoints.ts'
import { liveEndpoint, resolveModel, vendorOf } from '../providers/index.ts'
import { encode } from '../providers/sim/tokens.ts'
import { stepsCsv } from '../reports/csv.ts'
import { diagnosisSummary, diagnosisVendor, disagreementLine, tallyDiagnoses } from '../reports/diagnosis.ts'
import { describeMismatch, fidelityCsv, fidelityVerdict } from '../reports/fidelity.ts'
import type { StepRow } from '../reports/types.ts'
import { type KeyedRun, keyedCases, keyedTolerance, runKeyed } from './keyed.ts'

loadDotenv({ quiet: true })
const requireKeys = process.env.CACHELAB_REQUIRE_KEYS === '1'
const outDir = process.env.CACHELAB_KEYED_OUT ?? join('reports', 'out', 'keyed')
const minimumHitRatio = Number(process.env.CACHELAB_KEYED_MIN_HIT_RATIO ?? '0.6')
// Unique per run: a second run with the same prompts within the providers' cache lifetime would read
// the first run's cache on its cold requests, which no prediction expects.
const salt = process.env.CACHELAB_KEYED_SALT ?? `${new Date().toISOString()}-${process.pid}`
const tolerance = keyedTolerance(process.env)
// Against cachelab serve the provider's reasons are the simulator's own: every one must agree.
const exactDiagnoses = process.env.CACHELAB_KEYED_DIAGNOSIS_EXACT === '1'

/** Token-weighted read / input over successful requests after each session's warm-up request. */
function warmHitRatio(rows: readonly StepRow[]): number {
  const warm = rows.filter((row) => row.ok && !row.cold)
  const input = warm.reduce((sum, row) => sum + row.inputTokens, 0)
  return input === 0 ? 0 : warm.reduce((sum, row) => sum + row.cacheReadTokens, 0) / input
}

/** `turn.step` of every step no attempt of which succeeded. */
function unansweredSteps(rows: readonly StepRow[]): string[] {
  const steps = new Set(rows.map((row) => `${row.turn}.${row.step}`))
  for (const row of rows) if (row.ok) steps.delete(`${row.turn}.${row.step}`)
  return [...steps]
}

// The compatible providers too: each skips by the name of its own key variable (XAI_API_KEY, …).
for (const provider of knownProviderIds()) {
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
    const model = process.env[envNames(vendorOf(provider)).model]?.trim() || undefined
    const entry = resolveModel(provider, model)
    const cases = keyedCases(provider, entry, salt)
    let run: KeyedRun | undefined

    beforeAll(async () => {
      run = await runKeyed(provider, { env: process.env, salt, model: entry.model })
      mkdirSync(outDir, { recursive: true })
      writeFileSync(join(outDir, `${provider}.csv`), fidelityCsv(run.fidelity))
      writeFileSync(join(outDir, `${provider}-steps.csv`), stepsCsv([...run.sessions.values()].flat()))
    })

    const rowsOf = (name: string): StepRow[] => {
      const rows = run?.sessions.get(name)
      if (rows === undefined) throw new Error(`no session ${name}`)
      return rows
    }
    const skipReason = (name: string): string | undefined =>
      cases.find((keyed) => `${keyed.scenario.name}.${keyed.variant.name}` === name)?.skip

    for (const keyed of cases) {
      const name = `${keyed.scenario.name}.${keyed.variant.name}`
      if (keyed.skip !== undefined) {
        console.warn(`[keyed] ${provider} ${name} skipped: ${keyed.skip}`)
        it.skip(`${name} (skipped: ${keyed.skip})`, () => {})
        continue
      }
      it(`${name}: every step answers, its read and write within ±max(${tolerance.tokens} tokens, ${tolerance.ratio} of input) of the prediction`, () => {
        const rows = rowsOf(name)
        expect(unansweredSteps(rows), 'steps without a successful attempt').toEqual([])
        const fidelity = (run?.fidelity ?? []).filter(
          ({ row }) => row.scenario === keyed.scenario.name && row.variant === keyed.variant.name,
        )
        expect(fidelity.length).toBeGreaterThan(0)
        expect(fidelityVerdict(fidelity, tolerance).map(describeMismatch)).toEqual([])
      })
    }

    it('append-only: every request after the warm-up reads cache, and the warm hit ratio holds', () => {
      const rows = rowsOf('append-only.default')
      const warm = rows.filter((row) => row.ok && !row.cold)
      expect(warm.length).toBeGreaterThan(0)
      for (const row of warm)
        expect(row.cacheReadTokens, `turn ${row.turn} step ${row.step} read no cache`).toBeGreaterThan(0)
      expect(warmHitRatio(rows)).toBeGreaterThanOrEqual(minimumHitRatio)
    })

    const vendor = diagnosisVendor(provider)
    const diagnosisClaim =
      "the provider's cache diagnostics: every request after a session's first carries its reason, beside cachelab's cause"
    if (vendor === undefined) {
      it.skip(`${diagnosisClaim} (skipped: ${provider} has none; the Claude API and OpenAI Responses do)`, () => {})
    } else if (!diagnosable(vendor === 'anthropic' ? 'anthropic-messages' : 'openai-responses', entry)) {
      it.skip(`${diagnosisClaim} (skipped: ${entry.model} has none; GPT-5.6 and later do)`, () => {})
    } else {
      it(diagnosisClaim, () => {
        const rows = [...(run?.sessions.values() ?? [])].flat()
        const unanswered = rows.filter((row) => row.ok && !row.cold && row.providerDiagnosis === undefined)
        expect(unanswered.map((row) => `${row.scenario}.${row.variant} ${row.turn}.${row.step}`)).toEqual([])
        expect(rows.some((row) => row.providerDiagnosis !== undefined)).toBe(true)
        // Against a real provider a disagreement is a finding to read, not a failure; against serve, none.
        console.warn(`[keyed] ${provider} ${diagnosisSummary(rows).join('\n')}`)
        if (exactDiagnoses) {
          const tally = tallyDiagnoses(rows)
          expect(tally.disagreements.map(disagreementLine)).toEqual([])
          expect(tally.noComparison).toBe(0)
        }
      })
    }

    const inHistorySkip = skipReason('prompt-change.in-history')
    const promptChangeClaim =
      'prompt-change: the request after the change reads more appended in history than with message 0 rewritten'
    if (inHistorySkip !== undefined) {
      it.skip(`${promptChangeClaim} (skipped: ${inHistorySkip})`, () => {})
    } else {
      it(promptChangeClaim, () => {
        const afterChange = (name: string) => {
          const row = rowsOf(name).find(
            (candidate) => candidate.ok && candidate.turn === 3 && candidate.step === 1,
          )
          if (row === undefined) throw new Error(`${name} has no successful first step after the change`)
          return row
        }
        const inHistory = afterChange('prompt-change.in-history')
        const unsupported = afterChange('prompt-change.unsupported')
        expect(inHistory.cacheReadTokens).toBeGreaterThan(unsupported.cacheReadTokens)
        expect(warmHitRatio(rowsOf('prompt-change.in-history'))).toBeGreaterThanOrEqual(minimumHitRatio)
      })
    }

    const seriesClaim =
      entry.route === 'in-history'
        ? 'series-start-unchanged: after the prune, keeping the live prompt node reads more than consolidating it'
        : 'series-start-unchanged: after the prune, keeping the live prompt node reads at least what consolidating does'
    it(seriesClaim, () => {
      const afterPrune = (name: string) => {
        const row = rowsOf(name).find((candidate) => candidate.ok && candidate.headerReason === 'series')
        if (row === undefined) throw new Error(`${name} has no successful request starting the new series`)
        return row
      }
      const keepLive = afterPrune('series-start-unchanged.keep-live')
      const consolidate = afterPrune('series-start-unchanged.consolidate')
      // The two sessions' namespaces (in the system prompt and the first tool) differ in length: a cache
      // that reads to the token (Gemini's) reads that difference too.
      const openingTokens = (name: string) =>
        encode(cases.find((keyed) => `${keyed.scenario.name}.${keyed.variant.name}` === name)?.opening ?? '')
          .length
      // A cache that reads in steps (OpenAI's 128 tokens, DeepSeek's units) rounds the two reads apart by up
      // to one step when the openings' lengths move its boundaries.
      const slack =
        2 *
          Math.abs(
            openingTokens('series-start-unchanged.keep-live') -
              openingTokens('series-start-unchanged.consolidate'),
          ) +
        readStep(entry.cache)
      if (entry.route === 'in-history')
        expect(keepLive.cacheReadTokens).toBeGreaterThan(consolidate.cacheReadTokens)
      else expect(keepLive.cacheReadTokens).toBeGreaterThanOrEqual(consolidate.cacheReadTokens - slack)
    })
  })
}

/** The step a cache's reads come in: 0 where it reads to the token or to a breakpoint. */
function readStep(cache: ModelEntry['cache']): number {
  switch (cache.kind) {
    case 'openai-prefix':
    case 'gemini':
      return cache.increment
    case 'deepseek':
      return cache.readGranularityTokens > 0 ? cache.readGranularityTokens : cache.legacyUnitTokens
    default:
      return 0
  }
}
