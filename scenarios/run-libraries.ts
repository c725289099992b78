// The client-library loops of a run: which loops run (the reference always with another library), which
// plans they run, loading them (an absent library is skipped with its install command), and driving their
// sessions against one loopback serve — HTTP as to any gateway — after the in-process mocks are closed.

import { CachelabError } from '../harness/errors.ts'
import { LIBRARY_LOOPS, type LoadedLibrary, loadLibrary } from '../harness/loops/libraries/index.ts'
import {
  LIBRARY_LOOP_NAMES,
  type LibraryLoop,
  type LibraryLoopModule,
  type LibraryLoopName,
  REFERENCE_LOOP,
} from '../harness/loops/libraries/types.ts'
import type { LoopInexpressible, LoopName } from '../harness/loops/types.ts'
import type { ProviderId } from '../harness/types.ts'
import { isBuiltInVendor, vendorOf } from '../providers/catalog.ts'
import { startLoopback } from '../providers/mock/loopback.ts'
import type { AbsentLibrary, LibrarySessionRecord } from '../reports/libraries.ts'
import type { StepRow } from '../reports/types.ts'
import { type SessionPlan, sessionIdOf } from './run.ts'
import { runLibrarySession } from './run-library.ts'
import type { SessionJobEvent } from './session-jobs.ts'

/** A library loop that loaded, with the versions that run. */
export type LoadedLoop = Extract<LoadedLibrary, { status: 'loaded' }>

/** The library loops of a run: the reference loop first, and added whenever another library loop runs. */
export function libraryLoopsOf(loops: readonly LoopName[]): LibraryLoopName[] {
  const asked = LIBRARY_LOOP_NAMES.filter((name) => loops.includes(name))
  if (asked.length === 0) return []
  return [REFERENCE_LOOP, ...asked.filter((name) => name !== REFERENCE_LOOP)]
}

/**
 * Load each library loop in order; an absent one says why and how to install it. When every loop the
 * run asked for is absent the run has nothing to compare: a usage error naming each install.
 */
export async function loadLibraries(
  names: readonly LibraryLoopName[],
  asked: readonly LoopName[],
  modules: Partial<Record<LibraryLoopName, LibraryLoopModule>>,
): Promise<{ loaded: LoadedLoop[]; absent: AbsentLibrary[] }> {
  const libraries: LoadedLibrary[] = []
  for (const name of names) {
    const module = modules[name]
    // A test's module names no installed packages: its versions are what it declares.
    libraries.push(
      module === undefined ? await loadLibrary(LIBRARY_LOOPS[name]) : await loadLibrary(module, () => 'test'),
    )
  }
  const absent = libraries.flatMap((library) =>
    library.status === 'missing'
      ? [{ name: library.name, reason: library.reason, install: library.install }]
      : [],
  )
  if (asked.every((loop) => absent.some((library) => library.name === loop)))
    throw new CachelabError(
      'usage',
      `no loop to run: ${absent.map((library) => `${library.name} is absent (${library.reason}; install: ${library.install})`).join('; ')}`,
    )
  return { loaded: libraries.flatMap((library) => (library.status === 'loaded' ? [library] : [])), absent }
}

/** Whether a library loop speaks to a provider (a built-in one it lists). */
export function speaks(loop: LibraryLoop, provider: ProviderId): boolean {
  return isBuiltInVendor(vendorOf(provider)) && loop.providers.includes(provider)
}

/**
 * The plans a library loop runs, by index: per (scenario, provider), every variant with its own script,
 * skipped actions or cache rules, and the first of those that differ only in model-loop policies or
 * request building (the library decides those itself, so they would run the same session again).
 */
export function libraryPlansOf(plans: readonly SessionPlan[]): Set<number> {
  const chosen = new Set<number>()
  const plainSeen = new Set<string>()
  for (const [index, plan] of plans.entries()) {
    const { variant } = plan
    if (variant.script !== undefined || variant.skip !== undefined || variant.rules !== undefined) {
      chosen.add(index)
      continue
    }
    const key = `${plan.scenario.name}\u0000${plan.provider}`
    if (plainSeen.has(key)) continue
    plainSeen.add(key)
    chosen.add(index)
  }
  return chosen
}

/** What the library loops ran: per plan its rows (every loop's), the sessions for the side-by-side, and n/a. */
export interface LibraryRun {
  sessions: Array<{ index: number; sessionId: string; rows: StepRow[] }>
  records: LibrarySessionRecord[]
  inexpressible: LoopInexpressible[]
}

/** Run every chosen plan on every loaded library loop, in plan order, against one loopback serve. */
export async function runLibraryPlans(
  plans: readonly SessionPlan[],
  chosen: ReadonlySet<number>,
  libraries: readonly LoadedLoop[],
  options: { runId: string; progress: (event: SessionJobEvent) => void },
): Promise<LibraryRun> {
  const run: LibraryRun = { sessions: [], records: [], inexpressible: [] }
  const loopback = await startLoopback({ upstream: 'sim', port: 0 })
  try {
    for (const [index, plan] of plans.entries()) {
      if (!chosen.has(index)) continue
      const sessionId = sessionIdOf(plan)
      const rows: StepRow[] = []
      for (const library of libraries) {
        const { loop } = library
        if (!speaks(loop, plan.provider)) {
          run.inexpressible.push({
            sessionId,
            loop: loop.name,
            action: 'session',
            turn: 0,
            reason: isBuiltInVendor(vendorOf(plan.provider))
              ? `the ${loop.name} loop does not speak to ${plan.provider} (it speaks to ${loop.providers.join(', ')})`
              : `the library loops run on built-in providers only, not ${plan.provider}`,
          })
          continue
        }
        options.progress({ kind: 'started', index })
        const result = await runLibrarySession(plan, { runId: options.runId, server: loopback, loop })
        for (const _ of result.rows) options.progress({ kind: 'request', index })
        options.progress({ kind: 'finished', index })
        rows.push(...result.rows)
        run.inexpressible.push(
          ...result.inexpressible.map((entry) => ({ ...entry, sessionId, loop: loop.name })),
        )
        run.records.push({
          scenario: plan.scenario.name,
          variant: plan.variant.name,
          provider: plan.provider,
          loop: loop.name,
          versions: library.versions,
          caching: loop.caching(plan.provider),
          rows: result.rows,
          digests: result.digests,
          requests: result.requests,
          errors: result.errors,
        })
      }
      run.sessions.push({ index, sessionId, rows })
    }
  } finally {
    await loopback.close()
  }
  return run
}
