// A run of the scenario matrix as a function: plan the sessions, drive each through the loop against the
// mock providers (or live), and return the rows, summaries, claims and failures, writing the run's files
// when given a directory. `cachelab run` and the library's `run` are both this; the command only parses
// flags and prints.

import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { VirtualClock } from '../harness/clock.ts'
import { CachelabError } from '../harness/errors.ts'
import { hashString } from '../harness/random.ts'
import { PROVIDER_IDS, type ProviderId } from '../harness/types.ts'
import { startMockProviders } from '../providers/index.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { type BreakEvent, breakEventsOf } from '../reports/break-events.ts'
import { breaksOf } from '../reports/breaks.ts'
import { breaksCsv, claimsCsv, stepsCsv, summaryCsv } from '../reports/csv.ts'
import { providerOutcomes, runFailures, type SessionOutcome } from '../reports/failures.ts'
import { renderReport } from '../reports/html.ts'
import { summarize, withClaims } from '../reports/summary.ts'
import type { ClaimResult, StepRow, SummaryRow } from '../reports/types.ts'
import { evaluateClaims } from '../scenarios/claims.ts'
import { SCENARIOS } from '../scenarios/index.ts'
import type { NotApplicable } from '../scenarios/requirements.ts'
import { planMatrix, runSession, sessionIdOf } from '../scenarios/run.ts'
import type { Scenario } from '../scenarios/types.ts'
import { requireKnown } from './args.ts'

/** What to run. Every field is optional: the whole matrix on the simulator, nothing written. */
export interface RunOptions {
  /** Scenarios by name (the built-in library, see `SCENARIOS`) or as `Scenario` objects; all built-in ones when absent. */
  scenarios?: readonly (string | Scenario)[]
  /** Providers to run each scenario on; every provider a scenario allows when absent. */
  providers?: readonly ProviderId[]
  /** Variant names to keep (of the chosen scenarios); every variant when absent. */
  variants?: readonly string[]
  /** One model for every session; the catalog default (or what a variant needs) per provider when absent. */
  model?: string
  /** Send to the real APIs with keys from `env` instead of the simulator. */
  live?: boolean
  /** Live: where keys and base URLs come from; `process.env` when absent. */
  env?: Readonly<Record<string, string | undefined>>
  /** Use the streaming APIs (usage is identical either way). */
  stream?: boolean
  /**
   * Write steps.csv, summary.csv, breaks.csv, claims.csv, report.html and `sessions/*.jsonl` here (a
   * previous run's session logs in it are replaced); nothing is written when absent.
   */
  out?: string
  /** Called after each session, in order: for progress output. */
  onSession?: (progress: SessionProgress) => void
}

/** One finished session of a run, for progress output. */
export interface SessionProgress {
  /** 1-based position of the session in the run. */
  index: number
  /** Sessions in the run. */
  total: number
  /** `<scenario>.<variant>.<provider>`. */
  sessionId: string
  /** The session's summary row; undefined when it sent nothing. */
  summary: SummaryRow | undefined
}

/** What a run returns. */
export interface RunResult {
  /** `sim-<hash of what ran>` (the same for the same run) or `live-<timestamp>`. */
  runId: string
  /** One row per provider request, a retried attempt its own row, sessions in run order. */
  rows: StepRow[]
  /** One row per (scenario, variant, provider), claims counted in. */
  summaries: SummaryRow[]
  /** Each scenario's claims on each provider. */
  claims: ClaimResult[]
  /** Variants left out because the model their scenario runs on cannot serve them. */
  notApplicable: NotApplicable[]
  /** One line per provider that did not answer (every attempt failed, or, live, a request gave up). */
  failures: string[]
  /** The absolute directory the files were written to, when `out` was given. */
  outDir: string | undefined
}

/**
 * Run scenarios × providers × variants and return the rows and their verdicts. Throws a `CachelabError`
 * (kind `usage`) on an unknown name or an empty matrix, and, live, on a missing key.
 */
