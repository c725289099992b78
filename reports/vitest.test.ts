import { describe, expect, it } from 'vitest'
import { summarize } from './summary.ts'
import { sessionRows } from './testing.ts'
import type { SummaryRow } from './types.ts'
import { cachelabMatchers } from './vitest.ts'

expect.extend(cachelabMatchers)

// Cold 1,000 uncached; then 900 read of 1,000 and 800 read of 1,000: warm ratio 1,700 / 2,000 = 85%.
const rows = sessionRows({ scenario: 'append-only' }, [
  { uncached: 1000 },
  { read: 900, uncached: 100 },
  { failed: true },
  {
    read: 800,
    uncached: 200,
    lost: 100,
    breakCause: 'tools-changed',
    breakNode: 'tools',
    breakEventSeq: 7,
  },
])

/** The message of the assertion `check` fails with. */
function failure(check: () => void): string {
  try {
    check()
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
  throw new Error('expected the assertion to fail')
}

describe('toHoldHitRatio', () => {
  it('passes when the token-weighted warm hit ratio reaches the minimum', () => {
    expect(rows).toHoldHitRatio(0.85)
    expect(rows).not.toHoldHitRatio(0.86)
  })

  it('leaves out the cold first request', () => {
    // Counting the cold request would give 1,700 / 3,000 = 57%; a cold request that read everything, 88%.
    const coldHit = rows.map((row) => (row.cold ? { ...row, cacheReadTokens: 1000, uncachedTokens: 0 } : row))
    expect(coldHit).not.toHoldHitRatio(0.86)
  })

  it('states the ratio and its denominator when it fails', () => {
    expect(failure(() => expect(rows).toHoldHitRatio(0.9))).toBe(
      "expected a warm hit ratio of at least 90.00%, got 85.00% (1,700 cache-read of 2,000 warm input tokens, token-weighted over 2 successful requests after each session's first)",
    )
  })

  it('fails, saying why, when there is no warm request', () => {
    expect(failure(() => expect(rows.slice(0, 1)).toHoldHitRatio(0))).toMatch(
      /there is none: the denominator, warm input tokens .* is 0/,
    )
  })

  it('rejects a minimum given as a percentage', () => {
    expect(failure(() => expect(rows).toHoldHitRatio(85))).toMatch(/takes a ratio from 0 to 1/)
  })

  it('rejects what is not step rows', () => {
    expect(failure(() => expect([{ hello: 1 }]).toHoldHitRatio(0.5))).toMatch(/expects StepRow\[\]/)
  })
})

describe('toHaveNoBreakAbove', () => {
  // Turn 3 rewrites the system prompt (2,114 tokens lost); turn 4 waits out the cache (500 lost on the provider side).
  const broken = sessionRows({ scenario: 'prompt-change', variant: 'unsupported' }, [
    { turn: 1, step: 1, uncached: 3000 },
    { turn: 2, step: 1, read: 3000, uncached: 100 },
    {
      turn: 3,
      step: 1,
      uncached: 3200,
      lost: 2114,
      breakCause: 'system-replace',
      breakNode: 'messages[0]',
      breakEventSeq: 12,
    },
    { turn: 4, step: 1, read: 2700, uncached: 600, providerCause: 'ttl-expired', providerLost: 500 },
  ])

  it('passes when every break costs less than the limit', () => {
    expect(broken).toHaveNoBreakAbove(2115)
    expect(broken.slice(0, 2)).toHaveNoBreakAbove(1)
  })

  it('fails at a break that reaches the limit, naming its session, step, cause, node and lost tokens', () => {
    expect(failure(() => expect(broken).toHaveNoBreakAbove(2114))).toBe(
      'expected no break of 2,114 tokens or more (lost plus provider-side), but one request lost that much:\n' +
        '  prompt-change · unsupported · anthropic 3.1: system-replace at messages[0] (event 12), 2,114 tokens lost ($0.0057)',
    )
  })

  it('shows what changed beneath a break whose change is known, as a test runner shows a difference', () => {
    const dated = broken.map((row) =>
      row.turn === 3
        ? {
            ...row,
            breakChange: {
              node: 'messages[0]',
              kind: 'inserted' as const,
              after: 'Today is 2026-12-07. ',
            },
          }
        : row,
    )
    expect(failure(() => expect(dated).toHaveNoBreakAbove(2114))).toBe(
      'expected no break of 2,114 tokens or more (lost plus provider-side), but one request lost that much:\n' +
        '  prompt-change · unsupported · anthropic 3.1: system-replace at messages[0] (event 12), 2,114 tokens lost ($0.0057)\n' +
        '      messages[0]: inserted at its start\n' +
        '      + "Today is 2026-12-07. "',
    )
    expect(failure(() => expect(dated[2]).toExtendPrevious())).toContain(
      '\n    messages[0]: inserted at its start\n    + "Today is 2026-12-07. "',
    )
  })

  it('counts tokens lost on the provider side, and lists every request above the limit', () => {
    const message = failure(() => expect(broken).toHaveNoBreakAbove(500))
    expect(message).toMatch(/but 2 requests lost that much/)
    expect(message).toContain(
      'prompt-change · unsupported · anthropic 4.1: ttl-expired on the provider side, 500 tokens',
    )
  })

  it('says so when negated and nothing broke', () => {
    expect(failure(() => expect(broken.slice(0, 2)).not.toHaveNoBreakAbove(1))).toBe(
      'expected a break of 1 token or more, but no request of the 2 rows broke',
    )
  })

  it('rejects a limit that is not a positive token count', () => {
    expect(failure(() => expect(broken).toHaveNoBreakAbove(0))).toMatch(/takes a positive token count/)
  })
})

describe('toMatchBaseline', () => {
  const baseline = summarize(rows)
  const raised = (points: number): SummaryRow[] =>
    baseline.map((row) => ({ ...row, hitRatioWarm: (row.hitRatioWarm ?? 0) + points / 100 }))

  it('passes rows equal to the baseline, as step rows or as their summary', () => {
    expect(rows).toMatchBaseline(baseline)
    expect(baseline).toMatchBaseline(baseline)
  })

  it('fails with the regression table when the baseline is 5 points higher', () => {
    const message = failure(() => expect(rows).toMatchBaseline(raised(5)))
    expect(message).toMatch(/^expected the rows to hold the baseline:\n/)
    expect(message).toContain(
      'FAIL  append-only · default · anthropic: warm hit ratio 90.00% → 85.00% (-5.00 pp)',
    )
  })

  it('respects the tolerance in percentage points', () => {
    expect(rows).toMatchBaseline(raised(5), { tolerancePP: 5 })
    expect(rows).not.toMatchBaseline(raised(5), { tolerancePP: 4.9 })
  })

  it('fails when a baseline session is missing', () => {
    const other = baseline.map((row) => ({ ...row, scenario: 'tool-churn' }))
    expect(failure(() => expect(rows).toMatchBaseline(other))).toMatch(
      /tool-churn · default · anthropic: missing from the run/,
    )
  })
})

describe('toExtendPrevious', () => {
  it('passes a request without a break cause', () => {
    expect(rows[1]).toExtendPrevious()
  })

  it('fails a broken request, naming the cause, node and event', () => {
    expect(rows[3]).not.toExtendPrevious()
    expect(failure(() => expect(rows[3]).toExtendPrevious())).toBe(
      'expected request 1.4 of append-only · default · anthropic to extend the previous request, but it broke: tools-changed at tools (event 7), 100 tokens lost',
    )
  })
})
