// The agents gate through `cachelab check`, on agents.csv files written by hand (no agent runs): the same
// run passes, a doctored run whose break grew fails, naming it, and `--update` makes a first baseline.

import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type AgentRow, agentsCsv } from '../reports/agents.ts'
import { finishedRunDir, runCli } from './testing.ts'

const row = (agent: string, scenario: string, cause: string, lost: number): AgentRow => ({
  agent,
  version: '1.0.0',
  source: 'cache',
  scenario,
  status: 'ok',
  requests: 6,
  warmHitRatio: 0.9,
  warmInputTokens: 30_000,
  lostTokens: lost,
  lostUsd: lost * 1e-6,
  costUsd: 0.05,
  sideConversations: 1,
  sideCostUsd: 0.001,
  firstBreak: {
    turn: 3,
    node: 'messages[0]',
    cause,
    event: scenario,
    lostTokens: lost,
    lostUsd: lost * 1e-6,
  },
  vsBestUsd: 0,
  refused: 0,
  note: '',
})

const agents = [
  row('opencode', 'memory-edit', 'system-replace', 384),
  row('codex', 'mcp-add', 'tools-changed', 7936),
]
const folder = (rows: readonly AgentRow[]) =>
  finishedRunDir({ 'summary.csv': '', 'agents.csv': agentsCsv(rows) })

describe('cachelab check on agents.csv', () => {
  it('passes the same run', async () => {
    const run = folder(agents)
    const result = await runCli(['check', '--baseline', run, '--out', run])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain('agents gate: 2 agent sessions of the baseline, 0 failures')
  })

  it("fails when a scenario's break grows past the threshold, naming agent, scenario and break", async () => {
    const grown = [row('opencode', 'memory-edit', 'system-replace', 384 + 6000), agents[1] as AgentRow]
    const result = await runCli(['check', '--baseline', folder(agents), '--out', folder(grown)])
    expect(result.code).toBe(1)
    expect(result.stdout).toContain(
      'FAIL opencode/memory-edit: break grew: system-replace at messages[0] (memory-edit) lost 6,384 tokens, was 384',
    )
    expect(result.stdout).not.toContain('FAIL codex')
  })

  it('takes a growth under --break-threshold, and writes a first baseline with --update', async () => {
    const grown = [row('opencode', 'memory-edit', 'system-replace', 884), agents[1] as AgentRow]
    const ok = await runCli([
      'check',
      '--baseline',
      folder(agents),
      '--out',
      folder(grown),
      '--break-threshold',
      '1024',
    ])
    expect(ok.code).toBe(0)
    const baseline = join(mkdtempSync(join(tmpdir(), 'cachelab-agents-baseline-')), 'baseline')
    const run = folder(agents)
    const update = await runCli(['check', '--baseline', baseline, '--out', run, '--update'])
    expect(update.code, update.stderr).toBe(0)
    expect(readFileSync(join(baseline, 'agents.csv'), 'utf8')).toBe(agentsCsv(agents))
    expect((await runCli(['check', '--baseline', baseline, '--out', run])).code).toBe(0)
  })
})
