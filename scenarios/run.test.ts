import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readSessionLog } from '../harness/store.ts'
import { PROVIDER_IDS } from '../harness/types.ts'
import { type MockProviders, startMockProviders } from '../providers/index.ts'
import { stepsCsv } from '../reports/csv.ts'
import { STEP_COLUMNS } from '../reports/types.ts'
import { appendOnly } from './append-only.ts'
import { promptChange } from './prompt-change.ts'
import { runSession } from './run.ts'

let mock: MockProviders

beforeAll(() => {
  mock = startMockProviders()
})
afterAll(() => mock.close())

describe('append-only, simulated end to end', () => {
  it.each(PROVIDER_IDS)(
    'reads cache on every step after the first on %s, with disjoint buckets',
    async (provider) => {
      const { rows } = await runSession(
        { scenario: appendOnly, variant: { name: 'default' }, provider },
        { runId: 'test', stream: false, mock },
      )
      expect(rows.length).toBeGreaterThan(10)
      const [first, ...rest] = rows
      expect(first?.provider).toBe(provider)
      expect(first?.headerReason).toBe('initial')
      expect(first?.cacheReadTokens).toBe(0)
      // Anthropic (and Bedrock's Claude) report cache writes; the others fill their caches without reporting them.
      if (provider === 'anthropic' || provider === 'bedrock')
        expect(first?.cacheWriteTokens).toBeGreaterThan(0)
      else expect(rows.every((row) => row.cacheWriteTokens === 0)).toBe(true)
      for (const row of rows) {
        expect(row.inputTokens).toBe(row.cacheReadTokens + row.cacheWriteTokens + row.uncachedTokens)
      }
      for (const row of rest) expect(row.hitRatio).toBeGreaterThan(0.9)
      expect(rows.every((row) => row.breakCause === undefined)).toBe(true)
    },
  )

  it('writes the session log it ran from', async () => {
    const sessionsDir = mkdtempSync(join(tmpdir(), 'cachelab-run-'))
    const { events } = await runSession(
      { scenario: appendOnly, variant: { name: 'default' }, provider: 'openai-chat' },
      { runId: 'test', stream: false, mock, sessionsDir },
    )
    const log = readSessionLog(join(sessionsDir, 'append-only.default.openai-chat.jsonl'))
    expect(log.torn).toBeUndefined()
    expect(log.events).toEqual(events)
  })

  it('writes steps.csv with exactly the contract columns', async () => {
    const { rows } = await runSession(
      { scenario: appendOnly, variant: { name: 'default' }, provider: 'openai-chat' },
      { runId: 'test', stream: true, mock },
    )
    const csv = stepsCsv(rows)
    expect(csv.split('\n')[0]).toBe(STEP_COLUMNS.join(','))
    expect(csv.trimEnd().split('\n')).toHaveLength(rows.length + 1)
  })

  it.each(PROVIDER_IDS)('gives the same rows streamed and not streamed on %s', async (provider) => {
    const plan = { scenario: appendOnly, variant: { name: 'default' }, provider }
    const plain = await runSession(plan, { runId: 'test', stream: false, mock })
    const streamed = await runSession(plan, { runId: 'test', stream: true, mock })
    expect(plain.rows.length).toBeGreaterThan(10)
    expect(stepsCsv(streamed.rows)).toBe(stepsCsv(plain.rows))
    // The answers parsed back from the wire, streamed or not, are the script the log holds.
    expect(JSON.stringify(streamed.events.filter((event) => event.type === 'assistant/message'))).toBe(
      JSON.stringify(plain.events.filter((event) => event.type === 'assistant/message')),
    )
  })

  it('is byte-identical across runs', async () => {
    const plan = { scenario: appendOnly, variant: { name: 'default' }, provider: 'openai-chat' as const }
    const one = mkdtempSync(join(tmpdir(), 'cachelab-a-'))
    const two = mkdtempSync(join(tmpdir(), 'cachelab-b-'))
    const a = await runSession(plan, { runId: 'test', stream: false, mock, sessionsDir: one })
    const b = await runSession(plan, { runId: 'test', stream: false, mock, sessionsDir: two })
    expect(stepsCsv(a.rows)).toBe(stepsCsv(b.rows))
    const file = 'append-only.default.openai-chat.jsonl'
    expect(readFileSync(join(one, file), 'utf8')).toBe(readFileSync(join(two, file), 'utf8'))
  })
})

describe('a variant its model cannot serve', () => {
  it('is refused before any request, naming the model and what the variant needs', async () => {
    const plan = {
      scenario: promptChange,
      variant: { name: 'in-history', policies: { route: 'in-history' as const } },
      provider: 'anthropic' as const,
      model: 'claude-sonnet-4-6',
    }
    await expect(runSession(plan, { runId: 'test', stream: false, mock })).rejects.toThrow(
      /prompt-change\.in-history\.anthropic is not applicable on claude-sonnet-4-6: it needs the in-history system-prompt route/,
    )
  })
})
