import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseReplies, readReplies, repliesFromRules } from './reply-file.ts'

/** The message of the error `body` throws. */
function errorOf(body: () => unknown): string {
  try {
    body()
  } catch (error) {
    return (error as Error).message
  }
  return 'no error'
}

describe('a replies file in JSON Lines', () => {
  it('holds one rule per line, blank lines skipped, each knowing its line', () => {
    const book = parseReplies(
      [
        '{"session": "*", "turn": 1, "tools": [{"name": "read_file"}]}',
        '',
        '{"turn": 1, "step": 2, "text": {"tokens": 200}, "reasoning": {"tokens": 64, "redacted": true}}',
        '{"session": "billing", "refusal": "I cannot share that."}',
      ].join('\n'),
      'replies.jsonl',
    )
    expect(book.rules.map((rule) => rule.origin)).toEqual([
      'replies.jsonl:1',
      'replies.jsonl:3',
      'replies.jsonl:4',
    ])
    expect(book.rules[1]).toMatchObject({
      session: '*',
      turn: 1,
      step: 2,
      answer: { text: { kind: 'tokens', tokens: 200 }, reasoning: { redacted: true } },
    })
    expect(book.rules[2]?.answer).toMatchObject({ stop: 'refusal', text: { text: 'I cannot share that.' } })
  })

  it('reads what a rule matches beside session, turn and step: conversation, kind, system and user text', () => {
    const book = parseReplies(
      '{"kind": "side", "conversation": "title", "system": "Generate a title", "user": "README", "text": "Notes"}',
      'replies.jsonl',
    )
    expect(book.rules[0]).toEqual({
      session: '*',
      kind: 'side',
      conversation: 'title',
      system: 'Generate a title',
      user: 'README',
      answer: { tools: [], text: { kind: 'literal', text: 'Notes' } },
      origin: 'replies.jsonl:1',
    })
  })

  it.each([
    ['{"turn": 0, "text": "x"}', 'replies.jsonl:1: turn: must be a whole number of at least 1, not 0'],
    [
      '{"txt": "x"}',
      'replies.jsonl:1: txt: unknown field (known: session, conversation, kind, system, user, turn, step, text, tools, reasoning, stop, refusal)',
    ],
    [
      '{"stop": "length"}',
      'replies.jsonl:1: stop: must be one of end, tool-use, max-tokens, content-filter, refusal, pause-turn ("length" is "max-tokens" here)',
    ],
    ['{"turn": 2}', 'replies.jsonl:1: says nothing to answer: give text, tools, reasoning, stop or refusal'],
    [
      '{"refusal": "no", "text": "yes"}',
      'replies.jsonl:1: refusal: is the whole answer: it takes no "text" or "tools"',
    ],
    [
      '{"tools": [{"name": "a", "arguments": 3}]}',
      'replies.jsonl:1: tools[0].arguments: must be an object, or a string sent as written',
    ],
    [
      '{"reasoning": {"tokens": 5, "text": "x"}}',
      'replies.jsonl:1: reasoning: needs exactly one of "tokens" and "text"',
    ],
    [
      '{"text": {"tokens": -1}}',
      'replies.jsonl:1: text.tokens: must be a whole number of at least 0, not -1',
    ],
    ['{"text": "x"', 'replies.jsonl:1: not JSON'],
    [
      '{"kind": "title", "text": "x"}',
      'replies.jsonl:1: kind: must be one of main, subagent, side, compaction, not "title"',
    ],
    [
      '{"system": "", "text": "x"}',
      'replies.jsonl:1: system: must not be empty (leave the field out to match any text)',
    ],
    ['{"user": 3, "text": "x"}', 'replies.jsonl:1: user: must be a string, not 3'],
    ['{"conversation": ["a"], "text": "x"}', 'replies.jsonl:1: conversation: must be a string, not ["a"]'],
  ])('rejects %s naming the line and the field', (line, message) => {
    expect(errorOf(() => parseReplies(line, 'replies.jsonl'))).toContain(message)
  })
})

describe('a replies file in JSON', () => {
  it('is an array of rules, each error naming the line its rule starts on', () => {
    const text = [
      '[',
      '  {"turn": 1, "text": "hi"},',
      '  {',
      '    "turn": 2,',
      '    "stop": "sideways"',
      '  }',
      ']',
    ].join('\n')
    expect(errorOf(() => parseReplies(text, 'replies.json'))).toMatch(
      /^replies\.json:3: stop: must be one of/,
    )
    expect(parseReplies('[{"text": "a"}, {"text": "b"}]', 'replies.json').rules).toHaveLength(2)
  })

  it('must be an array', () => {
    expect(errorOf(() => parseReplies('{"text": "a"}', 'replies.json'))).toBe(
      'replies.json: must be a JSON array of rules',
    )
  })
})

describe('replies given in code', () => {
  it('are validated as a file is, named by their index', () => {
    expect(errorOf(() => repliesFromRules([{ text: 'ok' }, { step: 0, text: 'x' }]))).toBe(
      'replies[1]: step: must be a whole number of at least 1, not 0',
    )
  })
})

describe('reading a replies file', () => {
  it('is an input error when the file cannot be read', () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'cachelab-replies-')), 'missing.jsonl')
    expect(errorOf(() => readReplies(missing))).toBe(
      `cannot read --replies ${missing}: no such file (from ${process.cwd()}): check the path, or write the replies file (docs/providers.md, What the mock model answers)`,
    )
  })

  it('reads what it parses', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'cachelab-replies-')), 'r.jsonl')
    writeFileSync(path, '{"text": "hello"}\n')
    expect(readReplies(path).rules[0]?.origin).toBe(`${path}:1`)
  })
})