export async function run(options: RunOptions = {}): Promise<RunResult> {
  const scenarios = chosenScenarios(options.scenarios)
  const providers = [...(options.providers ?? PROVIDER_IDS)]
  requireKnown(providers, PROVIDER_IDS, 'provider')
  if (options.variants !== undefined) {
    const known = [
      ...new Set(scenarios.flatMap((scenario) => scenario.variants.map((variant) => variant.name))),
    ]
    requireKnown(options.variants, known, 'variant')
  }
  const { plans, notApplicable } = planMatrix(scenarios, providers, {
    ...(options.variants !== undefined ? { variants: options.variants } : {}),
    ...(options.model !== undefined ? { model: options.model } : {}),
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
  const live = options.live === true
  const stream = options.stream ?? false
  const outDir = options.out === undefined ? undefined : resolve(options.out)
  const sessionsDir = outDir === undefined ? undefined : join(outDir, 'sessions')
  if (outDir !== undefined && sessionsDir !== undefined) prepareOutput(outDir, sessionsDir)
  const runId = live
    ? `live-${timestamp()}`
    : `sim-${hashString(JSON.stringify([plans.map(sessionIdOf), options.model ?? '', stream]))
        .toString(16)
        .padStart(8, '0')}`

  const mock = live ? undefined : startMockProviders()
  // Live sessions share one predictor and one clock, as they share the provider's cache and time.
  const predictor = new CacheSimulators()
  const liveClock = new VirtualClock()
  const rows: StepRow[] = []
  const outcomes: SessionOutcome[] = []
  const breakEvents: BreakEvent[] = []
  try {
    for (const [index, plan] of plans.entries()) {
      const result = await runSession(plan, {
        runId,
        stream,
        env: options.env ?? process.env,
        ...(sessionsDir !== undefined ? { sessionsDir } : {}),
        ...(mock !== undefined ? { mock } : { predictor, clock: liveClock }),
      })
      rows.push(...result.rows)
      outcomes.push({ provider: plan.provider, rows: result.rows, events: result.events })
      const [first] = result.rows
      if (first !== undefined) breakEvents.push(...breakEventsOf(first, result.rows, result.events))
      options.onSession?.({
        index: index + 1,
        total: plans.length,
        sessionId: sessionIdOf(plan),
        summary: summarize(result.rows)[0],
      })
    }
  } finally {
    mock?.close()
  }
  const verdicts =
    outDir === undefined
      ? verdictsOf(rows, scenarios)
      : writeRunFiles(outDir, { runId, rows, scenarios, notApplicable, breakEvents })
  const failures = runFailures(providerOutcomes(outcomes), live ? 'live' : 'simulated')
  return { runId, rows, ...verdicts, notApplicable, failures, outDir }
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
    /** The session events the breaks name, described for report.html. */
    breakEvents?: readonly BreakEvent[]
  },
): RunFiles {
  const { runId, rows } = run
  const notApplicable = run.notApplicable ?? []
  const { summaries, claims } = verdictsOf(rows, run.scenarios)
  mkdirSync(outDir, { recursive: true })
  writeFileSync(join(outDir, 'steps.csv'), stepsCsv(rows))
  writeFileSync(join(outDir, 'summary.csv'), summaryCsv(summaries))
  writeFileSync(join(outDir, 'breaks.csv'), breaksCsv(breaksOf(rows)))
  writeFileSync(join(outDir, 'claims.csv'), claimsCsv(claims))
  writeFileSync(
    join(outDir, 'report.html'),
    renderReport({ rows, summaries, runId, claims, notApplicable, breakEvents: run.breakEvents ?? [] }),
  )
  return { summaries, claims }
}

/** A variant left out of the run, as one line: which session, on which model, and why. */
export function notApplicableLine(entry: NotApplicable): string {
  return `${entry.scenario}/${entry.variant} on ${entry.provider} (${entry.model}): ${entry.reason}`
}

/** The current time as `YYYYMMDD-HHMMSS` (UTC), for run ids and default output directories. */
export function timestamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
}

/** The claims evaluated on the rows, and the summaries with them counted in. */
function verdictsOf(rows: readonly StepRow[], scenarios: readonly Scenario[]): RunFiles {
  const claims = evaluateClaims(scenarios, rows)
  return { summaries: withClaims(summarize(rows), claims), claims }
}

/** The scenarios named or given; names must be in the built-in library. */
function chosenScenarios(chosen: RunOptions['scenarios']): Scenario[] {
  if (chosen === undefined) return [...SCENARIOS]
  const names = chosen.filter((entry) => typeof entry === 'string')
  requireKnown(
    names,
    SCENARIOS.map((scenario) => scenario.name),
    'scenario',
  )
  return chosen.map((entry) =>
    typeof entry === 'string' ? (SCENARIOS.find((scenario) => scenario.name === entry) as Scenario) : entry,
  )
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
