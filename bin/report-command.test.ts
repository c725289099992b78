import { describe, expect, it } from 'vitest'
import { conversationsLine } from './report-command.ts'

describe("the report's line on conversations", () => {
  it('counts conversations by kind and sessions by how they were told', () => {
    expect(
      conversationsLine({
        kinds: { main: 2, subagent: 2, side: 0, compaction: 1 },
        identities: { header: 0, agent: 2, 'conversation-key': 0, continuation: 0, new: 0 },
      }),
    ).toBe("conversations: 5 (2 main, 2 subagent, 1 compaction) in 2 sessions (2 by the agent's session id)")
  })
})
