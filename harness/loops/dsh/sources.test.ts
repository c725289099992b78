import { describe, expect, it } from 'vitest'
import { type DshEventView, type DshMessageView, wireMessageCount, wireSources } from './sources.ts'

const user = (...types: string[]): DshMessageView => ({
  role: 'user',
  content: types.map((type) => ({ type })),
})

describe('the wire messages of a DSH message', () => {
  it('makes one tool message per tool result and one user message for the rest', () => {
    expect(wireMessageCount(user('text'))).toBe(1)
    expect(wireMessageCount(user('tool-result', 'tool-result'))).toBe(2)
    expect(wireMessageCount(user('tool-result', 'image'))).toBe(2)
    expect(wireMessageCount({ role: 'assistant', content: [{ type: 'text' }, { type: 'tool-call' }] })).toBe(
      1,
    )
  })
})

describe('the event behind each wire message', () => {
  it('names the request header for the system slot and each surface node for its messages', () => {
    const events: DshEventView[] = [
      { type: 'user/message', seq: 0, data: {} },
      { type: 'request/header', seq: 1, data: { header: { system: 'You are terse.' } } },
      { type: 'assistant/message', seq: 2, data: {} },
      { type: 'tool/result', seq: 3, data: {} },
      { type: 'assistant/message', seq: 4, data: { empty: true } },
    ]
    const project = (event: DshEventView): DshMessageView | null => {
      if (event.type === 'user/message') return user('text')
      if (event.type === 'tool/result') return user('tool-result', 'tool-result')
      if ((event.data as { empty?: boolean }).empty === true) return null
      return { role: 'assistant', content: [{ type: 'tool-call' }] }
    }
    expect(wireSources(events, [0, 2, 3, 4], project)).toEqual([1, 0, 2, 3, 3])
  })

  it('has no system source when the header carries no prompt', () => {
    const events: DshEventView[] = [
      { type: 'request/header', seq: 0, data: { header: {} } },
      { type: 'user/message', seq: 1, data: {} },
    ]
    expect(wireSources(events, [1], () => user('text'))).toEqual([1])
  })
})
