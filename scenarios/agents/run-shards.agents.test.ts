// `cachelab run --agent claude-code,codex --scenario memory-edit,model-switch` in two shards, run at once as
// two processes under one CACHELAB_RUN_ID, then merged: the same side by side as the unsharded run (each
// agent's status, requests and first break; the agents' own prompts carry a date and a session id, so
// their token counts move a little from run to run), one run id, and a merged run that holds against the
// unsharded one as its baseline.

import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, it } from 'vitest'
import { type AgentRow, parseAgentsCsv } from '../../reports/agents.ts'
import { parseStepsCsv } from '../../reports/parse.ts'
import { agentVersion } from './bench.ts'

const execFileAsync = promisify(execFile)
const cli = (args: readonly string[], env: NodeJS.ProcessEnv = {}) =>
  execFileAsync(process.execPath, [join(process.cwd(), 'bin', 'cachelab.js'), ...args], {
    env: { ...process.env, NO_COLOR: '1', ...env },
    maxBuffer: 64 * 1024 * 1024,
  })

const root = mkdtempSync(join(tmpdir(), 'cachelab-agent-shards-'))
const run = [
  'run',
  '--agent',
  `claude-code@${agentVersion('claude-code')},codex@${agentVersion('codex')}`,
  '--scenario',
  'memory-edit,model-switch',
]
const agentsOf = (dir: string) => parseAgentsCsv(readFileSync(join(dir, 'agents.csv'), 'utf8'), 'agents.csv')
/** What a row says, its token counts aside. */
const verdict = (row: AgentRow) => ({
  agent: row.agent,
  version: row.version,
  scenario: row.scenario,
  status: row.status,
  requests: row.requests,
  firstBreak:
    row.firstBreak === undefined
      ? undefined
      : {
          turn: row.firstBreak.turn,
          node: row.firstBreak.node,
          cause: row.firstBreak.cause,
          event: row.firstBreak.event,
        },
})

let unsharded: AgentRow[]
let merged: AgentRow[]

beforeAll(async () => {
  await cli([...run, '--out', join(root, 'single')])
  await Promise.all(
    ['1/2', '2/2'].map((shard, index) =>
      cli([...run, '--shard', shard, '--out', join(root, `shard-${index + 1}`)], {
        CACHELAB_RUN_ID: 'shards-test',
      }),
    ),
  )
  await cli(['merge-reports', join(root, 'shard-1'), join(root, 'shard-2'), '--out', join(root, 'merged')])
  unsharded = agentsOf(join(root, 'single'))
  merged = agentsOf(join(root, 'merged'))
})

describe('an agents run in two shards, merged', () => {
  it('gives the unsharded side by side, row for row', () => {
    expect(merged.map(verdict)).toEqual(unsharded.map(verdict))
    expect(merged.map((row) => `${row.agent} ${row.scenario} ${row.status}`)).toEqual([
      'claude-code memory-edit ok',
      'codex memory-edit ok',
      'claude-code model-switch ok',
      'codex model-switch ok',
    ])
    expect(merged.find((row) => row.scenario === 'model-switch')?.firstBreak?.cause).toBe('config-changed')
  })

  it('carries the run id every shard shared', () => {
    const steps = parseStepsCsv(
      readFileSync(join(root, 'merged', 'agent-steps.csv'), 'utf8'),
      'agent-steps.csv',
    )
    expect(new Set(steps.map((row) => row.runId))).toEqual(new Set(['agents-shards-test']))
  })

  it('holds against the unsharded run as its baseline', async () => {
    const { stdout } = await cli(['check', '--baseline', join(root, 'single'), '--out', join(root, 'merged')])
    expect(stdout).toContain('agents gate: 4 agent sessions of the baseline, 0 failures')
  })
})
