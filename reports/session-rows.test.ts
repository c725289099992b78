import { describe, expect, it } from 'vitest'
import { renderReport } from './html.ts'
import { RunRows, SessionRows, WHOLE_ROWS_UP_TO } from './session-rows.ts'
import { summarize } from './summary.ts'
import { type StepSketch, sessionRows } from './testing.ts'
import type { StepRow } from './types.ts'

/** A long session with something notable now and then: breaks, a failure, idle gaps, model switches. */
function eventful(length: number, seed: number): StepRow[] {
  let state = seed >>> 0
  const next = () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    return state / 2 ** 32
  }
  let at = 0
  return sessionRows(
    { scenario: 'long-session', provider: 'anthropic' },
    Array.from({ length }, (_, index): StepSketch => {
      const roll = next()
      at += roll < 0.004 ? 400 : 3
      const model = index > length / 2 && index < (length * 3) / 4 ? 'claude-haiku-4-5' : undefined
      const base = { turn: index + 1, step: 1, at, ...(model !== undefined ? { model } : {}) }
      if (roll > 0.997) return { ...base, uncached: 9000, lost: 8000, breakCause: 'tools-changed' }
      if (roll > 0.995) return { ...base, failed: true }
      // Lone quiet requests between two notable ones: the rule that keeps such a request whole is tested.
      if (index % 997 === 0 || index % 997 === 6)
        return { ...base, uncached: 9000, breakCause: 'system-replace' }
      return { ...base, read: 9000 + Math.round(roll * 100), uncached: 20, write: Math.round(roll * 50) }
    }),
  )
}

/** The page of a run, its rows kept whole up to `wholeUpTo`. */
function page(rows: readonly StepRow[], wholeUpTo: number): string {
  return renderReport({
    rows: RunRows.of(rows, { wholeUpTo }),
    summaries: summarize(rows),
    runId: 'sim-0001',
  })
}

describe('SessionRows', () => {
  it('draws the same page whether every row is kept whole or only those the page can show alone', () => {
    for (const [length, seed] of [
      [WHOLE_ROWS_UP_TO + 1, 1],
      [6_000, 2],
      [12_000, 3],
    ] as const) {
      const rows = eventful(length, seed)
      expect(page(rows, WHOLE_ROWS_UP_TO)).toBe(page(rows, Number.POSITIVE_INFINITY))
    }
  })

  it('keeps a long quiet session’s middle rows as numbers only, its ends and breaks whole', () => {
    const rows = sessionRows(
      {},
      Array.from({ length: 10_000 }, (_, index) =>
        index === 5_000
          ? { turn: index + 1, step: 1, at: index * 5, uncached: 9000, breakCause: 'tools-changed' as const }
          : { turn: index + 1, step: 1, at: index * 5, read: 1000, uncached: 10 },
      ),
    )
    const session = SessionRows.of(rows)
    expect(session.count).toBe(10_000)
    for (const index of [0, 2, 4_998, 5_000, 5_002, 9_997, 9_999])
      expect(session.row(index)).toBe(rows[index])
    for (const index of [3, 2_500, 4_997, 5_003, 9_000])
      expect(() => session.row(index)).toThrow(`request ${index} of the session was not kept whole`)
    // Numbers of every request are still there: the sums over a quiet stretch.
    const span = session.span(10, 4_990)
    expect(span).toMatchObject({
      count: 4_980,
      ok: 4_980,
      read: 4_980_000,
      uncached: 49_800,
      clientBreaks: [],
    })
    expect(span.first).toEqual({ turn: 11, step: 1, attempt: 0 })
    expect(session.breakRows).toEqual([rows[5_000]])
  })

  it('counts what the page says of a session as its rows do', () => {
    const rows = eventful(3_000, 4)
    const session = SessionRows.of(rows)
    const ok = rows.filter((row) => row.ok)
    const warm = ok.filter((row) => !row.cold)
    expect(session.failed).toBe(rows.length - ok.length)
    expect(session.warm).toEqual({
      read: warm.reduce((sum, row) => sum + row.cacheReadTokens, 0),
      input: warm.reduce((sum, row) => sum + row.inputTokens, 0),
    })
    expect(session.breakRows).toEqual(
      ok.filter((row) => row.breakCause !== undefined || row.providerCause !== undefined),
    )
    const base = rows[0]?.model
    expect(session.modelsText()).toBe(`${base} → claude-haiku-4-5 → ${base}`)
    expect(session.models).toEqual([base, 'claude-haiku-4-5'])
  })
})
