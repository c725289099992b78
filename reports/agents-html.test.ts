import { describe, expect, it } from 'vitest'
import type { AgentRow } from './agents.ts'
import { agentsSection } from './agents-html.ts'

const base: AgentRow = {
  agent: 'opencode',
  version: '1.18.33',
  source: 'cache',
  scenario: 'memory-edit',
  status: 'ok',
  requests: 7,
  warmHitRatio: 0.9719,
  warmInputTokens: 37_270,
  lostTokens: 384,
  lostUsd: 0.0006,
  costUsd: 0.01,
  sideConversations: 1,
  sideCostUsd: 0.0011,
  firstBreak: {
    turn: 3,
    node: 'messages[0]',
    cause: 'system-replace',
    event: 'memory-edit',
    lostTokens: 384,
    lostUsd: 0.0006,
  },
  vsBestUsd: 0,
  refused: 0,
  note: '',
}

describe("report.html's agents section", () => {
  it('is absent when the run drove no agent', () => {
    expect(agentsSection(undefined)).toBe('')
    expect(agentsSection([])).toBe('')
  })

  it('gives each agent its hit ratio with the denominator, its first break with the event, by scenario', () => {
    const html = agentsSection([
      base,
      { ...base, scenario: 'resume', agent: 'qwen-code', firstBreak: undefined, vsBestUsd: 0.04 },
    ])
    expect(html).toContain('<section id="agents">')
    expect(html.match(/<h3>/g)).toHaveLength(2)
    expect(html).toContain('97.19%')
    expect(html).toContain('of 37,270')
    expect(html).toContain('<code>messages[0]</code> system-replace after <strong>memory-edit</strong>')
    expect(html).toContain('+$0.0400')
    expect(html).toMatch(/<td class="label wrap">none<\/td>/)
  })

  it('shows why an agent did not run, escaped, with no numbers', () => {
    const html = agentsSection([
      {
        ...base,
        status: 'failed',
        warmHitRatio: undefined,
        firstBreak: undefined,
        vsBestUsd: undefined,
        note: 'refused: HTTP 400 INVALID_ARGUMENT: <parts> & calls',
      },
    ])
    expect(html).toContain('refused: HTTP 400 INVALID_ARGUMENT: &lt;parts&gt; &amp; calls')
    expect(html).toContain('<span class="sub">failed</span>')
    expect(html).not.toContain('97.19%')
  })
})
