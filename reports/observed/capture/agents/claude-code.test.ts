import { describe, expect, it } from 'vitest'
import { claudeCode } from './claude-code.ts'

const session = '6f1c2a9e-0000-4000-8000-000000000001'
const read = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  claudeCode.read({
    api: 'anthropic-messages',
    body,
    headers: { 'user-agent': 'claude-cli/2.1.328 (external, cli)', ...headers },
  })

describe("Claude Code's port", () => {
  it('reads the session id from its header, else from metadata.user_id, never the device id', () => {
    const metadata = { user_id: JSON.stringify({ device_id: 'd'.repeat(64), session_id: session }) }
    expect(read({ metadata, messages: [] })).toEqual({
      agent: 'claude-code',
      version: '2.1.328',
      session,
      kind: 'main',
    })
    expect(read({ messages: [] }, { 'x-claude-code-session-id': session })?.session).toBe(session)
  })

  it('names a subagent by its agent id, a compaction by its instruction, a title by its JSON answer', () => {
    expect(read({ messages: [] }, { 'x-claude-code-agent-id': 'a1' })).toMatchObject({
      kind: 'subagent',
      key: 'a1',
    })
    expect(
      read({ messages: [{ role: 'user', content: 'CRITICAL: Respond with TEXT ONLY.' }] }),
    ).toMatchObject({
      kind: 'compaction',
    })
    const title = {
      system: [{ type: 'text', text: 'You are naming a coding session.' }],
      output_config: { format: { type: 'json_schema', schema: {} } },
      messages: [],
    }
    expect(read(title)).toMatchObject({ kind: 'side', purpose: 'title' })
  })

  it('does not read what another client sent', () => {
    expect(
      claudeCode.read({
        api: 'anthropic-messages',
        body: { messages: [] },
        headers: { 'user-agent': 'Anthropic/JS 0.91.1' },
      }),
    ).toBeUndefined()
  })
})
