import { describe, expect, it } from 'vitest'
import { readAgent } from './index.ts'

const agent = 'Kilo-Code/7.7.7 ai-sdk/provider-utils/4.0.27 runtime/bun/1.3.14'
const read = (system: string, headers: Record<string, string>) =>
  readAgent({
    api: 'openai-chat',
    body: { messages: [{ role: 'system', content: system }] },
    headers: { 'user-agent': agent, 'x-title': 'Kilo Code', ...headers },
  })

describe("Kilo Code's port", () => {
  it("is told from opencode by its user agent, and reads opencode's session headers and side prompts", () => {
    expect(read('You are Kilo.', { 'x-session-id': 'ses_a' })).toEqual({
      agent: 'kilo',
      version: '7.7.7',
      session: 'ses_a',
      kind: 'main',
    })
    expect(read('You are Kilo.', { 'x-session-id': 'ses_b', 'x-parent-session-id': 'ses_a' })).toMatchObject({
      agent: 'kilo',
      session: 'ses_a',
      key: 'ses_b',
      kind: 'subagent',
    })
    expect(read('You are a title generator.', { 'x-session-id': 'ses_a' })).toMatchObject({
      kind: 'side',
      purpose: 'title',
    })
  })

  it('reads its compaction by the conversation it hands over as text', () => {
    const compaction = readAgent({
      api: 'openai-chat',
      body: {
        messages: [
          { role: 'system', content: 'You are Kilo.' },
          {
            role: 'user',
            content: 'Here is the conversation so far:\n\n<conversation>\n[User]: hi\n</conversation>',
          },
        ],
      },
      headers: { 'user-agent': agent, 'x-session-id': 'ses_a' },
    })
    expect(compaction).toMatchObject({
      agent: 'kilo',
      session: 'ses_a',
      kind: 'compaction',
      purpose: 'summary',
    })
  })
})
