import { describe, expect, it } from 'vitest'
import { AGENT_NAMES, type AgentName } from '../harness/loops/agents/index.ts'
import { agentsOfFile, latestTable } from './test-agents.ts'

describe('npm run test:agents -- --latest', () => {
  it('knows which agents each test file drives, by its name', () => {
    expect(agentsOfFile('/x/scenarios/agents/claude-code-tui.agents.test.ts')).toEqual(['claude-code'])
    expect(agentsOfFile('scenarios/agents/codex.agents.test.ts')).toEqual(['codex'])
    expect(agentsOfFile('scenarios/agents/gemini-cli.agents.test.ts')).toEqual(['gemini-cli'])
    expect(agentsOfFile('scenarios/agents/all.agents.test.ts')).toEqual([...AGENT_NAMES])
    expect(agentsOfFile('scenarios/agents/portkey.agents.test.ts')).toEqual([])
  })

  it('prints per agent and version the tests that held and those that did not', () => {
    const versions = new Map<AgentName, string>([
      ['claude-code', '2.1.337'],
      ['codex', '0.171.0'],
    ])
    const lines = latestTable(
      versions,
      [
        {
          name: '/r/scenarios/agents/claude-code.agents.test.ts',
          assertionResults: [
            { fullName: 'keeps conversations apart', status: 'passed' },
            { fullName: 'imports the same rows', status: 'failed' },
          ],
        },
        {
          name: '/r/scenarios/agents/all.agents.test.ts',
          assertionResults: [{ fullName: 'finds all', status: 'passed' }],
        },
      ],
      '2026-12-07',
    )
    expect(lines[0]).toContain('2026-12-07')
    expect(lines).toContain(
      '| claude-code | 2.1.337 | 2 | 1 | claude-code.agents.test.ts: imports the same rows |',
    )
    expect(lines).toContain('| codex | 0.171.0 | 1 | 0 | - |')
  })

  it('counts a file whose setup failed (its tests skipped) as a failure, with its message', () => {
    const lines = latestTable(
      new Map<AgentName, string>([['codex', '0.171.0']]),
      [
        {
          name: '/r/scenarios/agents/codex.agents.test.ts',
          status: 'failed',
          message: 'AssertionError: codex exited on its timeout | stderr\nmore',
          assertionResults: [{ fullName: 'numbers five turns', status: 'skipped' }],
        },
      ],
      '2026-12-07',
    )
    expect(lines).toContain(
      '| codex | 0.171.0 | 0 | 1 | codex.agents.test.ts: setup: AssertionError: codex exited on its timeout / stderr |',
    )
  })
})
