// A run of the scenario matrix as a function: plan the sessions, drive each through the loop against the
// mock providers (or live), and return the rows, summaries, claims and failures, writing the run's files
// when given a directory. `cachelab run` and the library's `run` are both this; the command only parses
// flags and prints.

import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve, sep } from 'node:path'
import { VirtualClock } from '../harness/clock.ts'
import { CachelabError, requireKnown, unreachable } from '../harness/errors.ts'
import { type DshModules, loadDshModules, type ModuleImporter } from '../harness/loops/dsh/modules.ts'
import { DSH_STORE_FOLDER, dshLogFile } from '../harness/loops/dsh/store.ts'
import type { LibraryLoopModule, LibraryLoopName } from '../harness/loops/libraries/types.ts'
import type { LoopInexpressible, LoopName } from '../harness/loops/types.ts'
import type { RequestRecord } from '../harness/ports.ts'
import { PROVIDER_IDS, type ProviderId } from '../harness/types.ts'
import { cachelabVersion } from '../harness/version.ts'
import { catalogEntries } from '../providers/catalog.ts'
import { knownProviderIds } from '../providers/compatible.ts'
import { liveEndpoint } from '../providers/endpoints.ts'
import { startMockProviders } from '../providers/index.ts'
import { requireSdks } from '../providers/sdks.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import type { BreakEvent } from '../reports/break-events.ts'
import { providerOutcomes, runFailures, type SessionOutcome } from '../reports/failures.ts'
import { compareLibraries, type LibraryReport, type LibrarySessionRecord } from '../reports/libraries.ts'
import { compareLoops, type LoopComparison, type LoopSession } from '../reports/loops.ts'
import { PLAN_FILE, planText, type RunPlan } from '../reports/plan.ts'
import { RUN_FILES, RunFolder, runStamp } from '../reports/run-folder.ts'
import type { SessionKey } from '../reports/session-key.ts'
import { summarize } from '../reports/summary.ts'
import type { ClaimResult, StepRow, SummaryRow } from '../reports/types.ts'
import { SCENARIOS } from './index.ts'
import type { NotApplicable } from './requirements.ts'
import { planMatrix, runSession, type SessionPlan, sessionIdOf } from './run.ts'
import { DSH_LOOP_PROVIDER, runDshSession } from './run-dsh.ts'
import { verdictsOf, writeInto } from './run-files.ts'
import { libraryLoopsOf, libraryPlansOf, loadLibraries, runLibraryPlans, speaks } from './run-libraries.ts'
import {
  canTransfer,
  type FinishedSession,
  jobsFor,
  type SessionJobEvent,
  SessionPool,
  sessionBreakEvents,
} from './session-jobs.ts'
import {
  assignShards,
  digestOf,
  type MatrixShardSession,
  noSharedRunId,
  plannedRequests,
  SHARD_FILE,
  SHARD_FORMAT,
  SHARD_VERSION,
  type Shard,
  type ShardOptions,
  shardLabel,
  shardText,
} from './shards.ts'
import type { Scenario } from './types.ts'

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
   * Write steps.csv, summary.csv, breaks.csv, claims.csv, report.html and `sessions/*.jsonl` here, listed
   * in `.cachelab-manifest.json` and marked complete last; a previous run's files (those its manifest
   * lists) are replaced, a file cachelab did not write is an error. Nothing is written when absent.
   */
  out?: string
  /**
   * The agent loops to drive each session through: cachelab's model of DSH (`model`, the default) and/or
   * DSH's real published loop (`dsh`, simulated runs on the deepseek provider only). With both, the run
   * also compares them request by request (loops.csv).
   */
  loops?: readonly LoopName[]
  /** Loads DSH's packages for `--loop dsh` (tests simulate their absence); the runtime's `import` when absent. */
  importer?: ModuleImporter
  /** Library loop modules to use instead of the built-in ones (tests give a fake loop or an absent one). */
  libraryModules?: Partial<Record<LibraryLoopName, LibraryLoopModule>>
  /**
   * Worker threads to spread the sessions over (each with its own mock providers); the output is the
   * same bytes whatever the number. 1 runs every session in this thread. Default: the machine's cores
   * (`os.availableParallelism()`). A `live` run is always in process: its sessions share one predictor
   * and one clock, as they share the provider's cache and time.
   */
  jobs?: number
  /** Called after each session, in order: for progress output. */
  onSession?: (progress: SessionProgress) => void
  /** Called as the run goes on (a session starts, a request finishes, a session ends), in any order. */
  onProgress?: (progress: RunProgress) => void
  /**
   * Called with each model-loop request as it finishes, with its session's plan. Giving it runs every
   * session in this thread (a worker's requests do not cross threads): the matrix benchmark replays
   * their bodies.
   */
  onRequest?: (record: RequestRecord, plan: SessionPlan) => void
  /**
   * Run one shard of the run (`--shard i/n`): its cells of the whole plan, written into `out` as a blob
   * for `merge-reports` (scenarios/shards.ts) instead of the run's files. The returned rows, summaries and
   * claims are the shard's alone.
   */
  shard?: ShardOptions
}

