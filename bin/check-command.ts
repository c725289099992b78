// `cachelab check --baseline DIR [--out DIR] [...]`: the baseline gate (bin/check.ts) from flags. Any run
// directory can be the baseline. Exit 0 when the run holds, 1 with every failure named, 2 on bad input.
// `--reporter` renders the verdict as text, JSON, JUnit XML or GitHub annotations (check-reporters.ts).
// `--update` writes the run's summary, breaks and claims into the baseline directory once nothing fails.

import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import { breaksCsv, claimsCsv, summaryCsv } from '../reports/csv.ts'
import {
  DEFAULT_BREAK_THRESHOLD_TOKENS,
  DEFAULT_COST_TOLERANCE_PERCENT,
  DEFAULT_TOLERANCE_POINTS,
  type GateSide,
} from '../reports/gate.ts'
import { parseCsv } from '../reports/parse.ts'
import { RunFolder, requireCompleteRun } from '../reports/run-folder.ts'
import { rowProblems } from '../reports/sanity.ts'
import type { ClaimResult } from '../reports/types.ts'
import { evaluateClaims } from '../scenarios/claims.ts'
import type { Scenario } from '../scenarios/types.ts'
import { parse } from './args.ts'
import { type CheckScope, check, checkAgents, readRunDirectory, requireBaselineDirectory } from './check.ts'
import { reportersOption, writeReports } from './check-reporters.ts'
import { CHECK_FLAGS } from './commands.ts'
import { allScenarios, knownScenarios } from './scenarios-option.ts'

const LATEST_RUN = join('reports', 'out', 'latest')

export async function checkCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, CHECK_FLAGS)
  if (values.baseline === undefined)
    throw new CachelabError('usage', 'check needs --baseline DIR (a run directory or reports/baselines)')
  const options = {
    tolerancePoints: numberOption(
      values.tolerance,
      'tolerance',
      DEFAULT_TOLERANCE_POINTS,
      'percentage points, such as 0.5',
    ),
    costTolerancePercent: numberOption(
      values['cost-tolerance'],
      'cost-tolerance',
      DEFAULT_COST_TOLERANCE_PERCENT,
      'percent, such as 1',
    ),
    breakThresholdTokens: numberOption(
      values['break-threshold'],
      'break-threshold',
      DEFAULT_BREAK_THRESHOLD_TOKENS,
      'tokens, such as 1024',
    ),
    strict: values.strict === true,
  }
  const scope: CheckScope = {
    scenarios: listValue(values.scenario),
    variants: listValue(values.variant),
    providers: listValue(values.provider),
  }
  const scoped =
    scope.scenarios !== undefined || scope.variants !== undefined || scope.providers !== undefined
  if (values.update === true && scoped)
    throw new CachelabError(
      'usage',
      '--update refreshes the whole baseline; drop --scenario, --variant and --provider',
    )

  // Named reporters are checked before anything is read: a typo is a usage error, not a late surprise.
  const reporters = reportersOption(values.reporter, values.json === true, process.env)
  const baselineDir = values.baseline
  const runDir = values.out ?? LATEST_RUN
  if (values.update !== true) requireBaselineDirectory(baselineDir)
  // A `run --agent` baseline is gated per agent and scenario (its sessions' ids differ every run).
  if (
    existsSync(join(baselineDir, 'agents.csv')) ||
    (values.update === true &&
      existsSync(join(runDir, 'agents.csv')) &&
      !existsSync(join(baselineDir, 'summary.csv')))
  ) {
    const named = reporters.filter((reporter) => reporter.detected !== true && reporter.name !== 'text')
    if (named.length > 0)
      throw new CachelabError(
        'usage',
        `the agents gate (${join(baselineDir, 'agents.csv')}) prints text only; drop --reporter ${named.map((reporter) => reporter.name).join(',')}`,
      )
    return agentsGate(baselineDir, runDir, options.breakThresholdTokens, values.update === true)
  }
  requireCompleteRun(runDir, 'run')
  const scenarios = allScenarios(await knownScenarios(values.scenarios))
  requireClaimedScenarios(runDir, scenarios)
  if (values.update === true && !existsSync(join(baselineDir, 'summary.csv'))) {
    // A first baseline: nothing to compare with, but nothing that fails may become the baseline either.
    const run = readRunDirectory(runDir, 'run', scope)
    return updateBaseline(baselineDir, runDir, run, evaluateClaims(scenarios, run.steps ?? []))
  }
  const result = check({ baseline: baselineDir, run: runDir, ...scope, ...options, definitions: scenarios })
  // A run judged on its subset holds, yet its summary would shrink the baseline to that subset.
  const { outside } = result.gate.scope
  if (values.update === true && outside.length > 0)
    throw new CachelabError(
      'usage',
      `--update writes the whole baseline from the run, but the run's plan leaves out ${outside.length} of its sessions: run every session of the baseline (no --scenario, --variant or --provider on run), then --update`,
    )
  writeReports(result.gate, reporters, {
    notices: result.notices,
    refresh: result.refresh,
    stepSummary: process.env.GITHUB_STEP_SUMMARY,
  })
  if (values.update !== true) return result.passed ? 0 : 1
  return updateBaseline(baselineDir, runDir, result.run, result.claims)
}

