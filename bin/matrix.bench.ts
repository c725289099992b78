// Benchmark (d): the whole scenario matrix on the simulator, as `cachelab run` runs it (default jobs:
// the machine's cores) and in process (`jobs` 1): wall and CPU time of each, and whether both wrote the
// same bytes. The acceptance ratio is the default run's wall time over its CPU time (at most 0.7 on two
// cores: the cores are both busy).

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run } from '../scenarios/matrix.ts'

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

async function timedRun(out: string, jobs: number | undefined): Promise<MatrixRunFigures> {
  let threads = 1
  const cpu = process.cpuUsage()
  const started = performance.now()
  const result = await run({
    out,
    ...(jobs !== undefined ? { jobs } : {}),
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
    const serial = await timedRun(serialDir, 1)
    const written = filesOf(parallelDir)
    const expected = filesOf(serialDir)
    const identical =
      written.size === expected.size && [...expected].every(([name, text]) => written.get(name) === text)
    return { parallel, serial, wallToCpu: parallel.wallMs / parallel.cpuMs, identical }
  } finally {
    rmSync(parallelDir, { recursive: true, force: true })
    rmSync(serialDir, { recursive: true, force: true })
  }
}
