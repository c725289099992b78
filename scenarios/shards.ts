// A run split across machines (`run --shard i/n`, issue 47): which cells each shard runs, and the blob a
// shard leaves in its folder for `merge-reports` (scenarios/merge.ts) to put the whole run together from.
// Every machine plans the whole run and computes the same split, so no shard needs to hear of another.

import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import type { LoopInexpressible } from '../harness/loops/types.ts'
import type { AgentSessionRecord } from '../reports/agents.ts'
import type { BreakEvent } from '../reports/break-events.ts'
import type { LoopComparison } from '../reports/loops.ts'
import type { RunPlan } from '../reports/plan.ts'
import type { StepRow } from '../reports/types.ts'
import type { NotApplicable } from './requirements.ts'
import type { SessionPlan } from './run.ts'

/** One shard of a run: the `index`th (from 1) of `count`. */
export interface Shard {
  index: number
  count: number
}

/** Where a shard ran and under which shared run id, as the command found them. */
export interface ShardOptions extends Shard {
  /** The host and CI job it ran on (recorded in the blob, never in the merged run). */
  where: Readonly<Record<string, string>>
  /** The id every shard of a live or agents run shares (`CACHELAB_RUN_ID` or the CI's run); undefined: none found. */
  sharedId: string | undefined
}

/** `i/n` as the flag spells it. */
export function shardLabel(shard: Shard): string {
  return `${shard.index}/${shard.count}`
}

/** Parse `--shard i/n` (1 ≤ i ≤ n); anything else is a usage error. */
export function parseShard(value: string): Shard {
  const match = /^(\d+)\/(\d+)$/.exec(value.trim())
  const index = Number(match?.[1])
  const count = Number(match?.[2])
  if (match === null || !Number.isSafeInteger(count) || count < 1 || index < 1 || index > count)
    throw new CachelabError(
      'usage',
      `--shard ${JSON.stringify(value)}: must be i/n with 1 ≤ i ≤ n (1/3, 2/3, 3/3 split a run in three)`,
    )
  return { index, count }
}

/** A cell to place: what it costs, and the group it must share a shard with. */
export interface ShardCell {
  cost: number
  group: string
}

/**
 * The shard (from 1) of every cell. A group's cells stay together; groups go, heaviest first (ties in
 * run order), each to the shard with the least cost so far (ties to the lowest shard): the greedy
 * longest-processing-time rule, within 4/3 of the best split, and the same on every machine.
 */
export function assignShards(cells: readonly ShardCell[], count: number): number[] {
  const groups = new Map<string, { cost: number; first: number }>()
  for (const [index, cell] of cells.entries()) {
    const group = groups.get(cell.group)
    if (group === undefined) groups.set(cell.group, { cost: cell.cost, first: index })
    else group.cost += cell.cost
  }
  const loads = Array.from({ length: count }, () => 0)
  const shardOf = new Map<string, number>()
  const order = [...groups.entries()].sort(
    ([, left], [, right]) => right.cost - left.cost || left.first - right.first,
  )
  for (const [name, group] of order) {
    let lightest = 0
    for (let shard = 1; shard < count; shard += 1)
      if ((loads[shard] as number) < (loads[lightest] as number)) lightest = shard
    loads[lightest] = (loads[lightest] as number) + group.cost
    shardOf.set(name, lightest + 1)
  }
  return cells.map((cell) => shardOf.get(cell.group) as number)
}

/** The requests a session's script plans: a step is one request (a retried fault adds a few more). */
export function plannedRequests(plan: SessionPlan): number {
  const skipped = new Set(plan.variant.skip ?? [])
  let requests = 0
  for (const action of plan.variant.script ?? plan.scenario.script) {
    if (skipped.has(action.kind)) continue
    if (action.kind === 'turn')
      for (const step of action.steps) {
        requests += 1
        for (const arrival of step.arrivals ?? [])
          if (arrival.delivery === 'followup') requests += arrival.steps.length
      }
    else if (action.kind === 'fault') requests += 1
  }
  return Math.max(requests, 1)
}

/**
 * The run id every shard of a live or agents run shares, from the environment: `CACHELAB_RUN_ID`, else
 * the CI's own run (GitHub Actions' run and attempt, GitLab's pipeline). Undefined when none is set.
 */
export function sharedRunIdOf(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const given = env.CACHELAB_RUN_ID?.trim()
  if (given) return given
  if (env.GITHUB_RUN_ID) return `gh${env.GITHUB_RUN_ID}-${env.GITHUB_RUN_ATTEMPT ?? '1'}`
  if (env.CI_PIPELINE_ID) return `gl${env.CI_PIPELINE_ID}`
  return undefined
}

/** The usage error of a live or agents shard without a shared run id. */
export function noSharedRunId(what: string): CachelabError {
  return new CachelabError(
    'usage',
    `--shard with ${what} needs one run id for every shard: set CACHELAB_RUN_ID to the same value on each (GitHub Actions and GitLab CI give one themselves)`,
  )
}

