import { describe, expect, it } from 'vitest'
import { renderReport } from './html.ts'
import { notesUnderTable, sessionNotes } from './session-notes.ts'
import { RunRows } from './session-rows.ts'
import { summarize } from './summary.ts'
import { sessionRows } from './testing.ts'

describe("a session's notes", () => {
  it('say that nothing was marked for caching, and what one mark would have cost', () => {
    const [summary] = summarize(
      sessionRows({ scenario: 'capture', variant: 'c-1', model: 'claude-sonnet-4-6' }, [
        { uncached: 3000 },
        { uncached: 3200, turn: 2 },
      ]).map((row) => ({ ...row, markedCostUsd: row.costUsd / 2 })),
    )
    expect(summary?.nothingMarked).toEqual({
      requests: 2,
      costUsd: summary?.costUsd,
      markedCostUsd: (summary?.costUsd ?? 0) / 2,
    })
    expect(sessionNotes(summary as NonNullable<typeof summary>)).toEqual([
      `nothing marked for caching on 2 of 2 requests: $${(summary?.costUsd ?? 0).toFixed(4)}, $${((summary?.costUsd ?? 0) / 2).toFixed(4)} with a cache mark`,
    ])
    expect(notesUnderTable(summary === undefined ? [] : [summary])).toEqual([
      'notes:',
      '  capture · c-1 · anthropic',
      expect.stringContaining('    nothing marked for caching on 2 of 2 requests'),
    ])
  })

  it("stand under report.html's summary table, linked to the session, not only in its closed section", () => {
    const rows = sessionRows({ scenario: 'capture', variant: 'c-1', model: 'claude-sonnet-4-6' }, [
      { uncached: 3000 },
      { uncached: 3200, turn: 2 },
    ]).map((row) => ({ ...row, markedCostUsd: row.costUsd / 2 }))
    const page = renderReport({ rows: RunRows.of(rows), summaries: summarize(rows), runId: 'capture-1' })
    const summary = page.slice(
      page.indexOf('<section id="summary">'),
      page.indexOf('</section>', page.indexOf('<section id="summary">')),
    )
    expect(summary).toMatch(
      /<ul class="notes"><li><a href="#session-\d+">capture · c-1 · anthropic<\/a>: nothing marked for caching on 2 of 2 requests: \$[\d.]+, \$[\d.]+ with a cache mark<\/li><\/ul>/,
    )
  })

  it("say that no prompt reached the model's caching minimum, only when none did", () => {
    const short = summarize(
      sessionRows({ scenario: 's', variant: 'short', model: 'claude-sonnet-4-6' }, [
        { uncached: 300 },
        { uncached: 600, turn: 2 },
      ]),
    )[0]
    expect(short?.belowMinimum).toEqual({ requests: 2, minTokens: 1024 })
    expect(sessionNotes(short as NonNullable<typeof short>)).toEqual([
      "no prompt reached the model's caching minimum (1,024 tokens): nothing was cacheable",
    ])
    const growing = summarize(
      sessionRows({ scenario: 's', variant: 'growing', model: 'claude-sonnet-4-6' }, [
        { uncached: 300 },
        { write: 2000, uncached: 3, turn: 2 },
      ]),
    )[0]
    expect(growing?.belowMinimum).toBeUndefined()
    expect(sessionNotes(growing as NonNullable<typeof growing>)).toEqual([])
  })
})
