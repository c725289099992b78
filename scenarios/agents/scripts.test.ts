import { describe, expect, it } from 'vitest'
import { AGENT_DRIVERS, AGENT_NAMES } from '../../harness/loops/agents/index.ts'
import { AGENT_SCENARIOS, agentScenario, notApplicable, planTurns } from './scripts.ts'

const scenario = (name: string) => {
  const found = agentScenario(name)
  if (found === undefined) throw new Error(`no scenario ${name}`)
  return found
}

describe('the agent scenarios', () => {
  it('are named uniquely, and every turn after the first continues the session', () => {
    const names = AGENT_SCENARIOS.map((entry) => entry.name)
    expect(new Set(names).size).toBe(names.length)
    expect(names).toEqual(
      expect.arrayContaining([
        'resume',
        'memory-edit',
        'new-file',
        'mcp-add',
        'model-switch',
        'compaction',
        'idle',
        'subagent',
      ]),
    )
    for (const entry of AGENT_SCENARIOS) {
      const steps = planTurns(AGENT_DRIVERS['claude-code'], entry).map((turn) => turn.step.continues === true)
      expect(steps, entry.name).toEqual(entry.turns.map((_, index) => index > 0))
    }
  })

  it("write each driver's own memory file before the turn the event precedes", () => {
    for (const name of AGENT_NAMES) {
      const turns = planTurns(AGENT_DRIVERS[name], scenario('memory-edit'))
      expect(turns.map((turn) => turn.memory?.path)).toEqual([
        undefined,
        undefined,
        AGENT_DRIVERS[name].capabilities.memoryFile,
      ])
      expect(turns[2]?.events).toEqual(['memory-edit'])
    }
  })

  it('answer the turns before a resume in text for an agent that cannot resume after tool calls', () => {
    const gemini = planTurns(AGENT_DRIVERS['gemini-cli'], scenario('new-file'))
    expect(gemini.map((turn) => turn.replies.map((rule) => rule.user))).toEqual([
      ['What does README.md say?'],
      ['And src/calc.js?'],
      [],
    ])
    expect(gemini[0]?.replies[0]).toMatchObject({ kind: 'main', text: { tokens: 600 } })
    expect(planTurns(AGENT_DRIVERS.codex, scenario('new-file')).flatMap((turn) => turn.replies)).toEqual([])
  })

  it('write a new workspace file before the resumed third turn, for every agent', () => {
    for (const name of AGENT_NAMES) {
      const turns = planTurns(AGENT_DRIVERS[name], scenario('new-file'))
      expect(turns.map((turn) => turn.files.map((file) => file.path))).toEqual([[], [], ['NOTES.md']])
      expect(turns[2]?.step.continues).toBe(true)
      if (AGENT_DRIVERS[name].capabilities.continues === undefined)
        expect(notApplicable(AGENT_DRIVERS[name], scenario('new-file')), name).toEqual([])
    }
  })

  it("switch to the driver's second model and add the MCP server, idle and compact as each driver does", () => {
    expect(planTurns(AGENT_DRIVERS.codex, scenario('model-switch')).map((turn) => turn.step.model)).toEqual([
      undefined,
      undefined,
      'gpt-5.4-mini',
    ])
    expect(planTurns(AGENT_DRIVERS.opencode, scenario('mcp-add')).map((turn) => turn.addMcp)).toEqual([
      false,
      false,
      true,
    ])
    expect(planTurns(AGENT_DRIVERS.opencode, scenario('idle'))[2]?.idleSeconds).toBe(7200)
    const claude = planTurns(AGENT_DRIVERS['claude-code'], scenario('compaction'))[2]
    expect(claude?.preludes).toEqual([{ prompt: '/compact', continues: true }])
    const codex = planTurns(AGENT_DRIVERS.codex, scenario('compaction'))[2]
    expect(codex).toMatchObject({ preludes: [], autoCompactAbove: 40 })
  })

  it("answer the subagent turn with the driver's own subagent tool, for that turn's prompt only", () => {
    const [, , third] = planTurns(AGENT_DRIVERS['claude-code'], scenario('subagent'))
    expect(third?.replies).toEqual([
      expect.objectContaining({ kind: 'main', user: 'Summarize both in one line', step: 1 }),
    ])
    expect(third?.replies[0]?.tools?.[0]?.name).toBe('Agent')
  })

  it('say n/a with the reason for an event a driver cannot do headless, and nothing for one it can', () => {
    expect(notApplicable(AGENT_DRIVERS.pi, scenario('mcp-add'))).toEqual([
      { event: 'mcp-add', reason: expect.stringContaining('no MCP') },
    ])
    expect(notApplicable(AGENT_DRIVERS.opencode, scenario('compaction'))).toHaveLength(1)
    expect(notApplicable(AGENT_DRIVERS['claude-code'], scenario('compaction'))).toEqual([])
    for (const name of AGENT_NAMES) {
      if (AGENT_DRIVERS[name].capabilities.continues !== undefined) continue
      expect(notApplicable(AGENT_DRIVERS[name], scenario('resume')), name).toEqual([])
      expect(notApplicable(AGENT_DRIVERS[name], scenario('memory-edit')), name).toEqual([])
    }
  })

  it('say n/a for every scenario of more than one turn when a driver cannot continue a session headless', () => {
    for (const entry of AGENT_SCENARIOS)
      expect(notApplicable(AGENT_DRIVERS.cline, entry), entry.name).toEqual([
        { event: 'resume', reason: expect.stringContaining('--id') },
      ])
    const oneTurn = { name: 'one', description: 'one turn', turns: [{ prompt: 'Say hello' }] }
    expect(notApplicable(AGENT_DRIVERS.cline, oneTurn)).toEqual([])
  })
})
