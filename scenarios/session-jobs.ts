// A simulated run's model-loop sessions spread over worker threads: each worker has its own mock
// providers and runs one session at a time, the parent hands out sessions longest first and gives the
// results back in plan order, so the run's output is the same bytes as a serial run's
// (notes/2026-11-30-run-jobs.md).

import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { CachelabError, type CachelabErrorKind, unreachable } from '../harness/errors.ts'
import type { ProviderId, SessionEvent } from '../harness/types.ts'
import type { RequestDigest } from '../providers/wire/digest.ts'
import { type BreakEvent, breakEventsOf } from '../reports/break-events.ts'
import type { StepRow } from '../reports/types.ts'
import type { SessionPlan } from './run.ts'
import type { Scenario } from './types.ts'

/** A model-loop session as the run needs it back. */
export interface FinishedSession {
  /** The session's rows, in the order its requests were sent. */
  rows: StepRow[]
  /** The log's `assistant/attempt` events: all the failure check reads (the whole log is in its file). */
  attempts: SessionEvent[]
  /** The events its breaks name, described for report.html (the log itself stays in its file). */
  breakEvents: BreakEvent[]
  /** Per row, the digest of its request, when digests were asked for. */
  digests: Array<RequestDigest | undefined> | undefined
}

/** What happens to a session while a run goes on, for progress output. */
export type SessionJobEvent =
  /** The session began (in a worker or in process). */
  | { kind: 'started'; index: number }
  /** One of its requests (an attempt) finished. */
  | { kind: 'request'; index: number }
  /** It finished. */
  | { kind: 'finished'; index: number }

/** What every worker of a run is set up with. */
export interface WorkerSetup {
  /** The scenarios of the run's plans, without their claims (functions, evaluated in the parent). */
  scenarios: Scenario[]
  runId: string
  stream: boolean
  /** Where each session's log goes (the run folder's planned paths); none written when absent. */
  sessionsDir: string | undefined
  digests: boolean
}

/** One session, sent to a worker by reference into `WorkerSetup.scenarios`. */
export interface SessionJob {
  kind: 'session'
  /** The plan's position in the run. */
  index: number
  scenario: number
  variant: number
  provider: ProviderId
  model: string | undefined
}

/** What the parent sends a worker. */
export type ToWorker = SessionJob

/** An error thrown in a worker, as data. */
export interface WorkerError {
  message: string
  /** Set when it was a `CachelabError`: the parent throws one of the same kind. */
  cachelabKind: CachelabErrorKind | undefined
  stack: string | undefined
}

/** What a worker sends the parent. */
export type FromWorker =
  | { kind: 'request'; index: number }
  | { kind: 'finished'; index: number; session: FinishedSession }
  | { kind: 'failed'; index: number; error: WorkerError }

/** `--jobs` (or `jobs`): a whole number from 1 up, else a usage error quoting what was given. */
export function requireJobs(jobs: number, given: string = String(jobs)): number {
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > MAX_JOBS)
    throw new CachelabError(
      'usage',
      `--jobs takes a whole number of worker threads from 1 to ${MAX_JOBS}, got ${JSON.stringify(given)}`,
    )
  return jobs
}

/** The most worker threads `--jobs` asks for: more is a typo (each thread loads the simulators, ~1 s of CPU). */
export const MAX_JOBS = 256

/**
 * Scripted requests a default run needs per worker: a worker spends about a second of CPU loading its
 * modules, and a request costs some milliseconds, so a small run is faster in process.
 */
export const REQUESTS_PER_WORKER = 250

/**
 * The threads a simulated run's sessions go to: the number asked for (at most one per session), else the
 * machine's cores (`os.availableParallelism()`), fewer when the run is too small to pay for them or when
 * more could not finish sooner: no run ends before its longest session, so beyond the total work over the
 * longest session's a worker only adds start-up time and memory.
 */