/** How far a run is, at one moment. */
export interface RunProgress {
  /** Sessions in the run. */
  sessionsTotal: number
  /** Sessions finished (every loop of them). */
  sessionsDone: number
  /** Requests sent so far (failed attempts included). */
  requests: number
  /** The sessions running now, `<scenario>.<variant>.<provider>`, in plan order. */
  running: string[]
  /** The threads the sessions run on (1: in process). */
  jobs: number
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
  /** Scenario events (and sessions) an external loop could not express: no rows for them, never faked. */
  inexpressible: LoopInexpressible[]
  /** The model and DSH loops request by request, for the sessions both ran. */
  comparisons: LoopComparison[]
  /** The client-library loops side by side (empty without library loops), and those that were absent. */
  libraries: LibraryReport
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
  requireKnown(providers, knownProviderIds(), 'provider')
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
  const loops: LoopName[] = [...new Set<LoopName>(options.loops ?? ['model'])]
  const dsh = loops.includes('dsh')
  if (dsh && live) throw new CachelabError('usage', '--loop dsh runs on the simulator only (not with --live)')
  if (dsh && !loops.includes('model') && !plans.some((plan) => plan.provider === DSH_LOOP_PROVIDER))
    throw new CachelabError(
      'usage',
      `nothing to run: --loop dsh runs on the ${DSH_LOOP_PROVIDER} provider only`,
    )
  const libraryLoops = libraryLoopsOf(loops)
  if (libraryLoops.length > 0 && live)
    throw new CachelabError(
      'usage',
      `--loop ${libraryLoops.join(',')} runs on the simulator only (the library loops talk to a loopback serve): drop --live`,
    )
  const shard = options.shard
  if (shard !== undefined && libraryLoops.length > 0)
    throw new CachelabError(
      'usage',
      `--shard cannot split --loop ${libraryLoops.join(',')}: the client-library loops pick their sessions across the whole matrix; run them unsharded`,
    )
  if (shard !== undefined && live && shard.sharedId === undefined) throw noSharedRunId('--live')
  // A shard runs its cells of the whole plan; everything that names the run (its id, plan.json, the
  // claims' scenarios) is still the whole run's.
  const mine = shard === undefined ? undefined : shardCellsOf(plans, shard, live)
  const running = mine === undefined ? plans : plans.filter((_, index) => mine[index])
  // DSH's packages are loaded before anything runs: without them the run is a usage error naming them.
  const dshModules: DshModules | undefined = dsh ? await loadDshModules(options.importer) : undefined
  const { loaded: loadedLibraries, absent } = await loadLibraries(
    libraryLoops,
    loops,
    options.libraryModules ?? {},
  )
  const libraryPlans = libraryPlansOf(plans)
  const stream = options.stream ?? false
  if (live) requireLiveKeys(running, options.env ?? process.env)
  const requestedJobs = jobsFor(running, options.jobs)
  const modelLoop = loops.includes('model')
  // The model loop sends through the providers' official SDKs (optional peers): a missing one is a usage
  // error naming it before anything runs.
  if (modelLoop)
    await requireSdks(
      running.map((plan) => plan.provider),
      'run drives scenarios through',
    )
  // Live sessions share a predictor and a clock; scenarios a worker cannot receive stay in process too,
  // and so do the sessions of a run that watches each request.
  const jobs =
    live || !modelLoop || requestedJobs === 1 || options.onRequest !== undefined || !canTransfer(running)
      ? 1
      : requestedJobs
  // Every argument is checked by now: only then is the output folder touched.
  const outDir = options.out === undefined ? undefined : resolve(options.out)
  const sessionFiles = runSessionFiles(running, loops)
  const folder =
    outDir === undefined
      ? undefined
      : RunFolder.replace(outDir, {
          writer: shard === undefined ? 'run' : `run --shard ${shardLabel(shard)}`,
          files:
            shard === undefined
              ? [
                  ...RUN_FILES,
                  PLAN_FILE,
                  ...sessionFiles,
                  ...(loadedLibraries.length > 0 ? ['libraries.csv', 'library-steps.csv'] : []),
                  ...(dsh ? ['loops.csv'] : []),
                ]
              : [SHARD_FILE, ...sessionFiles],
        })
  // The folder keeps its previous run until `complete`; a run that throws gives its build folder up.
  try {
    const sessionsDir = folder === undefined ? undefined : join(folder.buildDir, SESSIONS_DIR)
    const runId = live
      ? `live-${shard?.sharedId ?? runStamp()}`
      : simulatedRunId(plans, {
          model: options.model,
          stream,
          loops,
          libraries: loadedLibraries.map((library) => library.loop.name),
        })
    // The in-process mocks intercept every fetch of this thread: started only for the loops that use them.
    const mock = live || !(modelLoop || dsh) ? undefined : startMockProviders()
    // Live sessions share one predictor and one clock, as they share the provider's cache and time.
    const predictor = new CacheSimulators()
    const liveClock = new VirtualClock()
    const rows: StepRow[] = []
    const outcomes: SessionOutcome[] = []
    const inexpressible: LoopInexpressible[] = []
    const breakEvents: BreakEvent[] = []
    const comparisons: LoopComparison[] = []
    const librarySessions: LibrarySessionRecord[] = []
    const shardSessions: MatrixShardSession[] = []
    // DSH's store needs a folder even when the run writes nothing: a temporary one, removed at the end.
    const dshDir = dsh ? (sessionsDir ?? mkdtempSync(join(tmpdir(), 'cachelab-dsh-'))) : undefined
    const compare = modelLoop && dsh
    /** The library loops that run a plan: each loaded library on a distinct plan of a provider it speaks to. */
    const librariesFor = (index: number) =>
      libraryPlans.has(index)
        ? loadedLibraries.filter((library) => speaks(library.loop, (plans[index] as SessionPlan).provider))
        : []
    const progress = progressTracker(
      running,
      loops,
      jobs,
      options.onProgress,
      (index) => librariesFor(index).length,
    )
    // Model-loop sessions run in the workers while this thread runs the DSH loop's, if any, in plan order.
    const pool =
      jobs > 1
        ? SessionPool.start(running, { runId, stream, sessionsDir, digests: compare }, jobs, progress.observe)
        : undefined
    /** A model-loop session in this thread: a live run's (shared predictor and clock) or `jobs` 1's. */
    const inProcess = async (index: number): Promise<FinishedSession> => {
      const plan = running[index] as SessionPlan
      progress.observe({ kind: 'started', index })
      const result = await runSession(plan, {
        runId,
        stream,
        env: options.env ?? process.env,
        ...(sessionsDir !== undefined ? { sessionsDir } : {}),
        ...(mock !== undefined ? { mock } : { predictor, clock: liveClock }),
        ...(compare ? { digests: true } : {}),
        onRow: (_row, record) => {
          progress.observe({ kind: 'request', index })
          options.onRequest?.(record, plan)
        },
      })
      progress.observe({ kind: 'finished', index })
      return {
        rows: result.rows,
        attempts: result.events.filter((event) => event.type === 'assistant/attempt'),
        breakEvents: sessionBreakEvents(result.rows, result.events),
        digests: result.digests,
      }
    }
    try {
      for (const [index, plan] of running.entries()) {
        const sessionId = sessionIdOf(plan)
        const pair: { model?: LoopSession; dsh?: LoopSession } = {}
        const sessionRows: StepRow[] = []
        const sessionBreaks: BreakEvent[] = []
        const sessionInexpressible: LoopInexpressible[] = []
        if (modelLoop) {
          const result = pool !== undefined ? await pool.result(index) : await inProcess(index)
          const labelled = result.rows.map((row) => ({ ...row, loop: 'model' as const }))
          sessionRows.push(...labelled)
          outcomes.push({ provider: plan.provider, rows: labelled, events: result.attempts })
          pair.model = { rows: labelled, digests: result.digests ?? [], breakEventTypes: [] }
          sessionBreaks.push(...result.breakEvents)
        }
        if (dshModules !== undefined && mock !== undefined && dshDir !== undefined) {
          if (plan.provider !== DSH_LOOP_PROVIDER) {
            sessionInexpressible.push({
              sessionId,
              loop: 'dsh',
              action: 'session',
              turn: 0,
              reason: `DSH's published loop speaks only through its DeepSeek adapter (--provider ${DSH_LOOP_PROVIDER})`,
            })
          } else {
            progress.observe({ kind: 'started', index })
            const result = await runDshSession(plan, {
              runId,
              mock,
              sessionsDir: dshDir,
              modules: dshModules,
            })
            for (const _ of result.rows) progress.observe({ kind: 'request', index })
            progress.observe({ kind: 'finished', index })
            sessionRows.push(...result.rows)
            outcomes.push({ provider: plan.provider, rows: result.rows, events: [] })
            sessionInexpressible.push(
              ...result.inexpressible.map((entry) => ({ ...entry, sessionId, loop: 'dsh' as const })),
            )
            pair.dsh = { rows: result.rows, digests: result.digests, breakEventTypes: result.breakEventTypes }
          }
        }
        const comparison =
          pair.model !== undefined && pair.dsh !== undefined ? compareLoops(pair.model, pair.dsh) : undefined
        if (comparison !== undefined) comparisons.push(comparison)
        rows.push(...sessionRows)
        breakEvents.push(...sessionBreaks)
        inexpressible.push(...sessionInexpressible)
        if (shard !== undefined)
          shardSessions.push({
            cell: sessionId,
            rows: sessionRows,
            breakEvents: sessionBreaks,
            inexpressible: sessionInexpressible,
            ...(comparison !== undefined ? { comparison } : {}),
          })
        if (!(modelLoop || dsh)) continue
        options.onSession?.({
          index: index + 1,
          total: running.length,
          sessionId,
          summary: summarize(sessionRows)[0],
        })
      }
    } finally {
      await pool?.close()
      mock?.close()
      if (dshDir !== undefined && sessionsDir === undefined) rmSync(dshDir, { recursive: true, force: true })
    }
    // The library sessions run after the model and DSH loops, once the in-process mocks (which intercept
    // this thread's fetch) are closed.
    if (loadedLibraries.length > 0) {
      const ran = await runLibraryPlans(plans, libraryPlans, loadedLibraries, {
        runId,
        progress: progress.observe,
      })
      inexpressible.push(...ran.inexpressible)
      librarySessions.push(...ran.records)
      for (const { index, sessionId, rows: sessionRows } of ran.sessions) {
        rows.push(...sessionRows)
        if (modelLoop || dsh) continue
        options.onSession?.({
          index: index + 1,
          total: plans.length,
          sessionId,
          summary: summarize(sessionRows)[0],
        })
      }
    }
    const plan = runPlan(options, plans, notApplicable, loops, (index) =>
      librariesFor(index).map((library) => library.loop.name),
    )
    const libraryReport = compareLibraries(librarySessions, absent)
    if (shard !== undefined)
      folder?.write(
        SHARD_FILE,
        shardText({
          format: SHARD_FORMAT,
          version: SHARD_VERSION,
          kind: 'matrix',
          shard: { index: shard.index, count: shard.count },
          cachelab: cachelabVersion(),
          runId,
          digests: runDigests(scenarios, { model: options.model, stream, loops, live }),
          cells: plans.map(sessionIdOf),
          where: { ...shard.where },
          // The logs this shard wrote (a session that sent nothing has none), for the merge to find each.
          files: sessionFiles.filter((name) => folder !== undefined && existsSync(folder.path(name))),
          run: { scenarios: scenarios.map((scenario) => scenario.name), plan, notApplicable },
          sessions: shardSessions,
        }),
      )
    else folder?.write(PLAN_FILE, planText(plan))
    const verdicts =
      folder === undefined || shard !== undefined
        ? verdictsOf(rows, scenarios)
        : writeInto(folder, {
            runId,
            rows,
            scenarios,
            notApplicable,
            comparisons,
            inexpressible,
            breakEvents,
            ...(loadedLibraries.length > 0 ? { libraries: libraryReport } : {}),
          })
    folder?.complete()
    // A library's refused requests are its finding (libraries.csv), not a provider that did not answer.
    const failures = runFailures(providerOutcomes(outcomes), live ? 'live' : 'simulated')
    return {
      runId,
      rows,
      ...verdicts,
      notApplicable,
      failures,
      inexpressible,
      comparisons,
      libraries: libraryReport,
      outDir,
    }
  } catch (error) {
    folder?.abandon()
    throw error
  }
}

