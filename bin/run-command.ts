// `cachelab run`: scenarios × providers × variants on the simulator (or live), the summary printed,
// and steps.csv, summary.csv, report.html and every session's event log written under the output directory.

import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { config as loadDotenv } from 'dotenv'
import { VirtualClock } from '../harness/clock.ts'
import { CachelabError } from '../harness/errors.ts'
import { hashString } from '../harness/random.ts'
import { startMockProviders } from '../providers/index.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { breaksOf } from '../reports/breaks.ts'
import { breaksCsv, claimsCsv, stepsCsv, summaryCsv } from '../reports/csv.ts'
import { providerOutcomes, runFailures, type SessionOutcome } from '../reports/failures.ts'
import { renderReport } from '../reports/html.ts'
import { summarize, withClaims } from '../reports/summary.ts'
import { summaryTable } from '../reports/table.ts'
import type { ClaimResult, StepRow, SummaryRow } from '../reports/types.ts'
import { evaluateClaims } from '../scenarios/claims.ts'
import type { NotApplicable } from '../scenarios/requirements.ts'
import { planMatrix, runSession, sessionIdOf } from '../scenarios/run.ts'
import type { Scenario } from '../scenarios/types.ts'
import { listOption, parse, providersOption } from './args.ts'
import { chosenScenarios, knownScenarios } from './scenarios-option.ts'

const OUT_ROOT = join('reports', 'out')

export async function runCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    scenario: { type: 'string' },
    scenarios: { type: 'string' },
    provider: { type: 'string' },
    variant: { type: 'string' },
    model: { type: 'string' },
    live: { type: 'boolean' },
    stream: { type: 'boolean' },
    out: { type: 'string' },
    json: { type: 'boolean' },
  })
  const scenarios = chosenScenarios(await knownScenarios(values.scenarios), values.scenario)
  const providers = providersOption(values.provider)
  const variantNames = [
    ...new Set(scenarios.flatMap((scenario) => scenario.variants.map((variant) => variant.name))),
  ]
  const variants = listOption(values.variant, variantNames, 'variant')
  const { plans, notApplicable } = planMatrix(scenarios, providers, {
    ...(variants !== undefined ? { variants } : {}),
    ...(values.model !== undefined ? { model: values.model } : {}),
  })
  if (plans.length === 0) {
    const [first] = notApplicable
    throw new CachelabError(
      'usage',
      first === undefined
        ? 'nothing to run: no scenario has those variants on those providers'
        : `nothing to run: ${notApplicableLine(first)}${notApplicable.length > 1 ? ` (and ${notApplicable.length - 1} more)` : ''}`,
    )
  }
  const live = values.live === true
  const stream = values.stream ?? false
  const env: Record<string, string | undefined> = { ...process.env }
  if (live) loadDotenv({ processEnv: env as Record<string, string>, quiet: true })

  const outDir = resolve(values.out ?? join(OUT_ROOT, timestamp()))
  const sessionsDir = join(outDir, 'sessions')
  prepareOutput(outDir, sessionsDir)
  const runId = live
    ? `live-${timestamp()}`
    : `sim-${hashString(JSON.stringify([plans.map(sessionIdOf), values.model ?? '', stream]))
        .toString(16)
        .padStart(8, '0')}`

  const showProgress = process.stderr.isTTY === true && process.env.CI === undefined && values.json !== true
  const mock = live ? undefined : startMockProviders()
  // Live sessions share one predictor and one clock, as they share the provider's cache and time.
  const predictor = new CacheSimulators()
  const liveClock = new VirtualClock()
  const rows: StepRow[] = []
  const outcomes: SessionOutcome[] = []
  try {
    for (const [index, plan] of plans.entries()) {
      const result = await runSession(plan, {
        runId,
        stream,
        sessionsDir,
        env,
        ...(mock !== undefined ? { mock } : { predictor, clock: liveClock }),
      })
      rows.push(...result.rows)
      outcomes.push({ provider: plan.provider, rows: result.rows, events: result.events })
      if (showProgress) {
        const [summary] = summarize(result.rows)
        const hit = summary?.hitRatioWarm === undefined ? '-' : `${(summary.hitRatioWarm * 100).toFixed(1)}%`
        process.stderr.write(`[${index + 1}/${plans.length}] ${sessionIdOf(plan)}  hit (warm) ${hit}\n`)
      }
    }
  } finally {
    mock?.close()
  }
  const { summaries, claims } = writeRunFiles(outDir, { runId, rows, scenarios, notApplicable })
  if (values.out === undefined) linkLatest(outDir)
  const failures = runFailures(providerOutcomes(outcomes), live ? 'live' : 'simulated')
  if (values.json === true) {
    const report = { runId, outDir, summary: summaries, claims, notApplicable, failures }
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
  } else {
    const succeeded = rows.filter((row) => row.ok).length
    const lines = [summaryTable(summaries), '']
    if (notApplicable.length > 0) {
      lines.push(
        `not applicable (no rows, no numbers):`,
        ...notApplicable.map((entry) => `  ${notApplicableLine(entry)}`),
        '',
      )
    }
    lines.push(claimsSummary(claims), '')
    lines.push(
      `run ${runId}: ${succeeded} requests, ${rows.length - succeeded} failed attempts; wrote ${relative(process.cwd(), outDir) || '.'}/{steps.csv,summary.csv,breaks.csv,claims.csv,report.html,sessions/}`,
    )
    process.stdout.write(`${lines.join('\n')}\n`)
  }
  // The outputs are written either way; a provider that did not answer fails the run.
  for (const line of failures) process.stderr.write(`${line}\n`)
  return failures.length > 0 ? 1 : 0
}

