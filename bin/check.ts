// The baseline gate as a function: read a run directory and a baseline directory (any run directory, or
// the committed reports/baselines), evaluate the run's claims and impossible rows, and compare. `cachelab
// check` and the library's `check` are both this; the command adds flag parsing and `--update`.

import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { CachelabError, requireKnown } from '../harness/errors.ts'
import { knownProviderIds } from '../providers/compatible.ts'
import { gateAgents, parseAgentsCsv } from '../reports/agents.ts'
import { breaksOf } from '../reports/breaks.ts'
import {
  checkBaseline,
  DEFAULT_BREAK_THRESHOLD_TOKENS,
  DEFAULT_COST_TOLERANCE_PERCENT,
  DEFAULT_TOLERANCE_POINTS,
  type GateResult,
  type GateSide,
} from '../reports/gate.ts'
import { gateReport } from '../reports/gate-text.ts'
import { gatewayNotes } from '../reports/gateway-changes.ts'
import { readBreaksCsv, readStepsCsv, readSummaryCsv } from '../reports/load.ts'
import { parseCsv } from '../reports/parse.ts'
import { PLAN_FILE, parsePlan, type RunPlan } from '../reports/plan.ts'
import { readManifest, requireCompleteRun } from '../reports/run-folder.ts'
import { sessionRowProblems } from '../reports/sanity.ts'
import type { ClaimResult } from '../reports/types.ts'
import { evaluateClaims } from '../scenarios/claims.ts'
import { SCENARIOS } from '../scenarios/index.ts'
import type { Scenario } from '../scenarios/types.ts'

/** Which sessions the gate looks at; every one when a list is absent. */
export interface CheckScope {
  /** Scenario names. */
  scenarios?: readonly string[] | undefined
  /** Variant names; a claim is in scope when every variant it reads is. */
  variants?: readonly string[] | undefined
  /** Provider ids. */
  providers?: readonly string[] | undefined
}

/** What to check, and how strictly. */
export interface CheckOptions extends CheckScope {
  /** The baseline: a directory with summary.csv, and breaks.csv or steps.csv for the break comparison. */
  baseline: string
  /** The run: a directory with summary.csv and steps.csv, as `run` writes it. */
  run: string
  /** How far below the baseline a warm hit ratio may fall, in percentage points; 0.5 when absent. */
  tolerancePoints?: number
  /** How far above the baseline a session's cost may rise, in percent; 1 when absent. */
  costTolerancePercent?: number
  /** Tokens (lost plus provider-side) at which a new or grown break fails; 1,024 when absent. */
  breakThresholdTokens?: number
  /** Fail on changes for the better too (the baseline is stale). */
  strict?: boolean
  /** The scenarios whose claims the run's rows are checked against: the built-ins when absent. */
  definitions?: readonly Scenario[]
}

/** The gate's verdict on a run. */
export interface CheckResult {
  /** True when nothing fails the gate. */
  passed: boolean
  /** Every failure and every change for the better, with the options applied. */
  gate: GateResult
  /** The verdict as `cachelab check` prints it: one line per failure or change, then the totals. */
  report: string
  /**
   * What check says beside the verdict: a baseline without breaks, a gateway's changes. The first lines
   * of `report`; the other reporters take them too.
   */
  notices: string[]
  /** The command that refreshes the baseline, as the report names it. */
  refresh: string
  /** The run as read, in scope. */
  run: GateSide
  /** The run's scenario claims, in scope. */
  claims: ClaimResult[]
}

/**
 * Check the run directory against the baseline directory. Throws a `CachelabError` (kind `input`) when a
 * directory lacks its files or the baseline has nothing in scope, (kind `usage`) on an unknown provider.
 */
export function check(options: CheckOptions): CheckResult {
  requireKnown(options.providers ?? [], knownProviderIds(), 'provider')
  const baseline = readRunDirectory(options.baseline, 'baseline', options)
  if (baseline.summary.length === 0)
    throw new CachelabError(
      'input',
      `${join(options.baseline, 'summary.csv')} has no rows in scope: nothing to check`,
    )
  const run = readRunDirectory(options.run, 'run', options)
  const runSteps = run.steps
  if (runSteps === undefined)
    throw new CachelabError(
      'input',
      `run directory ${options.run} has no steps.csv (the claims and rows are checked from it)`,
    )
  const claims = inScope(evaluateClaims(options.definitions ?? SCENARIOS, runSteps), options)
  const gate = checkBaseline({
    baseline,
    run,
    claims,
    rowProblems: sessionRowProblems(runSteps),
    options: {
      tolerancePoints: options.tolerancePoints ?? DEFAULT_TOLERANCE_POINTS,
      costTolerancePercent: options.costTolerancePercent ?? DEFAULT_COST_TOLERANCE_PERCENT,
      breakThresholdTokens: options.breakThresholdTokens ?? DEFAULT_BREAK_THRESHOLD_TOKENS,
      strict: options.strict === true,
    },
  })
  const notices = [
    ...(baseline.breaks === undefined
      ? [`note: ${options.baseline} has no breaks.csv or steps.csv, so breaks were not compared`]
      : []),
    ...gatewayLines(options.run),
    ...(run.plan === undefined && readManifest(options.run)?.writer === 'run'
      ? [
          `note: ${options.run} has no ${PLAN_FILE} (a run of an older cachelab), so every baseline session is judged; run again, or gate a subset with --scenario, --variant and --provider`,
        ]
      : []),
  ]
  const refresh = refreshCommand(options.baseline, options.run)
  return {
    passed: gate.passed,
    gate,
    report: [...notices, gateReport(gate, { refresh })].join('\n'),
    notices,
    refresh,
    run,
    claims,
  }
}