/**
 * Counts a run's progress from its sessions' events and reports each change. A session is done once
 * every loop that runs it has finished (the model loop and, on its provider, the DSH loop).
 */
function progressTracker(
  plans: readonly SessionPlan[],
  loops: readonly LoopName[],
  jobs: number,
  onProgress: ((progress: RunProgress) => void) | undefined,
  libraryParts: (index: number) => number,
): { observe: (event: SessionJobEvent) => void } {
  const partsOf = (plan: SessionPlan, index: number) =>
    (loops.includes('model') ? 1 : 0) +
    (loops.includes('dsh') && plan.provider === DSH_LOOP_PROVIDER ? 1 : 0) +
    libraryParts(index)
  const remaining = plans.map(partsOf)
  const active = plans.map(() => 0)
  let requests = 0
  const report = () =>
    onProgress?.({
      sessionsTotal: plans.length,
      sessionsDone: remaining.filter((parts) => parts === 0).length,
      requests,
      running: plans.flatMap((plan, index) => ((active[index] ?? 0) > 0 ? [sessionIdOf(plan)] : [])),
      jobs,
    })
  return {
    observe: (event) => {
      const { index } = event
      switch (event.kind) {
        case 'started':
          active[index] = (active[index] ?? 0) + 1
          break
        case 'request':
          requests += 1
          break
        case 'finished':
          active[index] = (active[index] ?? 1) - 1
          remaining[index] = (remaining[index] ?? 1) - 1
          break
        default:
          unreachable(event)
      }
      report()
    },
  }
}

