// `cachelab run --agent claude-code,opencode` as a user runs it, over the memory-file edit and the MCP
// server added: the side by side written and printed in 100 columns, opencode's memory edit a
// `system-replace` and its MCP server a `tools-changed` (Claude Code names its MCP tools through its
// tool search, so its tools stay the same), every agent recorded by version, and `check` passing the run
// against itself as a baseline.

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
const cli = (args: readonly string[]) =>
  execFileAsync(process.execPath, [join(process.cwd(), 'bin', 'cachelab.js'), ...args], {
    env: { ...process.env, NO_COLOR: '1' },
    maxBuffer: 64 * 1024 * 1024,
  })

const out = join(mkdtempSync(join(tmpdir(), 'cachelab-run-agents-')), 'run')
let stdout: string
let agents: AgentRow[]

beforeAll(async () => {
  ;({ stdout } = await cli([
    'run',
    '--agent',
    `claude-code@${agentVersion('claude-code')},opencode@${agentVersion('opencode')}`,
    '--scenario',
    'memory-edit,mcp-add',
    '--out',
    out,
  ]))
  agents = parseAgentsCsv(readFileSync(join(out, 'agents.csv'), 'utf8'), 'agents.csv')
})

const line = (agent: string, scenario: string) =>
  agents.find((row) => row.agent === agent && row.scenario === scenario)

describe('cachelab run --agent claude-code,opencode', () => {
  it('runs both agents through both scenarios, each recorded by its version', () => {
    expect(agents.map((row) => `${row.agent} ${row.scenario} ${row.status}`)).toEqual([
      'claude-code memory-edit ok',
      'opencode memory-edit ok',
      'claude-code mcp-add ok',
      'opencode mcp-add ok',
    ])
    for (const row of agents) {
      expect(row.version, row.agent).toMatch(/^\d+\.\d+\.\d+/)
      expect(row.warmInputTokens, row.agent).toBeGreaterThan(0)
      expect(row.refused, row.agent).toBe(0)
    }
    const steps = parseStepsCsv(readFileSync(join(out, 'agent-steps.csv'), 'utf8'), 'agent-steps.csv')
    const versions = new Set(steps.map((row) => row.agent))
    expect(versions).toEqual(
      new Set(agents.map((row) => `${row.agent}/${agentVersion(row.agent as 'opencode')}`)),
    )
  })

  it("shows opencode's memory edit as system-replace and its MCP server as tools-changed, in turn 3", () => {
    expect(line('opencode', 'memory-edit')?.firstBreak).toMatchObject({
      cause: 'system-replace',
      event: 'memory-edit',
      turn: 3,
    })
    expect(line('opencode', 'mcp-add')?.firstBreak).toMatchObject({
      cause: 'tools-changed',
      event: 'mcp-add',
      turn: 3,
    })
    expect(line('opencode', 'mcp-add')?.lostTokens).toBeGreaterThan(0)
    // Claude Code defers MCP tools behind its ToolSearch tool: the tools it declares stay the same.
    expect(line('claude-code', 'mcp-add')?.firstBreak?.cause).not.toBe('tools-changed')
  })

  it('prints the side by side in at most 100 columns', () => {
    const block = stdout.split('\n')
    expect(block).toContain('coding agents side by side (agents.csv, agent-steps.csv):')
    // The one line that is the output folder's path is as long as the path.
    const folderLine = block.findIndex((text) => text.startsWith('run agents-')) + 1
    for (const [index, text] of block.entries())
      if (index !== folderLine) expect(text.length, text).toBeLessThanOrEqual(100)
    expect(block[folderLine]?.trim()).toMatch(/cachelab-run-agents-.+\/run$/)
  })

  it('passes check against itself as the baseline', async () => {
    const { stdout: report } = await cli(['check', '--baseline', out, '--out', out])
    expect(report).toContain('agents gate: 4 agent sessions of the baseline, 0 failures')
  })
})
