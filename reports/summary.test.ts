import { describe, expect, it } from 'vitest'
import { summaryCsv } from './csv.ts'
import { parseSummaryCsv } from './parse.ts'
import { sessionTotal, summarize } from './summary.ts'
import { CAPTURED_SESSION, capturedAgent } from './testing.ts'

const key = { scenario: 'capture', variant: CAPTURED_SESSION, provider: 'anthropic' } as const
const conversations = summarize(capturedAgent()).filter(
  (row) => row.variant === CAPTURED_SESSION || row.session === CAPTURED_SESSION,
)

describe('sessionTotal', () => {
  it('sums the conversations of a session, labelled as the session', () => {
    const total = sessionTotal(key, conversations)
    const sum = (pick: (row: (typeof conversations)[number]) => number) =>
      conversations.reduce((value, row) => value + pick(row), 0)
    expect(conversations).toHaveLength(4)
    expect(total).toMatchObject({
      variant: CAPTURED_SESSION,
      requests: 9,
      lostTokens: 10_150,
      breaks: 2,
      inputTokens: sum((row) => row.inputTokens),
      agent: 'claude-code/2.1.328',
    })
    expect(total.costUsd).toBeCloseTo(
      sum((row) => row.costUsd),
      12,
    )
    expect(total.session).toBeUndefined()
    expect(total.conversationKind).toBeUndefined()
  })

  it('takes the warm hit ratio from the summed warm tokens, never the mean of the ratios', () => {
    const total = sessionTotal(key, conversations)
    expect(total.warmCacheReadTokens).toBe(25_100)
    expect(total.warmInputTokens).toBe(45_606)
    expect(total.hitRatioWarm).toBeCloseTo(25_100 / 45_606, 12)
    expect(total.hitRatioAll).toBeCloseTo(total.cacheReadTokens / total.inputTokens, 12)
  })

  it('leaves the warm hit ratio unknown for summaries read back from summary.csv, which lack the sums', () => {
    const read = parseSummaryCsv(summaryCsv(conversations), 'summary.csv')
    expect(read[0]?.hitRatioWarm).toBeDefined()
    expect(sessionTotal(key, read).hitRatioWarm).toBeUndefined()
  })
})
