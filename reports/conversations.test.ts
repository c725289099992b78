import { describe, expect, it } from 'vitest'
import { conversationDetail, conversationName, groupBySessionId, hasConversations } from './conversations.ts'
import { CAPTURED_SESSION, capturedAgent } from './testing.ts'

const labels = (variant: string, extra: object = {}) => ({
  scenario: 'capture',
  variant,
  provider: 'anthropic' as const,
  ...extra,
})

describe('conversations under their session', () => {
  it('names a conversation by what follows its session id, and the session’s own by its kind', () => {
    const subagent = labels(`${CAPTURED_SESSION}.subagent-a3c29f83d9214c246`, {
      session: CAPTURED_SESSION,
      conversationKind: 'subagent',
    })
    expect(conversationName(subagent)).toBe('subagent-a3c29f83d9214c246')
    expect(conversationDetail(subagent)).toBe('a3c29f83d9214c246')
    expect(conversationName(labels(CAPTURED_SESSION))).toBe('main')
    expect(conversationDetail(labels(CAPTURED_SESSION))).toBe('')
  })

  it('puts the kind before a name that does not start with it', () => {
    const odd = labels('s1.helper-7', { session: 's1', conversationKind: 'side' })
    expect(conversationName(odd)).toBe('side helper-7')
    expect(conversationDetail(odd)).toBe('helper-7')
  })

  it('groups by session, main first, then subagents, side requests and compactions, sessions as first seen', () => {
    const groups = groupBySessionId(capturedAgent())
    expect(groups.map((group) => group.key.variant)).toEqual([
      CAPTURED_SESSION,
      'fdf5a279-6f6b-4ccc-b408-7bed182d60ab',
    ])
    const kinds = [...new Set(groups[0]?.conversations.map((row) => row.conversationKind ?? 'main'))]
    expect(kinds).toEqual(['main', 'subagent', 'side', 'compaction'])
    expect(hasConversations(groups)).toBe(true)
  })

  it('keeps every session of a run without sessions its own group, in order', () => {
    const run = [labels('a'), labels('b'), labels('a', { provider: 'openai-chat' })]
    const groups = groupBySessionId(run)
    expect(groups.map((group) => group.conversations)).toEqual([[run[0]], [run[1]], [run[2]]])
    expect(hasConversations(groups)).toBe(false)
  })
})