/** What a run wrote: its summaries (claims counted in) and its claims. */
export interface RunFiles {
  summaries: SummaryRow[]
  claims: ClaimResult[]
}

/**
 * Write a run's files into `outDir`: steps.csv, summary.csv, breaks.csv, claims.csv and report.html, the
 * claims evaluated on the rows.
 */
export function writeRunFiles(
  outDir: string,
  run: {
    runId: string
    rows: readonly StepRow[]
    scenarios: readonly Scenario[]
    notApplicable?: readonly NotApplicable[]
  },
): RunFiles {
  const { runId, rows } = run
  const notApplicable = run.notApplicable ?? []
  const claims = evaluateClaims(run.scenarios, rows)
  const summaries = withClaims(summarize(rows), claims)
  mkdirSync(outDir, { recursive: true })
  writeFileSync(join(outDir, 'steps.csv'), stepsCsv(rows))
  writeFileSync(join(outDir, 'summary.csv'), summaryCsv(summaries))
  writeFileSync(join(outDir, 'breaks.csv'), breaksCsv(breaksOf(rows)))
  writeFileSync(join(outDir, 'claims.csv'), claimsCsv(claims))
  writeFileSync(join(outDir, 'report.html'), renderReport({ rows, summaries, runId, claims, notApplicable }))
  return { summaries, claims }
}

/** The claims in a few lines: how many hold, each failure with what it observed. */
function claimsSummary(claims: readonly ClaimResult[]): string {
  const count = (status: ClaimResult['status']) => claims.filter((claim) => claim.status === status).length
  const failed = claims.filter((claim) => claim.status === 'fails')
  const notRun = count('not-run')
  const head = `claims: ${count('holds')} of ${claims.length - notRun} hold${notRun > 0 ? ` (${notRun} not run: a variant they read was not in this run)` : ''}`
  return [
    head,
    ...failed.map(
      (claim) => `  FAILS ${claim.scenario} on ${claim.provider}: ${claim.text} Observed: ${claim.observed}`,
    ),
  ].join('\n')
}

/** A variant left out of the run, as one line: which session, on which model, and why. */
function notApplicableLine(entry: NotApplicable): string {
  return `${entry.scenario}/${entry.variant} on ${entry.provider} (${entry.model}): ${entry.reason}`
}

/** Make the output directory; a previous run's session logs there are replaced. */
function prepareOutput(outDir: string, sessionsDir: string): void {
  mkdirSync(outDir, { recursive: true })
  if (existsSync(sessionsDir)) {
    for (const name of readdirSync(sessionsDir)) {
      if (name.endsWith('.jsonl') || name.endsWith('.torn')) rmSync(join(sessionsDir, name))
    }
  }
  mkdirSync(sessionsDir, { recursive: true })
}

function linkLatest(outDir: string): void {
  const latest = resolve(OUT_ROOT, 'latest')
  try {
    unlinkSync(latest)
  } catch {
    // no previous link
  }
  symlinkSync(relative(resolve(OUT_ROOT), outDir), latest)
}

function timestamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
}
