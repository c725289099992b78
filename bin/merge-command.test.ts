import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { RunFolder } from '../reports/run-folder.ts'
import { runCli, withEnv } from './testing.ts'

/** What a failed command must print: one line on stderr, nothing on stdout. */
function oneLine(result: { code: number; stdout: string; stderr: string }): string {
  expect(result.code).toBe(2)
  expect(result.stdout).toBe('')
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
  return result.stderr.trim()
}

describe('run --shard', () => {
  it.each(['0/3', '4/3', '1/0', 'x/y', '-1/2'])(
    'refuses --shard %s with one usage line, exit 2',
    async (value) => {
      const line = oneLine(await runCli(['run', '--scenario', 'append-only', `--shard=${value}`]))
      expect(line).toBe(
        `cachelab: --shard ${JSON.stringify(value)}: must be i/n with 1 ≤ i ≤ n (1/3, 2/3, 3/3 split a run in three)`,
      )
    },
  )

  it('refuses an agents shard without a run id every shard shares, before any agent is installed', async () => {
    const result = await withEnv(
      { CACHELAB_RUN_ID: undefined, GITHUB_RUN_ID: undefined, CI_PIPELINE_ID: undefined },
      () => runCli(['run', '--agent', 'codex', '--scenario', 'memory-edit', '--shard', '1/2']),
    )
    expect(oneLine(result)).toMatch(/^cachelab: --shard with --agent needs one run id for every shard/)
  })
})

describe('merge-reports', () => {
  it('needs the shards and names a folder that is not one', async () => {
    expect(oneLine(await runCli(['merge-reports']))).toBe(
      'cachelab: merge-reports needs the shards’ folders; usage: cachelab merge-reports [options] SHARD_DIR... (cachelab merge-reports --help: what it does and its flags)',
    )
    const empty = mkdtempSync(join(tmpdir(), 'cachelab-not-a-shard-'))
    expect(oneLine(await runCli(['merge-reports', empty]))).toBe(
      `cachelab: ${empty} is not a shard (no shard.json): give the folders cachelab run --shard i/n wrote`,
    )
  })
})

describe('check on a shard', () => {
  it('refuses it in one line, asking for the merge', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-shard-'))
    const folder = RunFolder.replace(dir, { writer: 'run --shard 2/3', files: ['shard.json'] })
    folder.write('shard.json', '{}\n')
    folder.complete()
    const line = oneLine(await runCli(['check', '--baseline', 'reports/baselines', '--out', dir]))
    expect(line).toBe(
      `cachelab: run directory ${dir} is shard 2/3 of a run, not a run: merge the shards first (cachelab merge-reports SHARD_DIR… --out DIR) and check that`,
    )
  })
})