export function jobsFor(
  plans: readonly SessionPlan[],
  requested: number | undefined,
  cores: number = availableParallelism(),
): number {
  if (requested !== undefined) return Math.min(requireJobs(requested), Math.max(1, plans.length))
  const costs = plans.map(scriptedRequests)
  const work = costs.reduce((sum, cost) => sum + cost, 0)
  const affordable = Math.floor(work / REQUESTS_PER_WORKER)
  const useful = Math.ceil(work / Math.max(1, ...costs))
  return Math.max(1, Math.min(cores, plans.length, affordable, useful))
}

/**
 * How many requests a plan's script sends, at least: the cost by which sessions are handed out, longest
 * first, so a 1,440-request session does not start last and leave the other workers idle.
 */
export function scriptedRequests(plan: SessionPlan): number {
  const skipped = plan.variant.skip ?? []
  let requests = 0
  for (const action of plan.variant.script ?? plan.scenario.script) {
    if (skipped.includes(action.kind)) continue
    if (action.kind === 'turn') requests += action.steps.length
    else if (action.kind === 'compact') requests += 1
  }
  return requests
}

/** Plan indices in the order workers take them: most requests first, plan order among equals. */
export function dispatchOrder(plans: readonly SessionPlan[]): number[] {
  const costs = plans.map(scriptedRequests)
  return plans.map((_, index) => index).sort((a, b) => (costs[b] ?? 0) - (costs[a] ?? 0) || a - b)
}

/** A scenario as a worker receives it: data only (its claims are functions and stay in the parent). */
function transferable(scenario: Scenario): Scenario {
  return { ...scenario, claims: [] }
}

/**
 * Whether the plans' scenarios can be sent to a worker: a scenario object of a library user may carry
 * something structured clone refuses (a function), and then the run stays in process.
 */
export function canTransfer(plans: readonly SessionPlan[]): boolean {
  try {
    structuredClone([...new Set(plans.map((plan) => plan.scenario))].map(transferable))
    return true
  } catch {
    return false
  }
}

/** The worker's module beside this one: TypeScript in the repository, JavaScript in the built package. */
function workerEntry(): { url: URL; typescript: boolean } {
  const typescript = import.meta.url.endsWith('.ts')
  return { url: new URL(`./session-worker.${typescript ? 'ts' : 'js'}`, import.meta.url), typescript }
}

/** A promise with its settlers, marked handled so a failure nobody awaits yet does not end the process. */
interface Pending {
  promise: Promise<FinishedSession>
  resolve(session: FinishedSession): void
  reject(error: Error): void
  settled: boolean
}

function pending(): Pending {
  let resolve: (session: FinishedSession) => void = () => undefined
  let reject: (error: Error) => void = () => undefined
  const promise = new Promise<FinishedSession>((onResolve, onReject) => {
    resolve = onResolve
    reject = onReject
  })
  promise.catch(() => undefined)
  const entry: Pending = {
    promise,
    resolve: (session) => {
      entry.settled = true
      resolve(session)
    },
    reject: (error) => {
      entry.settled = true
      reject(error)
    },
    settled: false,
  }
  return entry
}

/** The error a worker reported, as the parent throws it. */
function errorOf(error: WorkerError): Error {
  const thrown =
    error.cachelabKind === undefined
      ? new Error(error.message)
      : new CachelabError(error.cachelabKind, error.message)
  if (error.stack !== undefined) thrown.stack = error.stack
  return thrown
}

/** Worker threads running a simulated run's model-loop sessions. */
export class SessionPool {
  readonly #plans: readonly SessionPlan[]
  readonly #results: Pending[]
  readonly #queue: number[]
  readonly #workers: Worker[] = []
  readonly #scenarioIndex: Map<Scenario, number>
  readonly #onEvent: (event: SessionJobEvent) => void

