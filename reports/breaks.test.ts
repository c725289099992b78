import { describe, expect, it } from 'vitest'
import { breakLine, breakLines, breaksOf } from './breaks.ts'
import { breaksCsv } from './csv.ts'
import { parseBreaksCsv } from './parse.ts'
import { CAPTURED_SESSION, capturedAgent, sessionRows } from './testing.ts'

const rows = sessionRows({ scenario: 'idle-ttl', variant: 'ttl-5m', model: 'claude-sonnet-4-6' }, [
  { write: 6000, uncached: 3 },
  { read: 6000, write: 200, uncached: 3, turn: 2 },
  { failed: true, turn: 3 },
  {
    write: 6300,
    uncached: 3,
    turn: 4,
    breakCause: 'ttl-expired',
    providerCause: 'ttl-expired',
    providerLost: 6000,
  },
  {
    write: 6400,
    uncached: 3,
    turn: 5,
    lost: 6300,
    breakCause: 'tools-changed',
    breakNode: 'tools[2]',
    breakEventSeq: 41,
  },
])

describe('breaks', () => {
  it('keeps the successful requests with a client-side or provider-side cause, in row order', () => {
    const found = breaksOf(rows)
    expect(found.map((entry) => [entry.turn, entry.cause, entry.providerCause])).toEqual([
      [4, 'ttl-expired', 'ttl-expired'],
      [5, 'tools-changed', undefined],
    ])
    expect(found[1]).toMatchObject({ node: 'tools[2]', eventSeq: 41, lostTokens: 6300 })
    expect(found[1]?.lostUsd).toBeCloseTo((6300 * 2.7) / 1_000_000, 10)
  })

  it('reads back from breaks.csv as written', () => {
    const found = breaksOf(rows)
    expect(parseBreaksCsv(breaksCsv(found), 'breaks.csv')).toEqual(
      found.map((entry) => ({
        ...entry,
        lostUsd: Number(entry.lostUsd.toFixed(8)),
        providerLostUsd: Number(entry.providerLostUsd.toFixed(8)),
      })),
    )
  })

  it('refuses a file that is not a breaks.csv, naming what it lacks', () => {
    expect(() => parseBreaksCsv('scenario,variant\nx,y\n', 'x.csv')).toThrow(
      /x\.csv:1: not a cachelab breaks\.csv \(lacks provider,/,
    )
  })

  it('reads as one line: session, turn.step, cause, node, event, tokens and dollars on each side', () => {
    const [expired, changed] = breaksOf(rows)
    if (expired === undefined || changed === undefined) throw new Error('two breaks expected')
    expect(breakLine(changed)).toBe(
      'idle-ttl · ttl-5m · anthropic 5.5: tools-changed at tools[2] (event 41), 6,300 tokens lost ($0.0170)',
    )
    expect(breakLine(expired)).toBe(
      'idle-ttl · ttl-5m · anthropic 4.4: ttl-expired on the provider side, 6,000 tokens ($0.0162); a 1h TTL would have cost $0.0135 more in writes',
    )
  })
})

describe('a break for memory', () => {
  it("says that serve's memory budget dropped a live entry, and what to do about it", () => {
    const evicted = sessionRows({ scenario: 'capture', variant: 's1', model: 'claude-sonnet-4-6' }, [
      { write: 6000, uncached: 3 },
      {
        write: 6100,
        uncached: 3,
        turn: 2,
        breakCause: 'evicted',
        providerCause: 'evicted',
        providerLost: 6000,
      },
    ])
    const [entry] = breaksOf(evicted)
    if (entry === undefined) throw new Error('a break expected')
    expect(breakLine(entry)).toBe(
      "capture · s1 · anthropic 2.2: evicted on the provider side, 6,000 tokens ($0.0162); serve's --memory-budget dropped it while live: a larger budget keeps it",
    )
  })
})

describe('breaks of a captured agent', () => {
  const found = breaksOf(capturedAgent())

  it('name the two models of a switch in the break line, and nothing of models where it kept one', () => {
    const [switched, tools] = found
    if (switched === undefined || tools === undefined) throw new Error('two breaks expected')
    expect(switched.previousModel).toBe('claude-opus-5-5')
    expect(breakLine(switched)).toBe(
      `capture · ${CAPTURED_SESSION} · anthropic 2.1: config-changed at model (claude-opus-5-5 → claude-haiku-4-5), 0 tokens lost ($0.0000)`,
    )
    expect(tools.previousModel).toBeUndefined()
    expect(breakLine(tools)).toMatch(/3\.1: tools-changed at tools\[0\], 10,150 tokens lost/)
  })

  it('name a conversation’s kind where it is not main', () => {
    const rows = sessionRows(
      { scenario: 'capture', variant: 's1.subagent-7', session: 's1', conversationKind: 'subagent' },
      [{ write: 5000 }, { write: 5100, lost: 5000, breakCause: 'system-replace', breakNode: 'system[0]' }],
    )
    const [entry] = breaksOf(rows)
    if (entry === undefined) throw new Error('a break expected')
    expect(breakLine(entry)).toMatch(
      /^capture · s1\.subagent-7 · anthropic \(subagent\) 1\.2: system-replace/,
    )
  })

  it('keep session, kind and the previous model through breaks.csv, appended after loop', () => {
    const rows = [
      ...sessionRows(
        { scenario: 'capture', variant: 's1.subagent-7', session: 's1', conversationKind: 'subagent' },
        [{ write: 5000 }, { write: 5100, lost: 5000, breakCause: 'system-replace', breakNode: 'system[0]' }],
      ),
      ...capturedAgent(),
    ]
    const text = breaksCsv(breaksOf(rows))
    expect(text.split('\n')[0]).toMatch(
      /,cache_read_tokens,loop,session,conversation_kind,previous_model,change_node,change_kind,/,
    )
    expect(parseBreaksCsv(text, 'breaks.csv')).toEqual(
      breaksOf(rows).map((entry) => ({
        ...entry,
        lostUsd: Number(entry.lostUsd.toFixed(8)),
        providerLostUsd: Number(entry.providerLostUsd.toFixed(8)),
      })),
    )
  })

  it('read a breaks.csv written before those columns', () => {
    const text = breaksCsv(found)
    const header = text.split('\n')[0] ?? ''
    const old = text
      .split('\n')
      .map((line) =>
        line
          .split(',')
          .slice(0, header.split(',').indexOf('loop') + 1)
          .join(','),
      )
      .join('\n')
    const [first] = parseBreaksCsv(old, 'breaks.csv')
    expect(first).toMatchObject({ cause: 'config-changed', node: 'model' })
    expect(first?.previousModel).toBeUndefined()
  })
})

describe('what changed at a break', () => {
  const dated = sessionRows({ scenario: 'capture', variant: 'c-1', model: 'claude-sonnet-4-6' }, [
    { write: 6000 },
    { read: 6000, write: 100 },
    {
      write: 6200,
      lost: 6000,
      breakCause: 'system-replace',
      breakNode: 'system[0]',
      breakChange: {
        node: 'system[0]',
        kind: 'inserted',
        after: 'Today is 2026-12-07.\n',
      },
    },
    {
      read: 6200,
      write: 50,
      lost: 100,
      breakCause: 'message-edited',
      breakNode: 'messages[1]',
      breakChange: {
        node: 'messages[1]',
        kind: 'replaced',
        context: '  "path": ',
        before: '"a.ts",\n  "line": 1',
        after: '"b.ts",\n  "line": 1',
      },
    },
  ])

  it('goes through breaks.csv as it was, its spaces, quotes and line breaks kept', () => {
    const found = breaksOf(dated)
    expect(found.map((entry) => entry.change?.kind)).toEqual(['inserted', 'replaced'])
    const [read] = parseBreaksCsv(breaksCsv(found), 'breaks.csv').slice(1)
    expect(read?.change).toEqual(found[1]?.change)
    expect(parseBreaksCsv(breaksCsv(found), 'breaks.csv')[0]?.change).toEqual({
      node: 'system[0]',
      kind: 'inserted',
      after: 'Today is 2026-12-07.\n',
    })
  })

  it('is printed under its break line as a test runner prints a difference', () => {
    const [inserted, replaced] = breaksOf(dated)
    if (inserted === undefined || replaced === undefined) throw new Error('two breaks expected')
    expect(breakLines(inserted)).toEqual([
      `  ${breakLine(inserted)}`,
      '      system[0]: inserted at its start',
      '      + "Today is 2026-12-07.\\n"',
    ])
    expect(breakLines(replaced).slice(1)).toEqual([
      '      messages[1]: replaced after "  \\"path\\": "',
      '      - "\\"a.ts\\",\\n  \\"line\\": 1"',
      '      + "\\"b.ts\\",\\n  \\"line\\": 1"',
    ])
  })
})
