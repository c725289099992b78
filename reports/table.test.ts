import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { breaksOf } from './breaks.ts'
import { summarize } from './summary.ts'
import { breaksDigest, CONVERSATIONS_WIDTH, SUMMARY_WIDTH, summaryTable, wantsColour } from './table.ts'
import { CAPTURED_SESSION, capturedAgent, sessionRows, stepRow } from './testing.ts'
import type { SummaryRow } from './types.ts'

const ESCAPE = '\u001b['

/** Summaries of a clean session and a broken one, with the matrix's longest names. */
function matrix(): SummaryRow[] {
  const clean = sessionRows({ scenario: 'long-session', provider: 'openai-responses' }, [
    { uncached: 40_000 },
    ...Array.from({ length: 1439 }, () => ({ read: 40_000, uncached: 40 })),
  ])
  const broken = sessionRows(
    { scenario: 'series-start-unchanged', variant: 'automatic-block-rule', provider: 'openai-responses' },
    [
      { uncached: 6000 },
      { uncached: 200_000, lost: 181_869, breakCause: 'compaction-summary', turn: 111, step: 12 },
    ],
  )
  return summarize([...clean, ...broken])
}

describe('the summary table printed after a run', () => {
  it('counts requests answered without usage as requests, shows "-" for what none reported, and says how many', () => {
    const rows = [
      ...sessionRows({ scenario: 'capture', variant: 'gateway-upstream' }, [
        { unreported: { predictedRead: 0 } },
        { unreported: { predictedRead: 1000 } },
      ]),
      ...sessionRows({ scenario: 'capture', variant: 'some-reported' }, [
        { write: 1000, uncached: 10 },
        { unreported: { predictedRead: 1000 } },
      ]),
    ]
    const summaries = summarize(rows)
    expect(summaries.map((row) => [row.requests, row.failedAttempts, row.usageNotReported])).toEqual([
      [2, 0, 2],
      [2, 0, 1],
    ])
    const lines = summaryTable(summaries).split('\n')
    expect(lines[4]).toMatch(/^ {2}gateway-upstream\s+anthropic\s+2\s+-\s+-\s+-\s+-\s+-\s+-$/)
    expect(lines[5]).toMatch(/^ {2}some-reported\s+anthropic\s+2\s+-\s+0\s+0\.0000\s+0\.0038\s+0\s+-$/)
    expect(lines.slice(6)).toEqual([
      'usage not reported for 3 of 4 requests: the sums leave them out ("-" where a session reported none)',
      '  capture · gateway-upstream · anthropic: 2 of 2',
      '  capture · some-reported · anthropic: 1 of 2',
    ])
  })

  it('counts successful requests and failed attempts apart, as summary.csv does', () => {
    const rows = [
      stepRow({ turn: 1, read: 0, write: 1000, cold: true }),
      stepRow({ turn: 2, failed: true }),
      stepRow({ turn: 2, attempt: 1, read: 1000, uncached: 50 }),
      stepRow({ turn: 3, read: 1050, uncached: 50 }),
    ]
    const [summary] = summarize(rows)
    expect(summary).toMatchObject({ requests: 3, failedAttempts: 1 })
    const lines = summaryTable(summarize(rows)).split('\n')
    expect(lines[3]).toBe('append-only')
    expect(lines[4]).toMatch(/^ {2}default\s+anthropic\s+3\+1\s+\d+\.\d\d%/)
  })

  it('fits 100 columns with the longest names and numbers of the matrix', () => {
    const table = summaryTable(matrix())
    for (const line of table.split('\n')) expect(line.length).toBeLessThanOrEqual(SUMMARY_WIDTH)
    expect(table).toContain('series-start-unchanged\n  automatic-block-rule  openai-responses')
    expect(table).toMatch(/openai-responses\s+2\s+0\.00%\s+181,869\s+\d+\.\d{4}\s+\d+\.\d{4}\s+1\s+-$/m)
  })

  it('cuts what does not fit with an ellipsis rather than overflowing', () => {
    const [summary] = matrix()
    const long = {
      ...(summary as SummaryRow),
      variant: 'a-variant-name-far-longer-than-any-column-should-ever-be-here',
    }
    const table = summaryTable([long], { width: 90 })
    for (const line of table.split('\n')) expect(line.length).toBeLessThanOrEqual(90)
    expect(table).toContain('…')
  })

  it('prints plain text unless asked for colour', () => {
    expect(summaryTable(matrix())).not.toContain(ESCAPE)
  })

  it('colours breaks yellow and failing claims red, leaving the text the same', () => {
    const [clean, broken] = matrix()
    const failing = { ...(clean as SummaryRow), claimsHeld: 1, claimsFailed: 1 }
    const summaries = [failing, broken as SummaryRow]
    const coloured = summaryTable(summaries, { colour: true })
    expect(coloured).toContain(`${ESCAPE}33m181,869`)
    expect(coloured).toContain(`${ESCAPE}1;31m1 fail`)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: removing the escapes leaves the plain table.
    expect(coloured.replace(/\u001b\[[\d;]*m/g, '')).toBe(summaryTable(summaries))
  })
})

describe('the costliest breaks under the table', () => {
  const rows = sessionRows({ scenario: 'prompt-change', variant: 'unsupported' }, [
    { uncached: 6000 },
    { uncached: 6200, lost: 6000, breakCause: 'system-replace', breakNode: 'system', turn: 5 },
    { uncached: 6400, lost: 6200, breakCause: 'tools-changed', breakNode: 'tools', turn: 9 },
    { write: 6600, providerCause: 'ttl-expired', breakCause: 'ttl-expired', providerLost: 6400, turn: 12 },
  ])

  it('lists them worst first in dollars, cause and cost before the session', () => {
    const lines = breaksDigest(breaksOf(rows)).split('\n')
    expect(lines[0]).toBe('breaks, costliest first (3):')
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^ {2}\$0\.\d{4} {2}tools-changed at 9\.3, 6,200 tokens: prompt-change · unsupported · anthropic$/,
      ),
    )
    const dollars = lines.slice(1).map((line) => Number(line.match(/\$(\d+\.\d+)/)?.[1]))
    expect(dollars).toHaveLength(3)
    expect(dollars).toEqual([...dollars].sort((left, right) => right - left))
  })

  it('keeps to the limit and the width, saying where the rest are', () => {
    const digest = breaksDigest(breaksOf(rows), { limit: 1, width: 40 })
    expect(digest.split('\n')[0]).toBe('costliest breaks (1 of 3, all in breaks.csv):')
    for (const line of digest.split('\n').slice(1)) expect(line.length).toBeLessThanOrEqual(40)
  })

  it('says nothing for a run without breaks', () => {
    expect(breaksDigest([])).toBe('')
  })
})

