// `cachelab check --baseline DIR [--out DIR] [...]`: the baseline gate. Any run directory can be the
// baseline. Exit 0 when the run holds, 1 with every failure named, 2 on bad input. `--update` writes the
// run's summary, breaks and claims into the baseline directory once nothing fails.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import { PROVIDER_IDS } from '../harness/types.ts'
import { breaksOf } from '../reports/breaks.ts'
import { breaksCsv, claimsCsv, parseCsv, summaryCsv } from '../reports/csv.ts'
import {
  checkBaseline,
  DEFAULT_BREAK_THRESHOLD_TOKENS,
  DEFAULT_COST_TOLERANCE_PERCENT,
  DEFAULT_TOLERANCE_POINTS,
  type GateSide,
  gateReport,
} from '../reports/gate.ts'
import { readBreaksCsv, readStepsCsv, readSummaryCsv } from '../reports/load.ts'
import { rowProblems } from '../reports/sanity.ts'
import type { ClaimResult } from '../reports/types.ts'
import { evaluateClaims } from '../scenarios/claims.ts'
import type { Scenario } from '../scenarios/types.ts'
import { parse } from './args.ts'
import { allScenarios, knownScenarios } from './scenarios-option.ts'

const LATEST_RUN = join('reports', 'out', 'latest')

/** Which sessions the gate looks at. */
interface Scope {
  scenarios: string[] | undefined
  variants: string[] | undefined
  providers: string[] | undefined
}

export async function checkCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    baseline: { type: 'string' },
    out: { type: 'string' },
    tolerance: { type: 'string' },
    'cost-tolerance': { type: 'string' },
    'break-threshold': { type: 'string' },
    strict: { type: 'boolean' },
    update: { type: 'boolean' },
    scenario: { type: 'string' },
    variant: { type: 'string' },
    provider: { type: 'string' },
    scenarios: { type: 'string' },
  })
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
  const scope: Scope = {
    scenarios: listValue(values.scenario),
    variants: listValue(values.variant),
    providers: listValue(values.provider),
  }
  for (const provider of scope.providers ?? []) {
    if (!(PROVIDER_IDS as readonly string[]).includes(provider))
      throw new CachelabError(
        'usage',
        `unknown provider ${JSON.stringify(provider)} (known: ${PROVIDER_IDS.join(', ')})`,
      )
  }
  const scoped =
    scope.scenarios !== undefined || scope.variants !== undefined || scope.providers !== undefined
  if (values.update === true && scoped)
    throw new CachelabError(
      'usage',
      '--update refreshes the whole baseline; drop --scenario, --variant and --provider',
    )

  const baselineDir = values.baseline
  const runDir = values.out ?? LATEST_RUN
  const scenarios = allScenarios(await knownScenarios(values.scenarios))
  requireClaimedScenarios(runDir, scenarios)
  if (values.update === true && !existsSync(join(baselineDir, 'summary.csv'))) {
    // A first baseline: nothing to compare with, but nothing that fails may become the baseline either.
    const run = readSide(runDir, 'run', scope)
    return updateBaseline(baselineDir, runDir, run, evaluateClaims(scenarios, run.steps ?? []))
  }
  const baseline = readSide(baselineDir, 'baseline', scope)
  if (baseline.summary.length === 0)
    throw new CachelabError(
      'input',
      `${join(baselineDir, 'summary.csv')} has no rows in scope: nothing to check`,
    )
  const run = readSide(runDir, 'run', scope)
  const runSteps = run.steps
  if (runSteps === undefined)
    throw new CachelabError(
      'input',
      `run directory ${runDir} has no steps.csv (the claims and rows are checked from it)`,
    )
  const claims = inScope(evaluateClaims(scenarios, runSteps), scope)
  const result = checkBaseline({ baseline, run, claims, rowProblems: rowProblems(runSteps), options })
  const notes: string[] = []
  if (baseline.breaks === undefined)
    notes.push(`note: ${baselineDir} has no breaks.csv or steps.csv, so breaks were not compared`)
  process.stdout.write(`${[...notes, gateReport(result)].join('\n')}\n`)
  if (values.update !== true) return result.passed ? 0 : 1
  return updateBaseline(baselineDir, runDir, run, claims)
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
  mkdirSync(baselineDir, { recursive: true })
  writeFileSync(join(baselineDir, 'summary.csv'), summaryCsv(run.summary))
  writeFileSync(join(baselineDir, 'breaks.csv'), breaksCsv(run.breaks ?? []))
  writeFileSync(join(baselineDir, 'claims.csv'), claimsCsv(claims))
  process.stdout.write(`updated ${baselineDir}/{summary.csv,breaks.csv,claims.csv} from ${runDir}\n`)
  return 0
}

/** One directory's files, restricted to the scope: summary.csv (required), breaks and steps when present. */
function readSide(dir: string, what: 'baseline' | 'run', scope: Scope): GateSide {
  const summaryPath = join(dir, 'summary.csv')
  if (!existsSync(summaryPath)) {
    const hint = what === 'run' ? ' (run cachelab run first, or name a run directory with --out DIR)' : ''
    throw new CachelabError('input', `${what} directory ${dir} has no summary.csv${hint}`)
  }
  const stepsPath = join(dir, 'steps.csv')
  const breaksPath = join(dir, 'breaks.csv')
  const steps = existsSync(stepsPath) ? inScope(readStepsCsv(stepsPath), scope) : undefined
  const breaks = existsSync(breaksPath)
    ? inScope(readBreaksCsv(breaksPath), scope)
    : steps === undefined
      ? undefined
      : breaksOf(steps)
  return { summary: inScope(readSummaryCsv(summaryPath), scope), breaks, steps }
}

function inScope<T extends { scenario: string; provider: string; variant?: string; variants?: string[] }>(
  rows: readonly T[],
  scope: Scope,
): T[] {
  return rows.filter((row) => {
    if (scope.scenarios !== undefined && !scope.scenarios.includes(row.scenario)) return false
    if (scope.providers !== undefined && !scope.providers.includes(row.provider)) return false
    if (scope.variants === undefined) return true
    // A claim is in scope when every variant it reads is.
    const variants = row.variants ?? (row.variant === undefined ? [] : [row.variant])
    return variants.every((variant) => scope.variants?.includes(variant))
  })
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