/**
 * How to refresh the baseline: `npm run baseline` where that script exists (cachelab's own repository
 * and its committed baseline), else check's own `--update` with the folders of this check.
 */
function refreshCommand(baselineDir: string, runDir: string): string {
  try {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      name?: unknown
      scripts?: Record<string, unknown>
    }
    if (
      pkg.name === 'cachelab' &&
      typeof pkg.scripts?.baseline === 'string' &&
      baselineDir.replace(/\/$/, '') === 'reports/baselines'
    )
      return 'npm run baseline'
  } catch {
    // No package.json here, or not one to read: the command below serves anywhere.
  }
  return `cachelab check --baseline ${baselineDir} --out ${runDir} --update`
}

/**
 * A gateway route's folder (`cachelab gateway`) holds its changes.csv: what the gateway did that no row's
 * numbers show (usage zeroed or dropped, a model changed, request fields dropped) is named beside the verdict.
 */
function gatewayLines(runDir: string): string[] {
  const path = join(runDir, 'changes.csv')
  if (!existsSync(path)) return []
  const noted = gatewayNotes(parseCsv(readFileSync(path, 'utf8')).map((record) => record.changes ?? ''))
  return noted.length === 0 ? [] : [`note: the gateway (${path}):`, ...noted.map((line) => `  ${line}`)]
}

/**
 * A baseline folder that is not there is named with what to do: a typo, or a baseline not made yet (a
 * run's folder, or `check --update` writing one from a run).
 */
export function requireBaselineDirectory(dir: string): void {
  if (existsSync(dir) && statSync(dir).isDirectory()) return
  throw new CachelabError(
    'input',
    `baseline directory ${dir} ${existsSync(dir) ? 'is a file' : `does not exist (from ${process.cwd()})`}: name a run folder or a baseline such as reports/baselines, or make one from a run with cachelab check --baseline ${dir} --update`,
  )
}

/** One directory's files, restricted to the scope: summary.csv (required), breaks and steps when present. */
export function readRunDirectory(dir: string, what: 'baseline' | 'run', scope: CheckScope): GateSide {
  if (what === 'baseline') requireBaselineDirectory(dir)
  // An interrupted run (or a folder whose files were never cachelab's together) is refused, not gated.
  requireCompleteRun(dir, what)
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
  const planPath = join(dir, PLAN_FILE)
  // A run's plan.json says what it set out to produce; a baseline's is not read (it is the reference).
  const plan: RunPlan | undefined =
    what === 'run' && existsSync(planPath) ? parsePlan(readFileSync(planPath, 'utf8'), planPath) : undefined
  return { summary: inScope(readSummaryCsv(summaryPath), scope), breaks, steps, plan }
}

/** The rows in scope. */
function inScope<T extends { scenario: string; provider: string; variant?: string; variants?: string[] }>(
  rows: readonly T[],
  scope: CheckScope,
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

/** The agents gate's verdict: the run's agents.csv against the baseline's. */
export interface AgentsCheckResult {
  passed: boolean
  report: string
  /** The run's agents.csv text, for `--update`. */
  runText: string
}

/**
 * Check a `run --agent` folder's agents.csv against the baseline's: sessions are named by the agents' own
 * ids, which differ every run, so the agents gate compares per agent and scenario, not per session.
 */
export function checkAgents(baselineDir: string, runDir: string, thresholdTokens: number): AgentsCheckResult {
  requireCompleteRun(baselineDir, 'baseline')
  requireCompleteRun(runDir, 'run')
  const read = (dir: string, what: string) => {
    const path = join(dir, 'agents.csv')
    if (!existsSync(path))
      throw new CachelabError(
        'input',
        `${what} directory ${dir} has no agents.csv (a run --agent writes one)`,
      )
    const text = readFileSync(path, 'utf8')
    try {
      return { text, rows: parseAgentsCsv(text, path) }
    } catch (error) {
      throw new CachelabError('input', (error as Error).message)
    }
  }
  const baseline = read(baselineDir, 'baseline')
  const run = read(runDir, 'run')
  if (baseline.rows.length === 0)
    throw new CachelabError('input', `${join(baselineDir, 'agents.csv')} has no rows: nothing to check`)
  const { findings, notes } = gateAgents(baseline.rows, run.rows, thresholdTokens)
  const lines = [
    ...notes.map((note) => `note: version changed: ${note}`),
    ...findings.map((finding) => `FAIL ${finding.agent}/${finding.scenario}: ${finding.text}`),
    `agents gate: ${baseline.rows.length} agent sessions of the baseline, ${findings.length} failures (break threshold ${thresholdTokens} tokens): ${findings.length === 0 ? 'PASS' : 'FAIL'}`,
  ]
  return { passed: findings.length === 0, report: lines.join('\n'), runText: run.text }
}