  private constructor(
    plans: readonly SessionPlan[],
    setup: Omit<WorkerSetup, 'scenarios'>,
    jobs: number,
    onEvent: (event: SessionJobEvent) => void,
  ) {
    this.#plans = plans
    this.#results = plans.map(() => pending())
    this.#queue = dispatchOrder(plans)
    this.#onEvent = onEvent
    const scenarios = [...new Set(plans.map((plan) => plan.scenario))]
    this.#scenarioIndex = new Map(scenarios.map((scenario, index) => [scenario, index]))
    const workerData: WorkerSetup = { ...setup, scenarios: scenarios.map(transferable) }
    const entry = workerEntry()
    for (let count = 0; count < Math.min(jobs, plans.length); count += 1) {
      // In the repository the worker is TypeScript: a small JavaScript module registers tsx first.
      const worker = entry.typescript
        ? new Worker(new URL('./tsx-worker.mjs', import.meta.url), {
            workerData,
            argv: [entry.url.href],
          })
        : new Worker(entry.url, { workerData })
      worker.on('message', (message: FromWorker) => this.#receive(worker, message))
      worker.on('error', (error) => this.#fail(error))
      worker.on('exit', (code) => {
        if (this.#results.some((result) => !result.settled))
          this.#fail(new Error(`a session worker stopped (exit code ${code}) before the run finished`))
      })
      this.#workers.push(worker)
      this.#next(worker)
    }
  }

  /** Start `jobs` workers (at most one per plan) and hand them the plans, longest first. */
  static start(
    plans: readonly SessionPlan[],
    setup: Omit<WorkerSetup, 'scenarios'>,
    jobs: number,
    onEvent: (event: SessionJobEvent) => void = () => undefined,
  ): SessionPool {
    return new SessionPool(plans, setup, jobs, onEvent)
  }

  /** The session of plan `index`; a session that threw rejects with its error. */
  result(index: number): Promise<FinishedSession> {
    const result = this.#results[index]
    if (result === undefined) throw new CachelabError('invariant', `no session ${index} in this run`)
    return result.promise
  }

  /** Stop every worker (they hold no files open between sessions). */
  async close(): Promise<void> {
    await Promise.all(this.#workers.map((worker) => worker.terminate()))
  }

  #next(worker: Worker): void {
    const index = this.#queue.shift()
    if (index === undefined) return
    const plan = this.#plans[index] as SessionPlan
    const job: SessionJob = {
      kind: 'session',
      index,
      scenario: this.#scenarioIndex.get(plan.scenario) ?? -1,
      variant: plan.scenario.variants.indexOf(plan.variant),
      provider: plan.provider,
      model: plan.model,
    }
    worker.postMessage(job satisfies ToWorker)
    this.#onEvent({ kind: 'started', index })
  }

  #receive(worker: Worker, message: FromWorker): void {
    switch (message.kind) {
      case 'request':
        this.#onEvent({ kind: 'request', index: message.index })
        return
      case 'finished':
        this.#results[message.index]?.resolve(message.session)
        this.#onEvent({ kind: 'finished', index: message.index })
        this.#next(worker)
        return
      case 'failed': {
        // A serial run stops at its first failure: sessions after this one are moot (rejected unrun),
        // earlier ones still run, since one of them may fail first.
        const error = errorOf(message.error)
        this.#results[message.index]?.reject(error)
        const moot = this.#queue.filter((index) => index > message.index)
        this.#queue.splice(0, this.#queue.length, ...this.#queue.filter((index) => index < message.index))
        for (const index of moot) this.#results[index]?.reject(error)
        this.#next(worker)
        return
      }
      default:
        unreachable(message)
    }
  }

  #fail(error: Error): void {
    this.#queue.length = 0
    for (const result of this.#results) if (!result.settled) result.reject(error)
  }
}

/** The break events of a finished session's rows, read from its log (in the worker or in process). */
export function sessionBreakEvents(rows: readonly StepRow[], events: readonly SessionEvent[]): BreakEvent[] {
  const [first] = rows
  return first === undefined ? [] : breakEventsOf(first, rows, events)
}