describe('wantsColour', () => {
  it('colours a terminal only', () => {
    expect(wantsColour({ isTTY: true }, {})).toBe(true)
    expect(wantsColour({ isTTY: false }, {})).toBe(false)
    expect(wantsColour({}, {})).toBe(false)
  })

  it('respects NO_COLOR set to anything but the empty string', () => {
    expect(wantsColour({ isTTY: true }, { NO_COLOR: '1' })).toBe(false)
    expect(wantsColour({ isTTY: true }, { NO_COLOR: '' })).toBe(true)
  })
})

describe('the summary table of a captured agent’s sessions', () => {
  const rows = capturedAgent()
  const summaries = summarize(rows)
  const lines = summaryTable(summaries).split('\n')
  const lineOf = (label: string) => lines.find((line) => line.startsWith(label)) ?? ''

  it('lists a session’s conversations under it, main first, then subagents, side requests and compactions', () => {
    const labels = lines.slice(3).map((line) => line.match(/^ *\S+/)?.[0])
    expect(labels).toEqual([
      'capture',
      `  ${CAPTURED_SESSION}`,
      '    main',
      '    subagent-a3c29f83d9214c246',
      '    side-title-5e1f0a2b',
      '    compaction-1',
      '  fdf5a279-6f6b-4ccc-b408-7bed182d60ab',
    ])
  })

  it('sums the session’s conversations on its line, the warm hit ratio from the summed tokens', () => {
    // Warm reads over warm inputs: (20,100 + 5,000) / (40,556 + 5,050) = 55.04%; the average of the
    // conversations' own ratios (49.56% and 99.01%) would be 74.28%.
    const session = lineOf(`  ${CAPTURED_SESSION}`)
    expect(session).toMatch(/anthropic\s+9\s+55\.04%\s+10,150\s+\d\.\d{4}\s+\d\.\d{4}\s+2\s+-$/)
    expect(lineOf('    main')).toMatch(/anthropic\s+5\s+49\.56%\s+10,150\s/)
    expect(lineOf('    subagent-a3c29f83d9214c246')).toMatch(/anthropic\s+2\s+99\.01%\s+0\s/)
    const cost = (line: string) => Number(line.trim().split(/\s+/)[6])
    const conversations = ['    main', '    subagent-', '    side-', '    compaction-'].map(lineOf)
    const summed = conversations.reduce((total, line) => total + cost(line), 0)
    expect(cost(session)).toBeCloseTo(summed, 3)
  })

  it('keeps a session of one conversation to one line named by its variant', () => {
    expect(lineOf('  fdf5a279-6f6b-4ccc-b408-7bed182d60ab')).toMatch(/anthropic\s+2\s+99\.58%/)
  })

  it('fits 120 columns with a session id in full, and cuts it with an ellipsis at a narrower width', () => {
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(CONVERSATIONS_WIDTH)
    const narrow = summaryTable(summaries, { width: 90 }).split('\n')
    for (const line of narrow) expect(line.length).toBeLessThanOrEqual(90)
    expect(narrow).toContainEqual(expect.stringMatching(/^ {2}15fe7312-[\w-]+…\s+anthropic\s+9\s/))
  })

  it('prints a run without sessions as it always did, at 100 columns', () => {
    const ordinary = matrix()
    expect(summaryTable(ordinary)).toBe(summaryTable(ordinary, { width: SUMMARY_WIDTH }))
  })
})

describe("docs/serve.md's example of a captured agent's summary", () => {
  it("is the table this fixture's rows print", () => {
    const readme = readFileSync(new URL('../docs/serve.md', import.meta.url), 'utf8')
    const printed = summaryTable(summarize(capturedAgent())).split('\n').slice(3).join('\n')
    expect(readme).toContain(`\`\`\`\n${printed}\n\`\`\``)
  })
})
