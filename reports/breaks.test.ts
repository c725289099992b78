import { describe, expect, it } from 'vitest'
import { breakLine, breaksOf } from './breaks.ts'
import { breaksCsv } from './csv.ts'
import { parseBreaksCsv } from './parse.ts'
import { sessionRows } from './testing.ts'

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
