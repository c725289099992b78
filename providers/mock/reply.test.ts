import { describe, expect, it } from 'vitest'
import type { Position } from './conversation.ts'
import {
  DEFAULT_SUMMARY,
  DEFAULT_TEXT,
  decideReply,
  defaultReply,
  preferredTool,
  ReplyBook,
  type ReplyRequest,
  type ReplyRule,
  SPECIFICITY,
} from './reply.ts'
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
  it('calls a reading tool after a user turn, with arguments from its schema (a path: README.md)', () => {
    expect(decideReply(request({}), undefined, undefined)).toMatchObject({
      blocks: [{ type: 'tool-call', name: 'read_file', arguments: '{"path":"README.md"}' }],
      source: 'default',
    })
  })

  it('answers JSON valid against the schema of a structured-output request, once no tool is to be called', () => {
    const schema = {
      type: 'object',
      properties: {
        reasoning: { type: 'string' },
        model_choice: { type: 'string', enum: ['flash', 'pro'] },
      },
      required: ['reasoning', 'model_choice'],
    }
    const reply = decideReply(request({}, { tools: [], jsonOutput: { schema } }), undefined, undefined)
    const text = reply.blocks[0]?.type === 'text' ? reply.blocks[0].text : ''
    expect(JSON.parse(text)).toEqual({ reasoning: 'example reasoning', model_choice: 'flash' })
    expect(decideReply(request({}, { tools: [], jsonOutput: {} }), undefined, undefined).blocks).toEqual([
      { type: 'text', text: '{}' },
    ])
  })

  it('calls a namespaced tool with its namespace', () => {
    const spawn = { name: 'spawn_agent', namespace: 'collaboration', schema: { type: 'object' } }
    const wait = { name: 'wait', namespace: 'functions', schema: { type: 'object' } }
    expect(decideReply(request({}, { tools: [spawn, wait] }), undefined, undefined).blocks).toEqual([
      { type: 'tool-call', name: 'wait', namespace: 'functions', arguments: '{}' },
    ])
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

describe('the tool the default calls', () => {
  const tool = (name: string) => ({ name, schema: { type: 'object' } })
  const names = (...list: string[]) => list.map(tool)

  it('is a reading tool by name, in the order read, read_file, view, cat, ls, list, glob, grep', () => {
    // Claude Code declares Agent first; its Read ends the loop where Agent would start another.
    const claudeCode = names('Agent', 'Bash', 'Edit', 'Glob', 'Grep', 'ListAgents', 'Read', 'Skill')
    expect(preferredTool(claudeCode)?.name).toBe('Read')
    expect(preferredTool(names('write_file', 'grep', 'read_file'))?.name).toBe('read_file')
  })

  it('else the first whose name has the word read, not a word that merely contains it', () => {
    expect(preferredTool(names('list_threads', 'write', 'ReadManyFiles'))?.name).toBe('ReadManyFiles')
    expect(preferredTool(names('spread_sheet', 'mcp__fs__read_text_file'))?.name).toBe(
      'mcp__fs__read_text_file',
    )
  })

  it('else the first that does not start an agent, else the first', () => {
    expect(preferredTool(names('spawn_agent', 'Task', 'delegate_work', 'exec_command'))?.name).toBe(
      'exec_command',
    )
    expect(preferredTool(names('Agent', 'Task'))?.name).toBe('Agent')
    expect(preferredTool([])).toBeUndefined()
  })
})

describe('a replies book', () => {
  const rule = (fields: Partial<Omit<ReplyRule, 'answer' | 'origin'>>, origin: string): ReplyRule => ({
    session: '*',
    ...fields,
    answer: { tools: [], text: { kind: 'literal', text: origin } },
    origin,
  })
  const at = (turn: number, step: number, more: Partial<ReplyRequest> = {}) =>
    request({ turn, step }, { session: 's1', ...more })

  it('takes the most specific rule: the session, then the turn, then the step; the first on a tie', () => {
    const book = new ReplyBook([
      rule({}, 'any'),
      rule({ turn: 2 }, 'turn 2'),
      rule({ turn: 2, step: 1 }, 'turn 2 step 1'),
      rule({ session: 's1' }, 's1'),
      rule({ session: 's1', turn: 3 }, 's1 turn 3'),
      rule({ turn: 3 }, 'turn 3'),
    ])
    expect(book.find(at(2, 1))?.origin).toBe('s1')
    expect(book.find(at(3, 1))?.origin).toBe('s1 turn 3')
    expect(book.find(at(2, 1, { session: 's2' }))?.origin).toBe('turn 2 step 1')
    expect(book.find(at(2, 2, { session: 's2' }))?.origin).toBe('turn 2')
    expect(book.find(at(9, 9, { session: undefined }))?.origin).toBe('any')
    expect(new ReplyBook([rule({ session: 's1', turn: 1 }, 'x')]).find(at(1, 1, { session: 's2' }))).toBe(
      undefined,
    )
  })

  it('matches the conversation, its kind, and text of the system prompt and the latest user message', () => {
    const book = new ReplyBook([
      rule({ kind: 'side' }, 'side'),
      rule({ conversation: 'title' }, 'title'),
      rule({ system: 'Generate a concise title' }, 'title prompt'),
      rule({ user: 'README' }, 'about the readme'),
    ])
    expect(book.find(at(1, 1, { kind: 'main' }))).toBeUndefined()
    expect(book.find(at(1, 1, { kind: 'side' }))?.origin).toBe('side')
    expect(book.find(at(1, 1, { kind: 'side', conversation: 'title' }))?.origin).toBe('title')
    expect(book.find(at(1, 1, { systemText: 'You are… Generate a concise title.' }))?.origin).toBe(
      'title prompt',
    )
    expect(book.find(at(1, 1, { lastUserText: 'What does README.md say?' }))?.origin).toBe('about the readme')
    expect(book.find(at(1, 1, { lastUserText: 'Something else' }))).toBeUndefined()
  })

  it('weighs each field above all the lighter ones together, in the order the note gives', () => {
    const weights = Object.values(SPECIFICITY)
    for (const [index, weight] of weights.entries())
      expect(weight).toBeGreaterThan(weights.slice(index + 1).reduce((sum, next) => sum + next, 0))
    const book = new ReplyBook([
      rule({ user: 'README', turn: 1, step: 1 }, 'user, turn and step'),
      rule({ system: 'agent' }, 'system'),
      rule({ kind: 'main' }, 'kind'),
    ])
    const facts = { kind: 'main' as const, systemText: 'You are an agent.', lastUserText: 'README?' }
    expect(book.find(at(1, 1, facts))?.origin).toBe('kind')
    expect(book.find(at(1, 1, { ...facts, kind: 'side' }))?.origin).toBe('system')
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

  it('skips a rule calling a tool the request does not declare: the next rule, or the default, answers', () => {
    const book = repliesFromRules([
      { turn: 1, step: 1, tools: [{ name: 'write_file' }] },
      { turn: 1, text: 'No write_file here.' },
    ])
    expect(decideReply(request({}), undefined, book)).toMatchObject({
      blocks: [{ type: 'text', text: 'No write_file here.' }],
      source: 'replies',
    })
    // A side request that declares no tools (a title generator) gets the default's text.
    const calls = repliesFromRules([{ turn: 1, step: 1, tools: [{ name: 'read_file' }] }])
    expect(decideReply(request({}, { tools: [] }), undefined, calls)).toMatchObject({
      blocks: [{ type: 'text', text: DEFAULT_TEXT }],
      source: 'default',
    })
  })

  it('skips a call without a name where no tool is declared, or where the tool choice is none', () => {
    const book = repliesFromRules([{ tools: [{}] }])
    expect(decideReply(request({}), undefined, book)).toMatchObject({
      blocks: [{ type: 'tool-call', name: 'read_file' }],
      source: 'replies',
    })
    expect(decideReply(request({}, { tools: [] }), undefined, book).source).toBe('default')
    expect(decideReply(request({}, { toolChoice: { kind: 'none' } }), undefined, book)).toMatchObject({
      blocks: [{ type: 'text', text: DEFAULT_TEXT }],
      source: 'default',
    })
  })

  it('answers JSON of the request schema when it scripts neither text nor tools; its own text wins', () => {
    const jsonOutput = { schema: { type: 'object', properties: { ok: { type: 'boolean' } } } }
    const book = repliesFromRules([
      { turn: 1, reasoning: 16 },
      { turn: 2, text: 'not JSON, as written' },
    ])
    const first = decideReply(request({}, { tools: [], jsonOutput }), undefined, book)
    expect(first).toMatchObject({ blocks: [{ type: 'text', text: '{"ok":false}' }], source: 'replies' })
    expect(decideReply(request({ turn: 2 }, { jsonOutput }), undefined, book).blocks).toEqual([
      { type: 'text', text: 'not JSON, as written' },
    ])
  })
})

describe('the default answer to a compaction request', () => {
  it('is a summary in tags, never a tool call, though the request declares tools', () => {
    const reply = defaultReply({
      session: 's',
      kind: 'compaction',
      position: { turn: 1, step: 1, after: 'user' },
      tools: [{ name: 'Read', schema: { type: 'object' } }],
      toolChoice: { kind: 'auto' },
    })
    expect(reply.blocks).toEqual([{ type: 'text', text: DEFAULT_SUMMARY }])
  })
})
