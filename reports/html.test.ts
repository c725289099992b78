import { describe, expect, it } from 'vitest'
import { renderReport } from './html.ts'
import { summarize } from './summary.ts'
import { sessionRows } from './testing.ts'
import type { StepRow } from './types.ts'

const appendOnly = sessionRows({ scenario: 'append-only', provider: 'anthropic' }, [
  { uncached: 6000 },
  { read: 5900, write: 300, uncached: 100 },
  { failed: true, turn: 2, step: 1 },
  { read: 6200, write: 200, uncached: 50, turn: 2, step: 1, attempt: 1 },
])
const broken = sessionRows({ scenario: 'system-change', variant: 'surface', provider: 'openai-chat' }, [
  { uncached: 6000 },
  { read: 5900, uncached: 300 },
  {
    read: 1024,
    uncached: 5400,
    lost: 5000,
    breakCause: 'system-replace',
    breakNode: 'messages[0]',
    breakEventSeq: 12,
  },
])

function report(rows: readonly StepRow[], runId = 'sim-0001'): string {
  return renderReport({ rows, summaries: summarize(rows), runId })
}

describe('renderReport', () => {
  const page = report([...appendOnly, ...broken])

  it('is a complete HTML page titled with the run id', () => {
    expect(page.startsWith('<!doctype html>')).toBe(true)
    expect(page).toContain('<title>cachelab report: sim-0001</title>')
    expect(page.trimEnd().endsWith('</html>')).toBe(true)
  })

  it('has a section, a chart and a collapsible step table for every session', () => {
    expect(page).toContain('append-only · default · anthropic')
    expect(page).toContain('system-change · surface · openai-chat')
    expect(page.match(/<article class="session"/g)).toHaveLength(2)
    expect(page.match(/<svg class="chart/g)).toHaveLength(2)
    expect(page.match(/<details>/g)).toHaveLength(2)
  })

  it('draws one bar group per row, failed attempts distinctly', () => {
    expect(page.match(/<g class="bar[ "]/g)).toHaveLength(appendOnly.length + broken.length)
    expect(page.match(/<g class="bar failed"/g)).toHaveLength(1)
  })

  it('states the hit ratio denominators in the summary table', () => {
    // Warm requests of append-only: 6,300 + 6,450 input tokens; all: 6,000 more for the cold first one.
    expect(page).toContain('of 12,750')
    expect(page).toContain('of 18,750')
    expect(page).toContain('of warm input tokens')
  })

  it('marks a break with its cause as a tooltip and a visible label', () => {
    const marker = page.match(/<g class="break-marker"[^>]*><title>([^<]*)<\/title>/)
    expect(marker?.[1]).toBe('break at 1.3: system-replace at messages[0] (event 12), 5,000 tokens lost')
    expect(page).toMatch(/<text class="break-label"[^>]*>system-replace<\/text>/)
    expect(page.match(/<g class="break-marker"/g)).toHaveLength(1)
  })

  it('escapes text from the rows', () => {
    const hostile = sessionRows({ scenario: '<script>alert("x")</script>&', variant: "o'clock" }, [
      { uncached: 100 },
      { read: 90, uncached: 20 },
    ])
    const escaped = report(hostile, '<b>run</b>')
    expect(escaped).not.toContain('<script>')
    expect(escaped).not.toContain('<b>run</b>')
    expect(escaped).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;')
    expect(escaped).toContain('o&#39;clock')
  })

  it('is byte-identical for identical input', () => {
    const rows = [...appendOnly, ...broken]
    expect(report(rows.map((row) => ({ ...row })))).toBe(page)
  })

  it('works offline: no URL, no script, no external stylesheet or font', () => {
    expect(page).not.toMatch(/https?:/)
    expect(page).not.toMatch(/<script|<link|@import|url\((?!#)/)
  })

  it('renders a session with no rows from its summary alone', () => {
    const summaries = summarize(broken)
    const lone = renderReport({ rows: [], summaries, runId: 'sim-0002' })
    expect(lone).toContain('No step rows for this session.')
    expect(lone).not.toContain('<svg class="chart')
  })
})

describe('renderReport: claims, variants left out and the provider side', () => {
  const expired = sessionRows(
    { scenario: 'idle-ttl', variant: 'ttl-5m', provider: 'anthropic', model: 'claude-sonnet-4-6' },
    [
      { write: 6000, uncached: 3 },
      {
        write: 6200,
        uncached: 3,
        turn: 4,
        breakCause: 'ttl-expired',
        providerCause: 'ttl-expired',
        providerLost: 6000,
      },
    ],
  )
  const page = renderReport({
    rows: expired,
    summaries: summarize(expired),
    runId: 'sim-0002',
    claims: [
      {
        scenario: 'idle-ttl',
        provider: 'anthropic',
        claim: 'one-hour-keeps',
        text: 'With a 1-hour lifetime no pause expires the cache.',
        variants: ['ttl-1h'],
        status: 'fails',
        observed: 'ttl-expired@4.1',
      },
    ],
    notApplicable: [
      {
        scenario: 'prompt-change',
        variant: 'in-history',
        provider: 'anthropic',
        model: 'claude-sonnet-4-6',
        reason: 'needs the in-history system-prompt route',
      },
    ],
  })

  it('lists each claim with its status and what it observed, failures first', () => {
    expect(page).toContain('<h2>Claims</h2>')
    expect(page).toContain('<strong class="fail">fails</strong>')
    expect(page).toContain('With a 1-hour lifetime no pause expires the cache.')
    expect(page).toContain('ttl-expired@4.1')
  })

  it('names the variants left out with their reason, and no numbers for them', () => {
    expect(page).toContain('<h2>Not applicable</h2>')
    expect(page).toContain('prompt-change · in-history · anthropic')
    expect(page).toContain('needs the in-history system-prompt route')
  })

  it('shows what an idle gap cost and what a 1-hour lifetime would have cost instead', () => {
    expect(page).toMatch(/6,000 tokens, \$0\.\d{4}; a 1h TTL would have cost \$0\.0135 more in writes/)
  })
})
