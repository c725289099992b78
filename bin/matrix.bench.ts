// Benchmark (g): the whole scenario matrix on the simulator, as `cachelab run` runs it (default jobs:
// the machine's cores) and in process (`jobs` 1): wall and CPU time of each, and whether both wrote the
// same bytes. Its goals: the default run's wall time over its CPU time (both cores busy), and the
// in-process run's CPU per request over a bare SDK→MSW round trip's, sent the same bodies (a sample of
// one request in `SAMPLE_EVERY`, taken in request order) after the run.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LlmCall, RequestRecord } from '../harness/ports.ts'
import type { ProviderId } from '../harness/types.ts'
import { type BareRequest, BareRoundTrip } from '../scenarios/bare-round-trip.ts'
import { run } from '../scenarios/matrix.ts'
import type { SessionPlan } from '../scenarios/run.ts'

/** One request in this many of the in-process run is sent again through the bare round trip. */
const SAMPLE_EVERY = 4

/** One run of the matrix, timed. */
export interface MatrixRunFigures {
  /** Threads the sessions ran on. */
  jobs: number
  /** Requests sent (failed attempts included). */
  requests: number
  wallMs: number
  /** CPU time of the whole process, every thread. */
  cpuMs: number
}

export interface MatrixFigures {
  /** The run with the default number of jobs. */
  parallel: MatrixRunFigures
  /** The same run in process. */
  serial: MatrixRunFigures
  /** The default run's wall time over its CPU time. */
  wallToCpu: number
  /** The in-process run's CPU milliseconds per request. */
  cpuPerRequestMs: number
  /** CPU milliseconds of a bare SDK→MSW round trip of the same bodies, per request (mean of the sample). */
  bareCpuPerRequestMs: number
  /** Requests the bare round trip was sent. */
  bareSample: number
  /** Whether both runs wrote the same files, byte for byte. */
  identical: boolean
}

/** Every file under `dir`: relative path → content. */
function filesOf(dir: string): Map<string, string> {
  const files = new Map<string, string>()
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    files.set(path.slice(dir.length + 1), readFileSync(path, 'utf8'))
  }
  return files
}

async function timedRun(
  out: string,
  jobs: number | undefined,
  onRequest?: (record: RequestRecord, plan: SessionPlan) => void,
): Promise<MatrixRunFigures> {
  let threads = 1
  const cpu = process.cpuUsage()
  const started = performance.now()
  const result = await run({
    out,
    ...(jobs !== undefined ? { jobs } : {}),
    ...(onRequest !== undefined ? { onRequest } : {}),
    onProgress: (progress) => {
      threads = progress.jobs
    },
  })
  const wallMs = performance.now() - started
  const used = process.cpuUsage(cpu)
  return { jobs: threads, requests: result.rows.length, wallMs, cpuMs: (used.user + used.system) / 1000 }
}

/** Run the matrix with the default jobs, then in process, and compare what they wrote. */
export async function benchMatrix(): Promise<MatrixFigures> {
  const parallelDir = mkdtempSync(join(tmpdir(), 'cachelab-matrix-jobs-'))
  const serialDir = mkdtempSync(join(tmpdir(), 'cachelab-matrix-serial-'))
  try {
    const parallel = await timedRun(parallelDir, undefined)
    const sample = new RequestSample()
    const serial = await timedRun(serialDir, 1, (record, plan) => sample.add(record, plan.provider))
    const written = filesOf(parallelDir)
    const expected = filesOf(serialDir)
    const identical =
      written.size === expected.size && [...expected].every(([name, text]) => written.get(name) === text)
    return {
      parallel,
      serial,
      wallToCpu: parallel.wallMs / parallel.cpuMs,
      cpuPerRequestMs: serial.cpuMs / serial.requests,
      bareCpuPerRequestMs: await sample.bareCpuPerRequestMs(),
      bareSample: sample.requests.length,
      identical,
    }
  } finally {
    rmSync(parallelDir, { recursive: true, force: true })
    rmSync(serialDir, { recursive: true, force: true })
  }
}

/**
 * Every `SAMPLE_EVERY`th request of a run, with each provider's first answered call (its bare reply is
 * recorded from it).
 */
class RequestSample {
  readonly requests: Array<{ provider: ProviderId; request: BareRequest }> = []
  private readonly firstCalls = new Map<ProviderId, LlmCall>()
  private seen = 0

  add(record: RequestRecord, provider: ProviderId): void {
    if (record.outcome.ok && !this.firstCalls.has(provider)) this.firstCalls.set(provider, record.call)
    const wire = record.outcome.wire
    if (this.seen++ % SAMPLE_EVERY !== 0 || wire === undefined) return
    this.requests.push({ provider, request: { body: wire.body, sources: wire.sources } })
  }

  /** CPU milliseconds per request of sending the sample through the bare round trip: the better of two passes. */
  async bareCpuPerRequestMs(): Promise<number> {
    const bare = BareRoundTrip.start()
    try {
      for (const [provider, call] of this.firstCalls) await bare.prime(provider, call)
      let best = Number.POSITIVE_INFINITY
      for (let pass = 0; pass < 2; pass += 1) {
        const cpu = process.cpuUsage()
        for (const { provider, request } of this.requests) await bare.send(provider, request)
        const used = process.cpuUsage(cpu)
        best = Math.min(best, (used.user + used.system) / 1000 / this.requests.length)
      }
      return best
    } finally {
      bare.close()
    }
  }
}
