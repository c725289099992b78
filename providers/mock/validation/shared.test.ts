import { describe, expect, it } from 'vitest'
import { toolPairing } from './shared.ts'

const user = { role: 'user', content: 'go' }
const calls = (...ids: string[]) => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
})
const result = (id: string) => ({ role: 'tool', tool_call_id: id, content: 'ok' })

describe('toolPairing', () => {
  it('finds no break when every call is answered before the next message', () => {
    expect(
      toolPairing([user, calls('a', 'b'), result('b'), result('a'), { role: 'assistant', content: 'done' }]),
    ).toBe(undefined)
  })

  it('leaves an assistant message whose calls nothing follows alone: the conversation is open there', () => {
    expect(toolPairing([user, calls('a')])).toBeUndefined()
  })

  it('names a tool message after a user message as an orphan', () => {
    expect(toolPairing([user, result('a')])).toEqual({ kind: 'orphan-tool', index: 1 })
  })

  it('names a tool message whose id the calls before it lack as an orphan', () => {
    expect(toolPairing([user, calls('a'), result('b')])).toEqual({ kind: 'orphan-tool', index: 2 })
  })

  it('names the calls left unanswered when another message follows, or when the conversation ends part-answered', () => {
    expect(toolPairing([user, calls('a', 'b'), result('a'), user])).toEqual({
      kind: 'unanswered-calls',
      index: 1,
      ids: ['b'],
    })
    expect(toolPairing([user, calls('a', 'b'), result('b')])).toEqual({
      kind: 'unanswered-calls',
      index: 1,
      ids: ['a'],
    })
  })
})
