import { describe, expect, it } from 'vitest'
import { opencode } from './opencode.ts'

const agent = 'opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14'
const read = (system: string, headers: Record<string, string>) =>
  opencode.read({
    api: 'openai-chat',
    body: { messages: [{ role: 'system', content: system }] },
    headers: { 'user-agent': agent, ...headers },
  })

describe("opencode's port", () => {
  it('reads its session header, a subagent under its parent, the title and compaction by their prompts', () => {
    expect(read('You are opencode.', { 'x-session-id': 'ses_a' })).toEqual({
      agent: 'opencode',
      version: '1.18.33',
      session: 'ses_a',
      kind: 'main',
    })
    expect(
      read('You are opencode.', { 'x-session-id': 'ses_b', 'x-parent-session-id': 'ses_a' }),
    ).toMatchObject({
      session: 'ses_a',
      key: 'ses_b',
      kind: 'subagent',
    })
    expect(read('You are a title generator.', { 'x-session-id': 'ses_a' })).toMatchObject({
      kind: 'side',
      purpose: 'title',
    })
    expect(read('You are a context summarization agent.', { 'x-session-id': 'ses_a' })).toMatchObject({
      kind: 'compaction',
    })
  })
})