/** The environment variables that say where a shard ran, when set. */
const WHERE_VARIABLES = [
  'GITHUB_REPOSITORY',
  'GITHUB_RUN_ID',
  'GITHUB_RUN_ATTEMPT',
  'GITHUB_JOB',
  'CI_JOB_ID',
  'CI_NODE_INDEX',
  'CI_NODE_TOTAL',
  'JOB_COMPLETION_INDEX',
] as const

/** The host and the CI job a shard ran on. */
export function whereOf(
  host: string,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const where: Record<string, string> = { host }
  for (const name of WHERE_VARIABLES) {
    const value = env[name]
    if (value !== undefined && value !== '') where[name] = value
  }
  return where
}

/** A hash of a value's JSON, a function counting by its source text (a claim's check, a user's scenario hook). */
export function digestOf(value: unknown, length = 16): string {
  const text = JSON.stringify(value, (_key, each: unknown) =>
    typeof each === 'function' ? String(each) : each,
  )
  return createHash('sha256')
    .update(text ?? '')
    .digest('hex')
    .slice(0, length)
}

/** The blob's file name, in the shard's folder. */
export const SHARD_FILE = 'shard.json'

/** The blob's `format` tag. */
export const SHARD_FORMAT = 'cachelab-shard'

/** The blob's version. */
export const SHARD_VERSION = 1

/** What makes shards parts of one run: every shard of it carries the same, its own `shard` and `where` aside. */
export interface ShardManifest {
  format: typeof SHARD_FORMAT
  version: number
  /** Which shard this is. */
  shard: Shard
  /** The cachelab that ran it. */
  cachelab: string
  /** The whole run's id (the same on every shard). */
  runId: string
  /** The model catalog, the scenarios and the options that decide the numbers, each hashed. */
  digests: { catalog: string; scenarios: string; options: string }
  /** Every cell of the whole run, in run order: the shards' union must be exactly these. */
  cells: string[]
  /** The host and CI job it ran on. */
  where: Record<string, string>
  /** The session logs the shard wrote beside the blob, relative to its folder (`sessions/…`). */
  files: string[]
}

/** A matrix cell's results: everything a run folder is written from, for one session. */
export interface MatrixShardSession {
  /** `<scenario>.<variant>.<provider>`. */
  cell: string
  /** Its rows, every loop's, in run order. */
  rows: StepRow[]
  breakEvents: BreakEvent[]
  inexpressible: LoopInexpressible[]
  /** The model and DSH loops compared, when both ran it. */
  comparison?: LoopComparison
}

/** A shard of `cachelab run`. */
export interface MatrixShard extends ShardManifest {
  kind: 'matrix'
  /** What the whole run is, the same on every shard. */
  run: {
    /** The scenarios whose claims the merged run evaluates (`--scenarios` files' among them by name). */
    scenarios: string[]
    plan: RunPlan
    notApplicable: NotApplicable[]
  }
  sessions: MatrixShardSession[]
}

/** A shard of `cachelab run --agent`. */
export interface AgentsShard extends ShardManifest {
  kind: 'agents'
  /** `<agent>.<scenario>` cells this shard ran, each with its session record. */
  sessions: Array<{ cell: string; record: AgentSessionRecord }>
}

export type ShardBlob = MatrixShard | AgentsShard

/** A blob as written: one JSON object (one-space indented: the manifest readable, the rows not doubled), the manifest first. */
export function shardText(blob: ShardBlob): string {
  return `${JSON.stringify(blob, null, 1)}\n`
}

/** Read a shard folder's blob; a folder without one, or a blob of another format, is an input error. */
export function readShard(dir: string): ShardBlob {
  const file = join(dir, SHARD_FILE)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT'
    throw new CachelabError(
      'input',
      missing
        ? `${dir} is not a shard (no ${SHARD_FILE}): give the folders cachelab run --shard i/n wrote`
        : `cannot read ${file}: ${(error as Error).message}`,
    )
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new CachelabError('input', `${file} is not JSON`)
  }
  const blob = value as Partial<ShardBlob>
  if (blob.format !== SHARD_FORMAT || blob.version !== SHARD_VERSION)
    throw new CachelabError('input', `${file}: not a cachelab shard of version ${SHARD_VERSION}`)
  if (
    (blob.kind !== 'matrix' && blob.kind !== 'agents') ||
    typeof blob.runId !== 'string' ||
    !Array.isArray(blob.cells) ||
    !Array.isArray(blob.sessions) ||
    !Array.isArray(blob.files) ||
    typeof blob.shard?.index !== 'number' ||
    typeof blob.shard.count !== 'number'
  )
    throw new CachelabError('input', `${file}: kind, runId, shard, cells, files and sessions must be set`)
  return blob as ShardBlob
}