/**
 * The claims are evaluated again from the run's steps, so check must know every scenario whose claims the
 * run evaluated: a run of the user's own scenarios needs the same `--scenarios` here, or their claims would
 * silently go unchecked.
 */
function requireClaimedScenarios(runDir: string, scenarios: readonly Scenario[]): void {
  const claimsPath = join(runDir, 'claims.csv')
  if (!existsSync(claimsPath)) return
  const known = new Set(scenarios.map((scenario) => scenario.name))
  const unknown = [
    ...new Set(parseCsv(readFileSync(claimsPath, 'utf8')).map((record) => record.scenario ?? '')),
  ].filter((name) => name !== '' && !known.has(name))
  if (unknown.length > 0)
    throw new CachelabError(
      'usage',
      `the run at ${runDir} has claims of scenarios check does not know (${unknown.join(', ')}): pass the same --scenarios PATH as the run`,
    )
}

/** Write the run's summary, breaks and claims as the baseline, unless a claim fails or a row is impossible. */
function updateBaseline(
  baselineDir: string,
  runDir: string,
  run: GateSide,
  claims: readonly ClaimResult[],
): number {
  const failed = claims.filter((claim) => claim.status === 'fails').length
  const impossible = rowProblems(run.steps ?? []).length
  if (run.steps === undefined || failed > 0 || impossible > 0) {
    const reason =
      run.steps === undefined
        ? `${runDir} has no steps.csv to check claims and rows on`
        : `${failed} claims fail and ${impossible} rows are impossible`
    process.stdout.write(`baseline not updated: ${reason}; fix the run first\n`)
    return 1
  }
  // --update names these three files as the baseline's: they are replaced (atomically), nothing else is.
  const folder = RunFolder.update(baselineDir, {
    writer: 'check --update',
    files: ['summary.csv', 'breaks.csv', 'claims.csv'],
  })
  try {
    folder.write('summary.csv', summaryCsv(run.summary))
    folder.write('breaks.csv', breaksCsv(run.breaks ?? []))
    folder.write('claims.csv', claimsCsv(claims))
    folder.complete()
  } catch (error) {
    folder.abandon()
    throw error
  }
  process.stdout.write(`updated ${baselineDir}/{summary.csv,breaks.csv,claims.csv} from ${runDir}\n`)
  return 0
}

/** The agents gate, and with `--update` the run's agents.csv written as the baseline's once it passes. */
function agentsGate(baselineDir: string, runDir: string, threshold: number, update: boolean): number {
  const first = update && !existsSync(join(baselineDir, 'agents.csv'))
  const result = first ? undefined : checkAgents(baselineDir, runDir, threshold)
  if (result !== undefined) process.stdout.write(`${result.report}\n`)
  if (!update) return result?.passed === true ? 0 : 1
  if (result !== undefined && !result.passed) {
    process.stdout.write('baseline not updated: the agents gate fails; fix the run first\n')
    return 1
  }
  requireCompleteRun(runDir, 'run')
  const folder = RunFolder.update(baselineDir, { writer: 'check --update', files: ['agents.csv'] })
  try {
    folder.write('agents.csv', result?.runText ?? readFileSync(join(runDir, 'agents.csv'), 'utf8'))
    folder.complete()
  } catch (error) {
    folder.abandon()
    throw error
  }
  process.stdout.write(`updated ${baselineDir}/agents.csv from ${runDir}\n`)
  return 0
}

function listValue(value: string | undefined): string[] | undefined {
  if (value === undefined || value === 'all') return undefined
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  return names.length === 0 ? undefined : names
}

function numberOption(value: string | undefined, name: string, fallback: number, unit: string): number {
  if (value === undefined) return fallback
  const parsed = Number(value)
  if (value.trim() === '' || !Number.isFinite(parsed) || parsed < 0)
    throw new CachelabError('usage', `--${name} takes ${unit} (a number >= 0); got ${JSON.stringify(value)}`)
  return parsed
}
