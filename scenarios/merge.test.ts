import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { requireCompleteRun } from '../reports/run-folder.ts'
import { SCENARIOS } from './index.ts'
import { run } from './matrix.ts'
import { mergeShards, readShards } from './merge.ts'
import { readShard, type ShardOptions } from './shards.ts'

/** Every file below `dir` (hidden ones too), by its path relative to `dir`, with its bytes. */
function filesOf(dir: string): Map<string, string> {
  const files = new Map<string, string>()
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name)
      files.set(relative(dir, path), readFileSync(path, 'latin1'))
    }
  return files
}

const scenarios = ['append-only', 'prompt-change']
const shard = (index: number, count: number): ShardOptions => ({
  index,
  count,
  where: { host: `machine-${index}` },
  sharedId: undefined,
})

describe('a run in three shards, merged', () => {
  const root = mkdtempSync(join(tmpdir(), 'cachelab-shards-'))
  const single = join(root, 'single')
  const shards = [1, 2, 3].map((index) => join(root, `shard-${index}`))
  const merged = join(root, 'merged')

  beforeAll(async () => {
    await run({ scenarios, out: single, jobs: 1 })
    // One after the other: a thread's runs share its in-process mock providers (the workflow test runs
    // shards as concurrent processes).
    for (const [index, out] of shards.entries())
      await run({ scenarios, out, jobs: 1, shard: shard(index + 1, 3) })
    mergeShards(readShards(shards), merged, SCENARIOS)
  })

  it('splits the cells between the shards, each once, with the whole run id on every shard', () => {
    const blobs = shards.map(readShard)
    const cells = blobs.flatMap((blob) => blob.sessions.map((session) => session.cell))
    expect(new Set(cells).size).toBe(cells.length)
    expect([...cells].sort()).toEqual([...(blobs[0]?.cells ?? [])].sort())
    expect(blobs.every((blob) => blob.sessions.length > 0)).toBe(true)
    expect(new Set(blobs.map((blob) => blob.runId)).size).toBe(1)
    expect(blobs.map((blob) => blob.where.host)).toEqual(['machine-1', 'machine-2', 'machine-3'])
  })

  it('writes byte for byte the folder the unsharded run writes', () => {
    const want = filesOf(single)
    const got = filesOf(merged)
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort())
    expect(want.has('plan.json') && want.has('report.html')).toBe(true)
    for (const [name, bytes] of want) expect(got.get(name), name).toBe(bytes)
  })

  it('is a run check reads, where a shard alone is refused as one', () => {
    expect(() => requireCompleteRun(merged, 'run')).not.toThrow()
    expect(() => requireCompleteRun(shards[0] as string, 'run')).toThrow(
      /is shard 1\/3 of a run, not a run: merge the shards first/,
    )
  })

  it('refuses a missing shard, a shard given twice and a shard of another run', async () => {
    const [first, second, third] = shards as [string, string, string]
    const out = join(root, 'refused')
    expect(() => mergeShards(readShards([first, third]), out, SCENARIOS)).toThrow(
      /^shard 2\/3 of run sim-[0-9a-f]{8} missing: give every shard's folder$/,
    )
    const copy = join(root, 'copy-of-1')
    cpSync(first, copy, { recursive: true })
    expect(() => mergeShards(readShards([first, second, third, copy]), out, SCENARIOS)).toThrow(
      /^shard 1\/3 given twice: .*shard-1 and .*copy-of-1$/,
    )
    const other = join(root, 'halves-1')
    await run({ scenarios, out: other, jobs: 1, shard: shard(1, 2) })
    expect(() => mergeShards(readShards([other, second, third]), out, SCENARIOS)).toThrow(
      /shard-2 is not a shard of the same run as .*halves-1: its shard count differs \(3, not 2\)/,
    )
  })

  it('refuses a shard folder that lost a session log on the way', () => {
    const [first, second, third] = shards as [string, string, string]
    const copy = join(root, 'lost-log')
    cpSync(first, copy, { recursive: true })
    const [lost] = readShard(copy).files
    rmSync(join(copy, lost as string))
    expect(() => mergeShards(readShards([copy, second, third]), join(root, 'refused'), SCENARIOS)).toThrow(
      /lost-log lacks sessions\/.*\.jsonl, which its shard wrote/,
    )
  })
})

describe('run with a shard', () => {
  it('refuses the client-library loops, which pick their sessions across the whole matrix', async () => {
    await expect(run({ scenarios: ['append-only'], loops: ['sdk'], shard: shard(1, 2) })).rejects.toThrow(
      /^--shard cannot split --loop sdk: .*run them unsharded$/,
    )
  })

  it('refuses a live shard without a run id every shard shares', async () => {
    await expect(
      run({ scenarios: ['append-only'], live: true, env: {}, shard: shard(1, 2) }),
    ).rejects.toThrow(/^--shard with --live needs one run id for every shard: set CACHELAB_RUN_ID/)
  })
})
