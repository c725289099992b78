import { describe, expect, it } from 'vitest'
import { CachelabError } from '../harness/errors.ts'
import { stepsCsv, summaryCsv } from './csv.ts'
import { parseReportCsv, parseStepsCsv, parseSummaryCsv } from './parse.ts'
import { summarize } from './summary.ts'
import { sessionRows } from './testing.ts'

const rows = [
  ...sessionRows({ scenario: 'append-only' }, [
    { failed: true },
    { uncached: 6000, attempt: 1, step: 1 },
    { read: 5900, write: 300, uncached: 100 },
  ]),
  ...sessionRows({ scenario: 'system-change', provider: 'openai-chat', model: 'gpt-5.4' }, [
    { uncached: 6000 },
    {
      read: 1024,
      uncached: 5400,
      lost: 5000,
      breakCause: 'system-replace',
      breakNode: 'messages[0]',
      breakEventSeq: 9,
    },
  ]),
]
const stepsText = stepsCsv(rows)
const summaryText = summaryCsv(summarize(rows))

/** The input error `action` throws, or a failure when it throws none. */
function inputError(action: () => unknown): CachelabError {
  try {
    action()
  } catch (error) {
    if (error instanceof CachelabError && error.kind === 'input') return error
    throw error
  }
  throw new Error('expected an input error')
}

describe('parseStepsCsv', () => {
  it('reads back what stepsCsv wrote, byte for byte when written again', () => {
    expect(stepsCsv(parseStepsCsv(stepsText, 'steps.csv'))).toBe(stepsText)
  })

  it('infers failed attempts and each session’s cold first success, as rows.ts marks them', () => {
    const parsed = parseStepsCsv(stepsText, 'steps.csv')
    expect(parsed.map((row) => [row.ok, row.cold])).toEqual(rows.map((row) => [row.ok, row.cold]))
  })

  it('summarizes to the same hit ratios and lost tokens as the rows it came from', () => {
    const fromCsv = summarize(parseStepsCsv(stepsText, 'steps.csv'))
    const fromRows = summarize(rows)
    expect(
      fromCsv.map(({ hitRatioWarm, hitRatioAll, lostTokens, requests, failedAttempts }) => ({
        hitRatioWarm,
        hitRatioAll,
        lostTokens,
        requests,
        failedAttempts,
      })),
    ).toEqual(
      fromRows.map(({ hitRatioWarm, hitRatioAll, lostTokens, requests, failedAttempts }) => ({
        hitRatioWarm,
        hitRatioAll,
        lostTokens,
        requests,
        failedAttempts,
      })),
    )
  })

  it('prices the lost tokens of a catalog model to get the ideal cost', () => {
    const [, broken] = parseStepsCsv(stepsText, 'steps.csv').filter((row) => row.scenario === 'system-change')
    expect(broken?.idealCostUsd).toBeLessThan(broken?.costUsd ?? 0)
  })
})

describe('parseSummaryCsv', () => {
  it('reads back what summaryCsv wrote, byte for byte when written again', () => {
    expect(summaryCsv(parseSummaryCsv(summaryText, 'summary.csv'))).toBe(summaryText)
  })

  it('rejects a second row for the same session, naming both lines', () => {
    const [header, first] = summaryText.split('\n')
    const error = inputError(() => parseSummaryCsv(`${header}\n${first}\n${first}\n`, 'base/summary.csv'))
    expect(error.message).toBe(
      'base/summary.csv:3: a second row for append-only · default · anthropic (the first is on line 2)',
    )
  })
})

