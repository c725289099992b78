import { describe, expect, it } from 'vitest'
import { summarize } from './summary.ts'
import { summaryTable } from './table.ts'
import { stepRow } from './testing.ts'

describe('the summary table printed after a run', () => {
  it('counts successful requests and failed attempts apart, as summary.csv does', () => {
    const rows = [
      stepRow({ turn: 1, read: 0, write: 1000, cold: true }),
      stepRow({ turn: 2, failed: true }),
      stepRow({ turn: 2, attempt: 1, read: 1000, uncached: 50 }),
      stepRow({ turn: 3, read: 1050, uncached: 50 }),
    ]
    const [summary] = summarize(rows)
    expect(summary).toMatchObject({ requests: 3, failedAttempts: 1 })
    const [header, , line] = summaryTable(summarize(rows)).split('\n')
    const cells = (text: string | undefined) => (text ?? '').split(/\s{2,}/)
    const byColumn = Object.fromEntries(cells(header).map((title, index) => [title, cells(line)[index]]))
    expect(byColumn).toMatchObject({ model: 'test-model', requests: '3', 'failed attempts': '1' })
  })
})
