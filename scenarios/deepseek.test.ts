import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockProviders, startMockProviders } from '../providers/index.ts'
import { stepsCsv } from '../reports/csv.ts'
import { appendOnly } from './append-only.ts'
import { runSession } from './run.ts'

let mock: MockProviders

beforeAll(() => {
  mock = startMockProviders()
})
afterAll(() => mock.close())

const plan = { scenario: appendOnly, variant: { name: 'default' }, provider: 'deepseek' as const }

describe('append-only on deepseek, simulated end to end', () => {
  for (const stream of [false, true]) {
    it(`reads cache on every step after the first, with disjoint buckets (${stream ? 'streamed' : 'not streamed'})`, async () => {
      const { rows } = await runSession(plan, { runId: 'test', stream, mock })
      expect(rows.length).toBeGreaterThan(10)
      const [first, ...rest] = rows
      expect(first?.provider).toBe('deepseek')
      expect(first?.cacheReadTokens).toBe(0)
      for (const row of rows) {
        expect(row.inputTokens).toBe(row.cacheReadTokens + row.cacheWriteTokens + row.uncachedTokens)
      }
      for (const row of rest) expect(row.hitRatio).toBeGreaterThan(0.9)
      expect(rows.every((row) => row.breakCause === undefined)).toBe(true)
    })
  }

  it('gives the same rows streamed and not streamed', async () => {
    const plain = await runSession(plan, { runId: 'test', stream: false, mock })
    const streamed = await runSession(plan, { runId: 'test', stream: true, mock })
    expect(stepsCsv(streamed.rows)).toBe(stepsCsv(plain.rows))
  })
})
