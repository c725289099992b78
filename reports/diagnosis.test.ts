import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { agreementOf, diagnosisSummary, expectedReasons, tallyDiagnoses } from './diagnosis.ts'
import { stepRow } from './testing.ts'

describe("how cachelab's causes map to the providers' reasons", () => {
  it('by the part of the request the break is in, the cause refining it', () => {
    expect(expectedReasons('anthropic', 'system-replace', 'system[0]')).toEqual(['system_changed'])
    expect(expectedReasons('openai', 'system-replace', 'system[0]')).toEqual(['input_changed'])
    expect(expectedReasons('anthropic', 'tools-changed', 'tools[2]')).toEqual(['tools_changed'])
    expect(expectedReasons('anthropic', 'compaction-summary', 'tools[0]')).toEqual(['tools_changed'])
    expect(expectedReasons('anthropic', 'config-changed', 'model')).toEqual(['model_changed'])
    expect(expectedReasons('openai', 'config-changed', 'model')).toEqual(['model_changed'])
    expect(expectedReasons('anthropic', 'message-edited', 'messages[3].1')).toEqual(['messages_changed'])
    expect(expectedReasons('openai', 'history-summarized', 'input[1]')).toEqual([
      'input_changed',
      'context_compacted',
    ])
    expect(expectedReasons('anthropic', 'config-changed', 'messages[0]')).toEqual(['unavailable'])
    expect(expectedReasons('openai', 'config-changed', 'input[0]')).toContain('reasoning_effort_changed')
  })

  it('with nothing changed where only the provider side cost the read, or nothing broke', () => {
    expect(expectedReasons('anthropic', undefined, undefined)).toEqual(['none'])
    expect(expectedReasons('anthropic', 'ttl-expired', undefined)).toEqual(['none'])
    expect(expectedReasons('openai', 'ttl-expired', undefined)).toEqual(['cache_hit'])
    expect(expectedReasons('openai', 'routing-miss', undefined)).toEqual(['cache_hit'])
  })

  it('OpenAI calling a change that cost nothing a cache_hit', () => {
    expect(expectedReasons('openai', 'after-slot', 'input[7]', 0)).toEqual(['input_changed', 'cache_hit'])
    expect(expectedReasons('anthropic', 'after-slot', 'messages[7].0', 0)).toEqual(['messages_changed'])
  })

  it('is the table docs/reports.md shows', () => {
    const docs = readFileSync(new URL('../docs/reports.md', import.meta.url), 'utf8')
    const rows: Array<[cause: string, node: string, anthropic: string, openai: string]> = [
      ['no break', '—', expectedReasons('anthropic', undefined, undefined)[0] ?? '', 'cache_hit'],
      ['`config-changed`', '`model`', 'model_changed', 'model_changed'],
      ['`tools-changed`', '`tools[i]`', 'tools_changed', 'tools_changed'],
      ['`system-replace`', '`system[i]`', 'system_changed', 'input_changed'],
    ]
    // The table's rows as biome pads them, read cell by cell.
    const shown = docs
      .split('\n')
      .filter((line) => line.startsWith('|'))
      .map((line) =>
        line
          .split('|')
          .slice(1, -1)
          .map((cell) => cell.trim())
          .join(' | '),
      )
    for (const [cause, node, anthropic, openai] of rows)
      expect(shown).toContain(`${cause} | ${node} | \`${anthropic}\` | \`${openai}\``)
  })
})

describe("a row's provider reason beside cachelab's cause", () => {
  const row = (reason: string, sketch: Parameters<typeof stepRow>[0] = {}) =>
    stepRow({ read: 100, uncached: 10, providerDiagnosis: { reason, missedTokens: 4000 }, ...sketch })

  it('agrees, disagrees, or compared nothing', () => {
    const edited = { breakCause: 'system-replace', breakNode: 'system[0]', lost: 4000 } as const
    expect(agreementOf(row('system_changed', edited))).toBe('agrees')
    expect(agreementOf(row('messages_changed', edited))).toBe('disagrees')
    expect(agreementOf(row('none'))).toBe('agrees')
    expect(agreementOf(row('system_changed'))).toBe('disagrees')
    expect(agreementOf(row('previous_message_not_found', edited))).toBe('no-comparison')
    expect(agreementOf(row('pending'))).toBe('no-comparison')
    expect(agreementOf(stepRow())).toBeUndefined()
    // Only the Claude API and OpenAI Responses answer diagnostics.
    expect(agreementOf(row('none', { provider: 'openai-chat' }))).toBeUndefined()
  })

  it('is tallied for the run summary, each disagreement named', () => {
    const rows = [
      row('none'),
      row('tools_changed', { breakCause: 'tools-changed', breakNode: 'tools[1]', lost: 10 }),
      row('system_changed', { scenario: 'prompt-change', variant: 'in-history', turn: 3 }),
      row('previous_message_not_found'),
      stepRow(),
    ]
    const tally = tallyDiagnoses(rows)
    expect(tally).toMatchObject({ diagnosed: 4, agree: 2, noComparison: 1 })
    expect(diagnosisSummary(rows)).toEqual([
      "provider diagnostics: 4 requests diagnosed, 2 agree with cachelab's cause, 1 disagree, 1 compared nothing",
      '  DISAGREES prompt-change.in-history anthropic 3.1: cachelab no break; provider system_changed (4000 tokens missed)',
    ])
    expect(diagnosisSummary([stepRow()])).toEqual([])
  })
})