/**
 * What the run planned, for plan.json: the selection its options narrowed (a dimension left open is `all`,
 * so a baseline session of a scenario the run no longer knows is still missing), and each session it set
 * out to produce, one per loop that drives it.
 */
function runPlan(
  options: RunOptions,
  plans: readonly SessionPlan[],
  notApplicable: readonly NotApplicable[],
  loops: readonly LoopName[],
  libraryLoops: (index: number) => LoopName[],
): RunPlan {
  const names = (entries: readonly (string | Scenario)[]) =>
    entries.map((entry) => (typeof entry === 'string' ? entry : entry.name))
  const sessions = plans.flatMap((plan, index): SessionKey[] => {
    const key: SessionKey = {
      scenario: plan.scenario.name,
      variant: plan.variant.name,
      provider: plan.provider,
    }
    const driven: LoopName[] = [
      ...(loops.includes('model') ? (['model'] as const) : []),
      ...(loops.includes('dsh') && plan.provider === DSH_LOOP_PROVIDER ? (['dsh'] as const) : []),
      ...libraryLoops(index),
    ]
    return driven.map((loop) => (loop === 'model' ? key : { ...key, loop }))
  })
  return {
    selection: {
      scenarios: options.scenarios === undefined ? 'all' : names(options.scenarios),
      variants: options.variants === undefined ? 'all' : [...options.variants],
      providers: options.providers === undefined ? 'all' : [...options.providers],
      // The client libraries' reference loop (`sdk`) runs beside them unasked: it is part of the plan.
      loops: [...new Set([...loops, ...sessions.map((key) => key.loop ?? 'model')])],
    },
    sessions,
    leftOut: notApplicable.map(({ scenario, variant, provider, reason }) => ({
      scenario,
      variant,
      provider,
      reason,
    })),
  }
}

