import { describe, expect, it } from 'vitest'
import type { Position } from './conversation.ts'
import { DEFAULT_TEXT, decideReply, ReplyBook, type ReplyRequest, type ReplyRule } from './reply.ts'
import { repliesFromRules } from './reply-file.ts'

const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }
const tools = [
  { name: 'read_file', schema },
  { name: 'grep', schema: { type: 'object', properties: { pattern: { type: 'string' } } } },
]

function request(position: Partial<Position>, more: Partial<ReplyRequest> = {}): ReplyRequest {
  return {
    session: 's1',
    position: { turn: 1, step: 1, after: 'user', ...position },
    tools,
    toolChoice: { kind: 'auto' },
    ...more,
  }
}

describe('the default reply', () => {
  it('calls the first declared tool after a user turn, with arguments from its schema', () => {
    expect(decideReply(request({}), undefined, undefined)).toMatchObject({
      blocks: [{ type: 'tool-call', name: 'read_file', arguments: '{"path":"example path"}' }],
      source: 'default',
    })
  })

  it('answers in text once tool results are back, and without tools', () => {
    expect(decideReply(request({ step: 2, after: 'tool-results' }), undefined, undefined)).toMatchObject({
      blocks: [{ type: 'text', text: DEFAULT_TEXT }],
    })
    expect(decideReply(request({}, { tools: [] }), undefined, undefined)).toMatchObject({
      blocks: [{ type: 'text', text: DEFAULT_TEXT }],
    })
  })

  it('follows the tool choice: none answers in text, a named or required tool is called at every step', () => {
    const after = { step: 2, after: 'tool-results' as const }
    expect(decideReply(request({}, { toolChoice: { kind: 'none' } }), undefined, undefined)).toMatchObject({
      blocks: [{ type: 'text' }],
    })
    expect(
      decideReply(request(after, { toolChoice: { kind: 'named', name: 'grep' } }), undefined, undefined),
    ).toMatchObject({
      blocks: [{ type: 'tool-call', name: 'grep', arguments: '{"pattern":"example pattern"}' }],
    })
    expect(
      decideReply(request(after, { toolChoice: { kind: 'required' } }), undefined, undefined),
    ).toMatchObject({
      blocks: [{ type: 'tool-call', name: 'read_file' }],
    })
  })
})

describe('the header script', () => {
  it('wins over the replies and adds no reasoning', () => {
    const book = repliesFromRules([{ text: 'from the file' }])
    const header = {
      role: 'assistant' as const,
      content: [{ type: 'text' as const, text: 'from the header' }],
    }
    expect(decideReply(request({}), header, book)).toEqual({
      blocks: [{ type: 'text', text: 'from the header' }],
      reasoning: { kind: 'none' },
      source: 'header',
    })
  })
})

describe('a replies book', () => {
  const rule = (session: string, turn?: number, step?: number): ReplyRule => ({
    session,
    ...(turn !== undefined ? { turn } : {}),
    ...(step !== undefined ? { step } : {}),
    answer: { tools: [], text: { kind: 'literal', text: `${session} ${turn} ${step}` } },
    origin: 'test',
  })

  it('takes the most specific rule: the session, then the turn, then the step; the first on a tie', () => {
    const book = new ReplyBook([
      rule('*'),
      rule('*', 2),
      rule('*', 2, 1),
      rule('s1'),
      rule('s1', 3),
      rule('*', 3),
    ])
    expect(book.find('s1', { turn: 2, step: 1 })).toBe(book.rules[3])
    expect(book.find('s1', { turn: 3, step: 1 })).toBe(book.rules[4])
    expect(book.find('s2', { turn: 2, step: 1 })).toBe(book.rules[2])
    expect(book.find('s2', { turn: 2, step: 2 })).toBe(book.rules[1])
    expect(book.find(undefined, { turn: 9, step: 9 })).toBe(book.rules[0])
    expect(new ReplyBook([rule('s1', 1)]).find('s2', { turn: 1, step: 1 })).toBeUndefined()
  })

  it('scripts text of a token count, tool calls, reasoning and a stop', () => {
    const book = repliesFromRules([
      {
        turn: 1,
        text: { tokens: 12 },
        tools: [{ name: 'grep', arguments: { pattern: 'TODO' } }],
        reasoning: 40,
      },
      { turn: 2, stop: 'max-tokens', text: 'cut' },
    ])
    const first = decideReply(request({}), undefined, book)
    expect(first).toMatchObject({
      blocks: [{ type: 'text' }, { type: 'tool-call', name: 'grep', arguments: '{"pattern":"TODO"}' }],
      reasoning: { kind: 'scripted', redacted: false },
      source: 'replies',
    })
    expect(decideReply(request({ turn: 2 }), undefined, book)).toMatchObject({ stop: 'max-tokens' })
    // The same session, turn and step write the same words.
    expect(decideReply(request({}), undefined, book)).toEqual(first)
  })

  it('falls back to the default where no rule applies', () => {
    const book = repliesFromRules([{ session: 'other', text: 'not for s1' }])
    expect(decideReply(request({}), undefined, book)).toMatchObject({ source: 'default' })
  })

  it('cannot call a tool the request does not declare, and says which ones it does', () => {
    const book = repliesFromRules([{ tools: [{ name: 'write_file' }] }])
    expect(decideReply(request({}), undefined, book)).toEqual({
      problem:
        'cachelab replies (replies[0]): turn 1 step 1 calls tool "write_file", but the request declares only read_file, grep',
    })
  })
})
