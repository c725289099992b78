// The providers' own cache diagnostics on the scenario matrix: every Anthropic and OpenAI Responses session
// asks the mock for them on every request after the first (through the official SDKs, as a keyed run
// does), and on every request the mock's reason, computed by the simulator, is the one the table in
// reports/diagnosis.ts (docs/reports.md) maps cachelab's cause at its node to.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ProviderId } from '../harness/types.ts'
import { type MockProviders, startMockProviders } from '../providers/index.ts'
import { disagreementLine, tallyDiagnoses } from '../reports/diagnosis.ts'
import type { StepRow } from '../reports/types.ts'
import { SCENARIOS } from './index.ts'
import { planMatrix, runSession } from './run.ts'

let mock: MockProviders
beforeAll(() => {
  mock = startMockProviders()
})
afterAll(() => mock.close())

/** Every session of the matrix on a provider, its rows, asking for the diagnostics. */
async function matrixRows(
  provider: ProviderId,
  model: string | undefined,
  stream: boolean,
): Promise<StepRow[]> {
  const { plans, notApplicable } = planMatrix(SCENARIOS, [provider], model === undefined ? {} : { model })
  expect(notApplicable).toEqual([])
  const rows: StepRow[] = []
  for (const plan of plans) {
    const session = await runSession(plan, { runId: 'diagnosis', stream, mock, diagnostics: true })
    rows.push(...session.rows)
  }
  return rows
}

describe.each([
  // Streamed: the diagnostics read from message_start.
  { provider: 'anthropic' as const, model: undefined, stream: true },
  // Diagnostics are GPT-5.6's and later's: the sessions run on it.
  { provider: 'openai-responses' as const, model: 'gpt-5.6-sol', stream: false },
])('the provider reasons on the $provider matrix', ({ provider, model, stream }) => {
  let rows: StepRow[] = []
  beforeAll(async () => {
    rows = await matrixRows(provider, model, stream)
  })

  it('come on every answered request after a session’s first, and on none before', () => {
    const answered = rows.filter((row) => row.ok)
    expect(answered.filter((row) => row.cold && row.providerDiagnosis !== undefined)).toEqual([])
    expect(answered.filter((row) => !row.cold && row.providerDiagnosis === undefined)).toEqual([])
  })

  it("agree with cachelab's cause at every break and every extension: 0 disagreements", () => {
    const tally = tallyDiagnoses(rows)
    const breaks = rows.filter((row) => row.breakCause !== undefined)
    expect(breaks.length).toBeGreaterThan(50)
    expect(tally.disagreements.map(disagreementLine)).toEqual([])
    expect(tally.noComparison).toBe(0)
    expect(tally.agree).toBe(rows.filter((row) => row.ok && !row.cold).length)
    // The breaks span the matrix's kinds, each with the reason the table gives.
    const pairs = new Set(breaks.map((row) => `${row.breakCause} → ${row.providerDiagnosis?.reason}`))
    const expected =
      provider === 'anthropic'
        ? [
            'system-replace → system_changed',
            'tools-changed → tools_changed',
            'compaction-summary → tools_changed',
            'compaction-summary → messages_changed',
            'after-slot → messages_changed',
            'tool-result-prune → messages_changed',
            'image-offload → messages_changed',
            'prefix-drift → messages_changed',
            'ttl-expired → none',
            'lookback-miss → none',
          ]
        : [
            'system-replace → input_changed',
            'tools-changed → tools_changed',
            'compaction-summary → tools_changed',
            'compaction-summary → input_changed',
            'after-slot → input_changed',
            'tool-result-prune → input_changed',
            'image-offload → input_changed',
            'prefix-drift → input_changed',
            'ttl-expired → cache_hit',
          ]
    for (const pair of expected) expect([...pairs]).toContain(pair)
  })

  it('give missed tokens where they name a change, never more than what the compared request cached', () => {
    for (const row of rows) {
      const diagnosis = row.providerDiagnosis
      if (diagnosis === undefined || ['none', 'cache_hit'].includes(diagnosis.reason)) continue
      expect(diagnosis.missedTokens, `${row.scenario}.${row.variant} ${row.turn}.${row.step}`).toBeDefined()
    }
  })
})
