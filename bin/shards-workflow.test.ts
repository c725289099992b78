// The project's sharded workflow (.github/workflows/cachelab-shards.yml) run here as GitHub would run it:
// each shard job a process in a workspace of its own, its uploaded artifact a folder, then the merge job
// downloading them into its workspace, merging and gating. No YAML parser is installed (notes/
// 2026-12-08-shards.md): `readYaml` reads the block subset the workflow is written in.

import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const REPO = resolve(import.meta.dirname, '..')
const WORKFLOW = join(REPO, '.github', 'workflows', 'cachelab-shards.yml')

type Yaml = string | Yaml[] | { [key: string]: Yaml }

/**
 * YAML's block mappings and sequences, flow sequences of scalars and quoted or plain scalars, comments on
 * lines of their own: what the workflow uses. Anything else it does not pretend to read.
 */
function readYaml(text: string): Yaml {
  const lines = text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'))
    .map((line) => ({ indent: line.length - line.trimStart().length, text: line.trim() }))
  let at = 0
  const scalar = (value: string): Yaml => {
    if (value.startsWith('[') && value.endsWith(']'))
      return value
        .slice(1, -1)
        .split(',')
        .map((part) => scalar(part.trim()))
    if (/^(['"]).*\1$/.test(value)) return value.slice(1, -1)
    return value
  }
  const block = (indent: number): Yaml => {
    if (lines[at]?.text.startsWith('- ')) {
      const items: Yaml[] = []
      while (lines[at]?.indent === indent && lines[at]?.text.startsWith('- ')) {
        const line = lines[at] as { indent: number; text: string }
        const rest = line.text.slice(2)
        if (/^[\w-]+:( |$)/.test(rest)) {
          // A mapping item: its first key sits on the dash's line, two columns in.
          lines[at] = { indent: indent + 2, text: rest }
          items.push(block(indent + 2))
        } else {
          at += 1
          items.push(scalar(rest))
        }
      }
      return items
    }
    const mapping: Record<string, Yaml> = {}
    while (lines[at]?.indent === indent && !lines[at]?.text.startsWith('- ')) {
      const line = lines[at] as { text: string }
      const match = /^([\w-]+):(?: (.*))?$/.exec(line.text)
      if (match === null) throw new Error(`the workflow reader does not read ${JSON.stringify(line.text)}`)
      at += 1
      const [, key, value] = match as unknown as [string, string, string | undefined]
      const next = lines[at]
      mapping[key] =
        value !== undefined && value !== ''
          ? scalar(value)
          : next !== undefined && next.indent > indent
            ? block(next.indent)
            : next !== undefined && next.indent === indent && next.text.startsWith('- ')
              ? block(indent)
              : ''
    }
    return mapping
  }
  return block(0)
}

/** A step of a job: what it runs, or the action it uses with its inputs. */
interface Step {
  run?: string
  uses?: string
  with?: Record<string, string>
}

const field = (value: Yaml | undefined, key: string): Yaml | undefined =>
  value !== undefined && typeof value === 'object' && !Array.isArray(value) ? value[key] : undefined

/** GitHub's `${{ matrix.shard }}` put in. */
const expand = (text: string, shard: string | undefined) =>
  text.replace(/\$\{\{\s*matrix\.shard\s*\}\}/g, shard ?? '')

/**
 * Run a job's steps in `workspace` (a fresh checkout: the baselines it reads): its `run:` lines through
 * bash with `npx cachelab` as this repository's cachelab (npm ci is the checkout's own node_modules), the
 * artifact actions as copies into and out of `artifacts`. Returns each cachelab step's outcome.
 */
async function runJob(
  steps: readonly Step[],
  options: { workspace: string; artifacts: string; env: NodeJS.ProcessEnv; shard?: string },
): Promise<Array<{ line: string; code: number; stdout: string; stderr: string }>> {
  const { workspace, artifacts, env, shard } = options
  mkdirSync(join(workspace, 'reports'), { recursive: true })
  cpSync(join(REPO, 'reports', 'baselines'), join(workspace, 'reports', 'baselines'), { recursive: true })
  const outcomes: Array<{ line: string; code: number; stdout: string; stderr: string }> = []
  for (const step of steps) {
    if (step.run !== undefined) {
      if (step.run === 'npm ci') continue
      const line = expand(step.run, shard).replace(
        /^npx cachelab /,
        `node ${join(REPO, 'bin', 'cachelab.js')} `,
      )
      const outcome = await run('bash', ['-c', line], {
        cwd: workspace,
        env,
        maxBuffer: 64 * 1024 * 1024,
      }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code?: number; stdout?: string; stderr?: string }) => ({
          code: error.code ?? -1,
          stdout: error.stdout ?? '',
          stderr: error.stderr ?? '',
        }),
      )
      outcomes.push({ line, ...outcome })
      if (outcome.code !== 0) break
    } else if (step.uses?.startsWith('actions/upload-artifact@') && step.with?.name !== undefined) {
      const name = expand(step.with.name, shard)
      cpSync(join(workspace, expand(step.with.path ?? '', shard)), join(artifacts, name), { recursive: true })
    } else if (step.uses?.startsWith('actions/download-artifact@')) {
      const pattern = new RegExp(
        `^${(step.with?.pattern ?? '*').replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`,
      )
      // Without merge-multiple, each artifact lands in a folder of its name under `path`.
      for (const name of readdirSync(artifacts).filter((each) => pattern.test(each)))
        cpSync(join(artifacts, name), join(workspace, step.with?.path ?? '.', name), { recursive: true })
    }
  }
  return outcomes
}

describe('the sharded GitHub workflow, run locally', () => {
  it('runs three shards as separate processes, merges their artifacts and gates the merged run', async () => {
    const workflow = readYaml(readFileSync(WORKFLOW, 'utf8'))
    const jobs = field(workflow, 'jobs')
    const shardJob = field(jobs, 'shard')
    const mergeJob = field(jobs, 'merge')
    const shards = field(field(field(shardJob, 'strategy'), 'matrix'), 'shard') as string[]
    expect(shards).toEqual(['1', '2', '3'])
    expect(field(mergeJob, 'needs')).toBe('shard')
    const root = mkdtempSync(join(tmpdir(), 'cachelab-workflow-'))
    const artifacts = join(root, 'artifacts')
    mkdirSync(artifacts)
    // The workflow's own SCENARIO, narrowed to two scenarios to keep the test short.
    expect(field(field(workflow, 'env'), 'SCENARIO')).toBe('all')
    const env: NodeJS.ProcessEnv = { ...process.env, SCENARIO: 'append-only,prompt-change', CI: 'true' }
    delete env.GITHUB_ACTIONS
    delete env.CACHELAB_RUN_ID
    const shardRuns = await Promise.all(
      shards.map((shard) =>
        runJob(field(shardJob, 'steps') as Step[], {
          workspace: join(root, `shard-${shard}`),
          artifacts,
          env,
          shard,
        }),
      ),
    )
    for (const outcomes of shardRuns) {
      expect(outcomes.map((outcome) => outcome.code)).toEqual([0])
      expect(outcomes[0]?.stdout).toMatch(/^shard [123]\/3 of run sim-[0-9a-f]{8}: /m)
    }
    expect(readdirSync(artifacts).sort()).toEqual([
      'cachelab-shard-1',
      'cachelab-shard-2',
      'cachelab-shard-3',
    ])
    const workspace = join(root, 'merge')
    const merged = await runJob(field(mergeJob, 'steps') as Step[], { workspace, artifacts, env })
    const [merge, check] = merged
    expect(merge?.code, merge?.stderr).toBe(0)
    expect(merge?.stdout).toMatch(/3 shards merged/)
    expect(check?.line).toContain('check --baseline reports/baselines --out reports/out/ci')
    expect(check?.code, `${check?.stdout}${check?.stderr}`).toBe(0)
    expect(check?.stdout).toMatch(/^OK: \d+ of \d+ baseline sessions hold/m)
    const junit = readFileSync(join(workspace, 'reports', 'out', 'junit.xml'), 'utf8')
    expect(junit).toContain('classname="cachelab.prompt-change"')
    expect(junit).not.toContain('<failure')
    expect(existsSync(join(workspace, 'reports', 'out', 'ci', 'report.html'))).toBe(true)
  })
})
