import { describe, expect, it } from 'vitest'
import {
  type AgentSessionRecord,
  agentRow,
  agentsCsv,
  agentsSummaryLines,
  compareAgents,
  gateAgents,
  parseAgentsCsv,
} from './agents.ts'
import { stepRow } from './testing.ts'

/** opencode's memory edit: turns 1 and 2 warm, the system prompt replaced in turn 3, a title request beside. */
function memoryEdit(agent = 'opencode', lost = 6745): AgentSessionRecord {
  return {
    agent,
    version: '1.18.33',
    source: 'cache',
    scenario: 'memory-edit',
    status: 'ok',
    rows: [
      stepRow({
        uncached: 500,
        conversationKind: 'side',
        variant: 'ses.side-title',
        cold: true,
      }),
      stepRow({ variant: 'ses', uncached: 7000, cold: true }),
      stepRow({ variant: 'ses', read: 7000, uncached: 100, turn: 2 }),
      stepRow({
        variant: 'ses',
        read: 200,
        uncached: 7000,
        lost,
        turn: 3,
        breakCause: 'system-replace',
        breakNode: 'system[0]',
      }),
      stepRow({ variant: 'ses', read: 7200, uncached: 50, turn: 3, step: 2 }),
    ],
    turnOf: [1, 1, 2, 3, 3],
    events: [[], [], ['memory-edit']],
    refusals: [],
  }
}

describe("an agent session's line", () => {
  it("gives the warm hit ratio with its denominator, leaving each conversation's first request out", () => {
    const row = agentRow(memoryEdit())
    expect(row.warmInputTokens).toBe(7100 + 7200 + 7250)
    expect(row.warmHitRatio).toBeCloseTo((7000 + 200 + 7200) / (7100 + 7200 + 7250), 9)
    expect(row.requests).toBe(5)
  })

  it('says first why the API refused a request, then how the agent ended', () => {
    const row = agentRow({
      ...memoryEdit('gemini-cli'),
      status: 'failed',
      note: 'turn 2 ("And src/calc.js?"): exited 1',
      refusals: ['HTTP 400 INVALID_ARGUMENT: function responses must match the calls', 'HTTP 400'],
    })
    expect(row.refused).toBe(2)
    expect(row.note).toBe(
      'refused: HTTP 400 INVALID_ARGUMENT: function responses must match the calls; turn 2 ("And src/calc.js?"): exited 1',
    )
  })

  it('names the first break of the main conversation with its node, cause, turn and the event before it', () => {
    const row = agentRow(memoryEdit())
    expect(row.firstBreak).toMatchObject({
      turn: 3,
      node: 'system[0]',
      cause: 'system-replace',
      event: 'memory-edit',
      lostTokens: 6745,
    })
    expect(row.firstBreak?.lostUsd).toBeCloseTo((6745 * 2.7) / 1_000_000, 12)
    expect(row.lostTokens).toBe(6745)
  })

  it('counts side conversations apart, with their cost, and never takes a break from them', () => {
    const record = memoryEdit()
    const side = { ...record.rows[0], breakCause: 'tools-changed', lostTokens: 99 } as (typeof record.rows)[0]
    const row = agentRow({ ...record, rows: [side, ...record.rows.slice(1)] })
    expect(row.sideConversations).toBe(1)
    expect(row.sideCostUsd).toBeCloseTo((500 * 3) / 1_000_000, 12)
    expect(row.firstBreak?.cause).toBe('system-replace')
  })

  it('calls a break in a continued turn without an event a resume, and counts provider-side losses', () => {
    const record: AgentSessionRecord = {
      ...memoryEdit(),
      events: [[], [], []],
      rows: [
        stepRow({ uncached: 7000, cold: true }),
        stepRow({
          read: 100,
          uncached: 7000,
          lost: 0,
          turn: 2,
          providerCause: 'ttl-expired',
          providerLost: 6900,
        }),
      ],
      turnOf: [1, 2],
    }
    const row = agentRow(record)
    expect(row.firstBreak).toMatchObject({ cause: 'ttl-expired', event: 'resume', lostTokens: 6900 })
    expect(row.lostTokens).toBe(6900)
  })
})

