import { describe, expect, it } from 'vitest'
import { compareSummaries, comparisonTable } from './compare.ts'
import { summarize } from './summary.ts'
import { sessionRows } from './testing.ts'

const warm = (read: number, uncached: number) => [{ uncached: 1000 }, { read, uncached }]
const runA = summarize([
  ...sessionRows({ scenario: 'append-only' }, warm(900, 100)),
  ...sessionRows({ scenario: 'system-change' }, warm(500, 500)),
])
const runB = summarize([
  ...sessionRows({ scenario: 'append-only' }, warm(950, 50)),
  ...sessionRows({ scenario: 'tool-churn' }, warm(100, 900)),
])

describe('compareSummaries', () => {
  const entries = compareSummaries(runA, runB)

  it('pairs sessions by scenario, variant and provider, A’s first, then those only B has', () => {
    expect(
      entries.map((entry) => [entry.key.scenario, entry.a !== undefined, entry.b !== undefined]),
    ).toEqual([
      ['append-only', true, true],
      ['system-change', true, false],
      ['tool-churn', false, true],
    ])
  })

  it('gives B minus A in percentage points of warm hit ratio and in dollars', () => {
    const [appendOnly] = entries
    expect(appendOnly?.hitDeltaPoints).toBeCloseTo(5, 9)
    // 1,000 uncached at $3/M, then 900 read at $0.30/M + 100 uncached (A) or 950 read + 50 uncached (B).
    expect(appendOnly?.costDeltaUsd).toBeCloseTo(0.003435 - 0.00357, 12)
  })

  it('leaves the deltas undefined for a session on one side only', () => {
    expect(entries[1]).toMatchObject({ hitDeltaPoints: undefined, costDeltaUsd: undefined })
  })
})

describe('comparisonTable', () => {
  const table = comparisonTable(compareSummaries(runA, runB))
  const line = (scenario: string) => table.split('\n').find((text) => text.startsWith(scenario)) ?? ''

  it('shows both hit ratios and the signed delta side by side', () => {
    expect(line('append-only')).toMatch(/90\.00%\s+95\.00%\s+\+5\.00/)
  })

  it('marks the rows present on one side only', () => {
    expect(line('system-change')).toMatch(/50\.00%\s+-\s+-.*only in A$/)
    expect(line('tool-churn')).toMatch(/-\s+10\.00%\s+-.*only in B$/)
  })

  it('says beside a session how many of its requests a side answered without usage', () => {
    const unreported = summarize(
      sessionRows({ scenario: 'append-only' }, [{ uncached: 1000 }, { unreported: { predictedRead: 900 } }]),
    )
    const text = comparisonTable(compareSummaries(runA, unreported))
    expect(text.split('\n').find((each) => each.startsWith('append-only'))).toMatch(
      /usage not reported for 1 of 2 in B$/,
    )
  })

  it('states that the ratio is token-weighted over warm requests', () => {
    expect(table).toContain('token-weighted')
  })
})
