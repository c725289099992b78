// `merge-reports`: the shards of one run (scenarios/shards.ts) checked to cover its cells exactly once and
// written as the folder the run would have written on one machine: the same writers on the same rows in
// the same order, so a simulated run merged is byte for byte the run unsharded.

import { copyFileSync, existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import { cachelabVersion } from '../harness/version.ts'
import { catalogEntries } from '../providers/catalog.ts'
import type { AgentRow } from '../reports/agents.ts'
import { PLAN_FILE, planText } from '../reports/plan.ts'
import { RUN_FILES, RunFolder } from '../reports/run-folder.ts'
import type { ClaimResult, SummaryRow } from '../reports/types.ts'
import { writeAgentsRun } from './agents/run.ts'
import { writeInto } from './run-files.ts'
import {
  type AgentsShard,
  digestOf,
  type MatrixShard,
  readShard,
  type ShardBlob,
  shardLabel,
} from './shards.ts'
import type { Scenario } from './types.ts'

/** A shard as read: its folder and its blob. */
export interface ReadShard {
  dir: string
  blob: ShardBlob
}

/** What a merge wrote. */
export interface MergeResult {
  kind: ShardBlob['kind']
  runId: string
  outDir: string
  /** The shards merged, in order. */
  shards: number
  /** Rows of the whole run. */
  requests: number
  /** A matrix run's summaries and claims; an agents run's side by side. */
  summaries: SummaryRow[]
  claims: ClaimResult[]
  agents: AgentRow[]
}

/** Read each folder's blob. */
export function readShards(dirs: readonly string[]): ReadShard[] {
  if (dirs.length === 0) throw new CachelabError('usage', 'merge-reports needs the shards’ folders')
  return dirs.map((dir) => ({ dir, blob: readShard(dir) }))
}

/**
 * Refuse shards that are not exactly one run: another run's manifest, a shard given twice, a shard
 * missing, or cells that do not add up to the run's (each a one-line input error naming the folder).
 */
export function requireWholeRun(shards: readonly ReadShard[]): void {
  const [first, ...rest] = shards
  if (first === undefined) throw new CachelabError('usage', 'merge-reports needs the shards’ folders')
  const same = (blob: ShardBlob) =>
    [
      ['kind', blob.kind],
      ['cachelab version', blob.cachelab],
      ['run id', blob.runId],
      ['shard count', blob.shard.count],
      ['catalog digest', blob.digests.catalog],
      ['scenarios digest', blob.digests.scenarios],
      ['options digest', blob.digests.options],
      ['planned cells', digestOf(blob.cells)],
      ['run plan', blob.kind === 'matrix' ? digestOf(blob.run) : ''],
    ] as const
  const expected = same(first.blob)
  for (const shard of rest)
    for (const [index, [what, value]] of same(shard.blob).entries()) {
      const want = expected[index]?.[1]
      if (value !== want)
        throw new CachelabError(
          'input',
          `${shard.dir} is not a shard of the same run as ${first.dir}: its ${what} differs (${String(value)}, not ${String(want)})`,
        )
    }
  const count = first.blob.shard.count
  const byIndex = new Map<number, string>()
  for (const { dir, blob } of shards) {
    const seen = byIndex.get(blob.shard.index)
    if (seen !== undefined)
      throw new CachelabError('input', `shard ${shardLabel(blob.shard)} given twice: ${seen} and ${dir}`)
    byIndex.set(blob.shard.index, dir)
  }
  const missing = Array.from({ length: count }, (_, index) => index + 1).filter(
    (index) => !byIndex.has(index),
  )
  if (missing.length > 0)
    throw new CachelabError(
      'input',
      `shard${missing.length > 1 ? 's' : ''} ${missing.map((index) => `${index}/${count}`).join(', ')} of run ${first.blob.runId} missing: give every shard's folder`,
    )
  const planned = new Set(first.blob.cells)
  const covered = new Map<string, string>()
  for (const { dir, blob } of shards)
    for (const { cell } of blob.sessions) {
      if (!planned.has(cell))
        throw new CachelabError('input', `${dir} holds ${cell}, which run ${blob.runId} did not plan`)
      const seen = covered.get(cell)
      if (seen !== undefined) throw new CachelabError('input', `${cell} is in two shards: ${seen} and ${dir}`)
      covered.set(cell, dir)
    }
  const gap = first.blob.cells.filter((cell) => !covered.has(cell))
  if (gap.length > 0)
    throw new CachelabError(
      'input',
      `no shard holds ${gap.slice(0, 3).join(', ')}${gap.length > 3 ? ` (and ${gap.length - 3} more)` : ''}: a shard was cut short; run it again`,
    )
}

/**
 * Merge the shards into `out`: checked whole, then written as one run (the matrix's claims evaluated on
 * `known`, the scenarios the merge knows, which must be those the shards ran).
 */
export function mergeShards(
  shards: readonly ReadShard[],
  out: string,
  known: readonly Scenario[],
): MergeResult {
  requireWholeRun(shards)
  const first = (shards[0] as ReadShard).blob
  if (first.cachelab !== cachelabVersion())
    throw new CachelabError(
      'input',
      `the shards ran cachelab ${first.cachelab}, this is ${cachelabVersion()}: merge with the version that ran them`,
    )
  if (first.digests.catalog !== digestOf(catalogEntries()))
    throw new CachelabError(
      'input',
      'the model catalog differs from the one the shards ran with: give merge-reports the --catalog the run had',
    )
  const outDir = resolve(out)
  return first.kind === 'matrix'
    ? mergeMatrix(shards as ReadonlyArray<{ dir: string; blob: MatrixShard }>, outDir, known)
    : mergeAgents(shards as ReadonlyArray<{ dir: string; blob: AgentsShard }>, outDir)
}

function mergeMatrix(
  shards: ReadonlyArray<{ dir: string; blob: MatrixShard }>,
  outDir: string,
  known: readonly Scenario[],
): MergeResult {
  const first = (shards[0] as { blob: MatrixShard }).blob
  const scenarios = first.run.scenarios.map((name) => {
    const scenario = known.find((each) => each.name === name)
    if (scenario === undefined)
      throw new CachelabError(
        'usage',
        `the shards ran scenario ${name}, which merge-reports does not know: give it the --scenarios PATH the run had`,
      )
    return scenario
  })
  if (digestOf(scenarios) !== first.digests.scenarios)
    throw new CachelabError(
      'input',
      `the scenarios ${first.run.scenarios.join(', ')} differ from those the shards ran: merge with the same cachelab and --scenarios files`,
    )
  const byCell = new Map(
    shards.flatMap(({ blob }) => blob.sessions.map((session) => [session.cell, session])),
  )
  const sessions = first.cells.map((cell) => byCell.get(cell)).filter((session) => session !== undefined)
  // The session logs each shard wrote, by the name a single run gives them; one lost on the way (an
  // artifact upload that left it out) is an error, not a run with a log fewer.
  const logs = shards.flatMap(({ dir, blob }) => blob.files.map((name) => ({ dir, name })))
  for (const log of logs)
    if (!existsSync(join(log.dir, log.name)))
      throw new CachelabError(
        'input',
        `${log.dir} lacks ${log.name}, which its shard wrote: copy the shard's whole folder (with its hidden files)`,
      )
  const folder = RunFolder.replace(outDir, {
    writer: 'run',
    files: [...RUN_FILES, PLAN_FILE, ...logs.map((log) => log.name), 'loops.csv'],
  })
  try {
    for (const log of logs) copyFileSync(join(log.dir, log.name), folder.path(log.name))
    folder.write(PLAN_FILE, planText(first.run.plan))
    const rows = sessions.flatMap((session) => session.rows)
    const { summaries, claims } = writeInto(folder, {
      runId: first.runId,
      rows,
      scenarios,
      notApplicable: first.run.notApplicable,
      comparisons: sessions.flatMap((session) =>
        session.comparison === undefined ? [] : [session.comparison],
      ),
      inexpressible: sessions.flatMap((session) => session.inexpressible),
      breakEvents: sessions.flatMap((session) => session.breakEvents),
    })
    folder.complete()
    return {
      kind: 'matrix',
      runId: first.runId,
      outDir,
      shards: shards.length,
      requests: rows.length,
      summaries,
      claims,
      agents: [],
    }
  } catch (error) {
    folder.abandon()
    throw error
  }
}

function mergeAgents(shards: ReadonlyArray<{ dir: string; blob: AgentsShard }>, outDir: string): MergeResult {
  const first = (shards[0] as { blob: AgentsShard }).blob
  const byCell = new Map(
    shards.flatMap(({ blob }) => blob.sessions.map((session) => [session.cell, session.record])),
  )
  const records = first.cells.map((cell) => byCell.get(cell)).filter((record) => record !== undefined)
  const written = writeAgentsRun(outDir, first.runId, records)
  return {
    kind: 'agents',
    runId: first.runId,
    outDir,
    shards: shards.length,
    requests: written.rows.length,
    summaries: [],
    claims: [],
    agents: written.agents,
  }
}