/** What decides a simulated run's numbers besides its plans. */
interface RunIdParts {
  model: string | undefined
  stream: boolean
  loops: readonly LoopName[]
  /** The client-library loops that were loaded and run. */
  libraries: readonly string[]
}

/**
 * A simulated run's id: `sim-` and a hash of everything that decides its numbers — cachelab's version,
 * the model catalog, each scenario as it ran (script, variants, claims with their checks' source), the
 * sessions planned and the options that change results. Two runs share an id only when they are the
 * same run; a changed scenario script is another id.
 */
export function simulatedRunId(plans: readonly SessionPlan[], parts: RunIdParts): string {
  const scenarios = [...new Set(plans.map((plan) => plan.scenario))]
  const decided = {
    cachelab: cachelabVersion(),
    catalog: catalogEntries(),
    scenarios,
    sessions: plans.map((plan) => [sessionIdOf(plan), plan.model ?? '']),
    model: parts.model ?? '',
    stream: parts.stream,
    loops: parts.loops,
    libraries: parts.libraries,
  }
  // A claim's check and any function a library user's scenario carries count by their source text.
  return `sim-${digestOf(decided, 8)}`
}

/**
 * What a shard's manifest holds to tell the runs apart that `merge-reports` must not mix: the catalog,
 * the scenarios whose claims the merged run evaluates, and the options that change the numbers.
 */