describe('parseReportCsv', () => {
  it('tells steps from summary by the header', () => {
    expect(parseReportCsv(stepsText, 'a.csv').kind).toBe('steps')
    expect(parseReportCsv(summaryText, 'b.csv').kind).toBe('summary')
  })

  it('accepts the columns in another order', () => {
    const [header = '', ...lines] = summaryText.trimEnd().split('\n')
    const swap = (line: string) => {
      const cells = line.split(',')
      return [cells[1], cells[0], ...cells.slice(2)].join(',')
    }
    const reordered = [swap(header), ...lines.map(swap)].join('\n')
    expect(parseSummaryCsv(reordered, 'b.csv')).toEqual(parseSummaryCsv(summaryText, 'b.csv'))
  })

  it.each([
    ['an empty file', '', 'x.csv: empty file, expected a header line'],
    ['an unrelated CSV', 'name,age\nada,36\n', 'x.csv:1: not a cachelab steps.csv or summary.csv'],
    [
      'a header lacking a column',
      stepsText.replace('latency_ms', 'latency'),
      'x.csv:1: steps.csv header lacks column latency_ms',
    ],
    [
      'a bad integer',
      stepsText.replace(',6000,', ',6k,'),
      'x.csv:3: column input_tokens: expected an integer, got "6k"',
    ],
    [
      'an unknown provider',
      summaryText.replace('anthropic', 'ACME'),
      'x.csv:2: column provider: unknown value "ACME"',
    ],
    [
      'an unknown break cause',
      stepsText.replace('system-replace', 'gremlins'),
      'x.csv:6: column break_cause: unknown value "gremlins"',
    ],
    [
      'buckets that do not add up',
      stepsText.replace(',6000,0,0,6000,', ',6001,0,0,6000,'),
      'x.csv:3: column input_tokens: 6001 is not',
    ],
    [
      'a ratio above 1',
      summaryText.replace(/,0\.9\d+,/, ',1.5,'),
      'x.csv:2: column hit_ratio_warm: expected a ratio between 0 and 1',
    ],
    ['a short record', `${summaryText}a,b,c\n`, 'x.csv:4: not valid CSV'],
    ['an unclosed quote', `${summaryText}"a,b\n`, 'x.csv:4: not valid CSV'],
  ])('reports %s with the file and line', (_name, text, message) => {
    expect(inputError(() => parseReportCsv(text, 'x.csv')).message).toContain(message)
  })

  it("writes the provider's own diagnosis in the last two columns and reads it back; a file before them still reads", () => {
    const diagnosed = sessionRows({ scenario: 'keyed', provider: 'anthropic' }, [
      { uncached: 6000 },
      { read: 5900, uncached: 100, providerDiagnosis: { reason: 'none' } },
      {
        uncached: 6100,
        lost: 5900,
        breakCause: 'system-replace',
        breakNode: 'system[0]',
        providerDiagnosis: { reason: 'system_changed', missedTokens: 5912 },
      },
    ])
    const text = stepsCsv(diagnosed)
    const [header = '', , , last = ''] = text.split('\n')
    expect(header.endsWith(',provider_diagnosis,provider_diagnosis_missed_tokens')).toBe(true)
    expect(last.endsWith(',system_changed,5912')).toBe(true)
    const parsed = parseStepsCsv(text, 'steps.csv')
    expect(parsed.map((row) => row.providerDiagnosis)).toEqual([
      undefined,
      { reason: 'none' },
      { reason: 'system_changed', missedTokens: 5912 },
    ])
    expect(stepsCsv(parsed)).toBe(text)
    // steps.csv as written before the two columns: every line without its last two cells.
    const older = text
      .trimEnd()
      .split('\n')
      .map((line) => line.split(',').slice(0, -2).join(','))
      .join('\n')
    expect(parseStepsCsv(older, 'old.csv').map((row) => row.providerDiagnosis)).toEqual([
      undefined,
      undefined,
      undefined,
    ])
  })

  it('names the other kind when a command expected one', () => {
    expect(inputError(() => parseStepsCsv(summaryText, 'x.csv')).message).toBe(
      'x.csv: expected a steps.csv, got a summary.csv',
    )
  })
})

describe('requests answered without usage, written and read back', () => {
  const answered = [
    ...sessionRows(
      { scenario: 'capture', variant: 'unreported', provider: 'openai-chat', model: 'gpt-4.1' },
      [{ unreported: { predictedRead: 0 } }, { unreported: { predictedRead: 1536 } }],
    ),
    ...sessionRows({ scenario: 'capture', variant: 'mixed', provider: 'openai-chat', model: 'gpt-4.1' }, [
      { uncached: 2000 },
      { unreported: { predictedRead: 1536 } },
      { read: 1536, uncached: 100 },
    ]),
  ]
  const steps = stepsCsv(answered)
  const summary = summaryCsv(summarize(answered))

  it('leave every number of such a request empty in steps.csv, the simulator’s read beside them', () => {
    const [, first] = steps.split('\n')
    const cells = Object.fromEntries(
      steps
        .split('\n')[0]
        ?.split(',')
        .map((column, index) => [column, first?.split(',')[index]]) ?? [],
    )
    expect(cells).toMatchObject({
      input_tokens: '',
      cache_read_tokens: '',
      uncached_tokens: '',
      output_tokens: '',
      hit_ratio: '',
      lost_tokens: '',
      cost_usd: '',
      predicted_cache_read_tokens: '0',
    })
  })

  it('read back as requests whose usage was not reported, not as failed attempts', () => {
    const parsed = parseStepsCsv(steps, 'steps.csv')
    expect(parsed.map((row) => [row.ok, row.cold, row.usageNotReported])).toEqual(
      answered.map((row) => [row.ok, row.cold, row.usageNotReported]),
    )
    expect(stepsCsv(parsed)).toBe(steps)
  })

  it('count them in summary.csv, and leave the sums of a session that reported nothing empty', () => {
    const [header = '', onlyUnreported = '', mixed = ''] = summary.split('\n')
    const columns = header.split(',')
    const cell = (line: string, column: string) => line.split(',')[columns.indexOf(column)]
    expect([cell(onlyUnreported, 'requests'), cell(onlyUnreported, 'failed_attempts')]).toEqual(['2', '0'])
    expect(cell(onlyUnreported, 'usage_not_reported')).toBe('2')
    for (const column of ['input_tokens', 'cache_read_tokens', 'cost_usd', 'lost_tokens', 'hit_ratio_warm'])
      expect(cell(onlyUnreported, column)).toBe('')
    expect([cell(mixed, 'requests'), cell(mixed, 'usage_not_reported'), cell(mixed, 'input_tokens')]).toEqual(
      ['3', '1', '3636'],
    )
    expect(summaryCsv(parseSummaryCsv(summary, 'summary.csv'))).toBe(summary)
  })
})