describe('agents side by side', () => {
  const records = [
    memoryEdit('opencode'),
    {
      ...memoryEdit('claude-code', 0),
      rows: memoryEdit().rows.map((row) => ({ ...row, costUsd: row.costUsd * 2 })),
    },
    {
      ...memoryEdit('pi'),
      status: 'n/a' as const,
      rows: [],
      turnOf: [],
      note: 'mcp-add: pi has no MCP support',
    },
  ]

  it('prices each ok agent against the cheapest on the same scenario; n/a has no comparison', () => {
    const rows = compareAgents(records)
    expect(rows.map((row) => row.vsBestUsd === 0)).toEqual([true, false, false])
    expect(rows[1]?.vsBestUsd).toBeCloseTo(rows[0]?.costUsd ?? 0, 12)
    expect(rows[2]?.vsBestUsd).toBeUndefined()
  })

  it('writes agents.csv and reads it back as written', () => {
    const rows = compareAgents(records)
    const text = agentsCsv(rows)
    expect(text.split('\n')[0]).toMatch(
      /^agent,version,source,scenario,status,requests,warm_hit_ratio,warm_input_tokens,/,
    )
    const back = parseAgentsCsv(text, 'agents.csv')
    expect(agentsCsv(back)).toBe(text)
    expect(back[0]?.firstBreak).toMatchObject({
      cause: 'system-replace',
      node: 'system[0]',
      event: 'memory-edit',
    })
    expect(back[2]).toMatchObject({ status: 'n/a', note: 'mcp-add: pi has no MCP support' })
  })

  it('refuses a file that is not an agents.csv, naming it', () => {
    expect(() => parseAgentsCsv('run_id,scenario\nx,y\n', 'steps.csv')).toThrow(
      /steps\.csv is not an agents\.csv/,
    )
  })

  it('prints at most 100 columns: a table per scenario, each break with its node, the versions', () => {
    const lines = agentsSummaryLines(compareAgents(records))
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(100)
    expect(lines).toContain('memory-edit')
    expect(lines.some((line) => /^ {2}opencode .* \$0\.0000 {2}system-replace$/.test(line))).toBe(true)
    expect(lines).toContain('  opencode     memory-edit     3  system[0]  memory-edit   6,745  $0.0182')
    expect(lines.some((line) => line.startsWith('n/a pi/memory-edit: mcp-add: pi has no MCP'))).toBe(true)
    expect(lines.at(-1)).toBe(
      'versions: opencode 1.18.33 (cache), claude-code 1.18.33 (cache), pi 1.18.33 (cache)',
    )
  })
})

describe('the agents gate', () => {
  const baseline = compareAgents([memoryEdit('opencode', 6745), memoryEdit('qwen-code', 0)])

  it('passes the same rows', () => {
    expect(gateAgents(baseline, baseline, 1024)).toEqual({ findings: [], notes: [] })
  })

  it('fails a break that grew by the threshold, and a break that is new, not one that grew less', () => {
    const grown = compareAgents([memoryEdit('opencode', 6745 + 1024), memoryEdit('qwen-code', 2000)])
    const texts = gateAgents(baseline, grown, 1024).findings.map(
      (finding) => `${finding.agent}: ${finding.text}`,
    )
    expect(texts).toEqual([
      'opencode: break grew: system-replace at system[0] (memory-edit) lost 7,769 tokens, was 6,745',
      'opencode: lost 7,769 tokens, was 6,745',
      'qwen-code: break grew: system-replace at system[0] (memory-edit) lost 2,000 tokens, was 0',
      'qwen-code: lost 2,000 tokens, was 0',
    ])
    const little = compareAgents([memoryEdit('opencode', 6745 + 1023), memoryEdit('qwen-code', 0)])
    expect(gateAgents(baseline, little, 1024).findings).toEqual([])
  })

  it('fails a session missing from the run or that no longer runs, and notes a new version', () => {
    const run = compareAgents([
      { ...memoryEdit('opencode'), version: '1.19.0', status: 'failed', note: 'exited 1' },
    ])
    const result = gateAgents(baseline, run, 1024)
    expect(result.findings.map((finding) => finding.text)).toEqual([
      'was ok, now failed: exited 1',
      'missing from the run',
    ])
    expect(result.notes).toEqual(['opencode: 1.18.33 → 1.19.0'])
  })
})