export function runDigests(
  scenarios: readonly Scenario[],
  options: { model: string | undefined; stream: boolean; loops: readonly LoopName[]; live: boolean },
): { catalog: string; scenarios: string; options: string } {
  return {
    catalog: digestOf(catalogEntries()),
    scenarios: digestOf(scenarios),
    options: digestOf({ ...options, model: options.model ?? '' }),
  }
}

/**
 * Which cells of the plan a shard runs, balanced by their planned requests. On the simulator every session
 * is alone with its cache; live, a scenario's sessions on one provider share its prefix in the provider's
 * cache, so they stay on one machine, in run order, with one predictor.
 */
function shardCellsOf(plans: readonly SessionPlan[], shard: Shard, live: boolean): boolean[] {
  const assigned = assignShards(
    plans.map((plan) => ({
      cost: plannedRequests(plan),
      group: live ? `${plan.scenario.name}\u0000${plan.provider}` : sessionIdOf(plan),
    })),
    shard.count,
  )
  return assigned.map((each) => each === shard.index)
}

/** The session logs a run of these plans writes, relative to its folder: the model loop's and DSH's. */
function runSessionFiles(plans: readonly SessionPlan[], loops: readonly LoopName[]): string[] {
  return [
    ...(loops.includes('model') ? plans.map((plan) => sessionFileOf(sessionIdOf(plan))) : []),
    ...(loops.includes('dsh')
      ? plans
          .filter((plan) => plan.provider === DSH_LOOP_PROVIDER)
          .map((plan) => dshSessionFileOf(sessionIdOf(plan)))
      : []),
  ]
}

/** A variant left out of the run, as one line: which session, on which model, and why. */
export function notApplicableLine(entry: NotApplicable): string {
  return `${entry.scenario}/${entry.variant} on ${entry.provider} (${entry.model}): ${entry.reason}`
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

/** The folder of a run's session logs, relative to the run folder. */
const SESSIONS_DIR = 'sessions'

/** A session's log, relative to the run folder. */
function sessionFileOf(sessionId: string): string {
  return `${SESSIONS_DIR}/${sessionId}.jsonl`
}

/** Where DSH's own session store writes a DSH-loop session's log, relative to the run folder. */
function dshSessionFileOf(sessionId: string): string {
  return dshLogFile(`${SESSIONS_DIR}/${DSH_STORE_FOLDER}`, sessionId).split(sep).join('/')
}

/** Live: every provider of the run needs its key, checked before the output folder is touched. */
function requireLiveKeys(plans: readonly { provider: ProviderId }[], env: RunOptions['env']): void {
  for (const provider of new Set(plans.map((plan) => plan.provider))) {
    const found = liveEndpoint(provider, env ?? process.env)
    if ('missing' in found) throw new CachelabError('usage', `--live needs ${found.missing} for ${provider}`)
  }
}
