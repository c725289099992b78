import { describe, expect, it } from 'vitest'
import { renderReport, writeReport } from './html.ts'
import { RunRows } from './session-rows.ts'
import { summarize } from './summary.ts'
import { CAPTURED_SESSION, capturedAgent, sessionRows } from './testing.ts'
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
  return renderReport({ rows: RunRows.of(rows), summaries: summarize(rows), runId })
}

describe('renderReport', () => {
  const page = report([...appendOnly, ...broken])

  it('is a complete HTML page titled with the run id', () => {
    expect(page.startsWith('<!doctype html>')).toBe(true)
    expect(page).toContain('<title>cachelab report: sim-0001</title>')
    expect(page.trimEnd().endsWith('</html>')).toBe(true)
  })

  it('has a collapsible section, a chart and a collapsible step table for every session', () => {
    expect(page).toContain('append-only · default · anthropic')
    expect(page).toContain('system-change · surface · openai-chat')
    expect(page.match(/<details class="session/g)).toHaveLength(2)
    expect(page.match(/<svg class="chart/g)).toHaveLength(2)
    expect(page.match(/<details><summary>Steps/g)).toHaveLength(2)
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
    expect(marker?.[1]).toBe(
      'break at 1.3: system-replace at messages[0] (event 12), 5,000 tokens lost, $0.0135',
    )
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
    const lone = renderReport({ rows: new RunRows(), summaries, runId: 'sim-0002' })
    expect(lone).toContain('No step rows for this session.')
    expect(lone).not.toContain('<svg class="chart')
  })
})

describe('renderReport: what changed at a break', () => {
  const dated = sessionRows({ scenario: 'capture', variant: 'c-1', provider: 'anthropic' }, [
    { uncached: 6000 },
    { read: 5900, uncached: 300 },
    {
      read: 0,
      uncached: 6400,
      lost: 6000,
      turn: 3,
      step: 1,
      breakCause: 'system-replace',
      breakNode: 'system[0]',
      breakChange: {
        node: 'system[0]',
        kind: 'replaced',
        context: 'You are <terse>. Today is ',
        before: '2026-12-07',
        after: '2026-12-08',
      },
    },
  ])
  const page = report([...appendOnly, ...dated])
  const anchor = page.match(/<details class="session broke" id="(session-\d+)"/)?.[1]
  const id = `${anchor}-change-3-1-0`

  it('shows the previous request against this one, the shared text before the change, escaped', () => {
    const view = page.slice(page.indexOf(`<div class="change" id="${id}">`))
    expect(view).toMatch(
      /^<div class="change" id="session-\d+-change-3-1-0">\n<p class="change-head">3\.1 · <strong>system-replace<\/strong> · <code>system\[0\]: replaced<\/code><\/p>/,
    )
    expect(view).toContain(
      '<span class="sub">previous request</span><pre><span class="shared">You are &lt;terse&gt;. Today is </span><del>2026-12-07</del></pre>',
    )
    expect(view).toContain(
      '<span class="sub">this request</span><pre><span class="shared">You are &lt;terse&gt;. Today is </span><ins>2026-12-08</ins></pre>',
    )
  })

  it('links to it from the costliest breaks, the step table and the chart’s marker', () => {
    const costliest = page.slice(
      page.indexOf('<section id="costliest">'),
      page.indexOf('<section id="summary">'),
    )
    expect(costliest).toContain(`<a href="#${id}">what changed</a>`)
    const steps = page.slice(page.indexOf(`<details class="session broke" id="${anchor}"`))
    expect(steps.slice(steps.indexOf('<table class="steps">'))).toContain(`<a href="#${id}">what changed</a>`)
    expect(page).toContain(`<a href="#${id}"><g class="break-marker"`)
    // The marker's tooltip says what changed too.
    expect(page).toMatch(
      /<title>break at 3\.1: system-replace at system\[0\][^<]*\n- &quot;2026-12-07&quot;\n\+ &quot;2026-12-08&quot;<\/title>/,
    )
  })

  it('shows a field’s two values, and a side with nothing as such', () => {
    const switched = sessionRows({ scenario: 'capture', variant: 'c-2' }, [
      { uncached: 100 },
      {
        uncached: 120,
        lost: 90,
        breakCause: 'config-changed',
        breakNode: 'model',
        breakChange: { node: 'model', kind: 'field', field: 'model', before: 'a-model', after: 'b-model' },
      },
      {
        uncached: 130,
        lost: 90,
        breakCause: 'system-replace',
        breakNode: 'system[0]',
        breakChange: { node: 'system[0]', kind: 'inserted', after: 'Mode: review.\n' },
      },
    ])
    const other = report(switched)
    expect(other).toContain('<code>model changed</code>')
    expect(other).toContain('<pre><del>a-model</del></pre>')
    expect(other).toContain('<pre><ins>b-model</ins></pre>')
    expect(other).toContain('<pre><span class="none">(nothing here)</span></pre>')
    // A line break inserted is seen.
    expect(other).toContain('<ins>Mode: review.↵\n</ins>')
  })

  it('draws no view and no link for a break whose source kept no text', () => {
    expect(report([...appendOnly, ...broken])).not.toMatch(/class="change"|what changed/)
  })

  it('still has no script and nothing external', () => {
    expect(page).not.toMatch(/https?:/)
    expect(page).not.toMatch(/<script|<link|@import|url\((?!#)/)
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
    rows: RunRows.of(expired),
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

describe('renderReport: a run of many sessions', () => {
  const quiet = sessionRows({ scenario: 'append-only', provider: 'deepseek' }, [
    { uncached: 6000 },
    { read: 5900, uncached: 300 },
  ])
  const page = renderReport({
    rows: RunRows.of([...appendOnly, ...quiet, ...broken]),
    summaries: summarize([...appendOnly, ...quiet, ...broken]),
    runId: 'sim-0003',
    breakEvents: [
      {
        scenario: 'system-change',
        variant: 'surface',
        provider: 'openai-chat',
        seq: 12,
        type: 'system/message',
        description: 'rewrote event 3 as system prompt “You are terse.”',
      },
    ],
  })
  const indexOf = (text: string) => page.indexOf(text)

  it('opens with an index of scenarios by provider, each session a chip linking to its section', () => {
    expect(indexOf('<section id="index">')).toBeLessThan(indexOf('<section id="sessions">'))
    const index = page.slice(indexOf('<section id="index">'), indexOf('<section id="costliest">'))
    expect(index).toMatch(/<th class="label" scope="col">anthropic<\/th>.*deepseek.*openai-chat/)
    const anchor = page.match(/<details class="session broke" id="(session-\d+)"/)?.[1]
    expect(index).toContain(`<a class="chip broke" href="#${anchor}"`)
    expect(index).toMatch(/>surface<b>1 · \$0\.01<\/b><\/a>/)
  })

  it('filters to the sessions with breaks with a checkbox and CSS, marking every entry of a quiet session', () => {
    expect(page).toContain('<input type="checkbox" id="breaks-only">')
    expect(page).toContain('main:has(#breaks-only:checked) .quiet { display: none; }')
    expect(page).toContain('Only sessions with breaks (1 of 3)')
    expect(page.match(/<details class="session quiet"/g)).toHaveLength(2)
    expect(page.match(/<tr class="quiet">/g)?.length).toBeGreaterThanOrEqual(2)
    expect(page.match(/<tr class="broke">/g)).toHaveLength(1)
  })

  it('orders the summary and the sessions worst first by lost dollars', () => {
    const summary = page.slice(indexOf('<section id="summary">'))
    expect(summary.indexOf('system-change')).toBeLessThan(summary.indexOf('append-only'))
    const sessions = page.slice(indexOf('<section id="sessions">'))
    expect(sessions.indexOf('<h3>system-change')).toBeLessThan(sessions.indexOf('<h3>append-only'))
    expect(sessions).toMatch(/<details class="session broke" id="session-\d+" open>/)
  })

  it('states break costs in dollars and names the breaking event by type and what it did', () => {
    expect(page).toContain('$0.0135 lost')
    expect(page).toContain('messages[0] · event 12 system/message')
    expect(page).toContain('rewrote event 3 as system prompt “You are terse.”')
    const costliest = page.slice(indexOf('<section id="costliest">'), indexOf('<section id="summary">'))
    expect(costliest).toMatch(/<td class="num lost">\$0\.0135<\/td><td class="num">5,000<\/td>/)
  })

  it('writes the same page a piece at a time, each session its own piece', () => {
    const pieces: string[] = []
    writeReport(
      {
        rows: RunRows.of([...appendOnly, ...quiet, ...broken]),
        summaries: summarize([...appendOnly, ...quiet, ...broken]),
        runId: 'sim-0003',
        breakEvents: [
          {
            scenario: 'system-change',
            variant: 'surface',
            provider: 'openai-chat',
            seq: 12,
            type: 'system/message',
            description: 'rewrote event 3 as system prompt “You are terse.”',
          },
        ],
      },
      (text) => pieces.push(text),
    )
    expect(pieces.join('')).toBe(page)
    expect(pieces.filter((piece) => piece.startsWith('\n<details class="session'))).toHaveLength(3)
  })

  it('still has no script, no URL and nothing external', () => {
    expect(page).not.toMatch(/https?:/)
    expect(page).not.toMatch(/<script|<link|@import|url\((?!#)/)
  })
})

describe('renderReport: long sessions and idle gaps', () => {
  const length = 1500
  const breakAt = 700
  const long = sessionRows(
    { scenario: 'long-session', provider: 'anthropic' },
    Array.from({ length }, (_, index) =>
      index === breakAt
        ? {
            turn: index + 1,
            step: 1,
            at: index * 10,
            uncached: 9000,
            lost: 8000,
            breakCause: 'tools-changed' as const,
          }
        : { turn: index + 1, step: 1, at: index * 10, read: 9000, uncached: 20 },
    ),
  )
  const idle = sessionRows({ scenario: 'idle-ttl', variant: 'ttl-5m' }, [
    { uncached: 5000, at: 0 },
    { read: 5000, uncached: 10, at: 2 },
    {
      write: 5000,
      uncached: 10,
      at: 383,
      providerCause: 'ttl-expired',
      breakCause: 'ttl-expired',
      providerLost: 5000,
    },
  ])
  const page = report([...long, ...idle])
  const longChart = page.slice(
    page.indexOf('Tokens per request: long-session'),
    page.indexOf('</svg>', page.indexOf('Tokens per request: long-session')),
  )

  it('keeps a long session’s chart within the page width, the break and its neighbours drawn one by one', () => {
    expect(page).toMatch(/<svg class="chart" id="session-1-chart" viewBox="0 0 1128 /)
    const columns = longChart.match(/<g class="bar[ "]/g) ?? []
    expect(columns.length).toBeLessThanOrEqual(200)
    expect(columns.length).toBeGreaterThan(100)
    expect(longChart).toContain(`<g class="bar break" data-index="${breakAt}">`)
    expect(longChart).toContain(`<g class="bar" data-index="${breakAt - 1}">`)
    expect(longChart).toContain(`<g class="bar" data-index="${breakAt + 1}">`)
    expect(longChart).toMatch(
      /<g class="bar span" data-index="\d+"><title>[\d.]+ to [\d.]+: \d+ requests, the mean of each drawn/,
    )
  })

  it('lists a long session’s requests near its breaks and sums the quiet stretches', () => {
    expect(page).toContain('Steps (11 of 1,500 requests: those near breaks, the rest summed)')
    expect(page).toMatch(
      /<tr class="elided"><td colspan="18">… 695 requests without a break, 4\.1 to 698\.1: hit ratio 99\.78%/,
    )
  })

  it('marks an idle gap on the request axis and in the step table', () => {
    expect(page).toMatch(/<g class="idle-gap"><title>idle 6m 21s before 1\.3<\/title>/)
    expect(page).toContain('>idle 6m 21s</text>')
    expect(page).toContain('<span class="sub">after idle 6m 21s</span>')
  })
})

describe('renderReport: a captured agent’s sessions and conversations', () => {
  const rows = capturedAgent()
  const page = report(rows, 'capture-0001')
  const section = (start: string, end: string) => {
    const from = page.indexOf(start)
    return page.slice(from, page.indexOf(end, from))
  }

  it('has a model column in every step table, the model of each request in it', () => {
    expect(page.match(/<th class="label" scope="col">model<\/th>/g)).toHaveLength(5)
    const main = section(
      '<h4><span class="kind kind-main">main</span></h4>',
      '<span class="kind kind-subagent">',
    )
    const models = [...main.matchAll(/<td class="label">(claude-[\w.-]+)<\/td>/g)].map((match) => match[1])
    expect(models).toEqual([
      'claude-opus-5-5',
      'claude-opus-5-5',
      'claude-haiku-4-5',
      'claude-haiku-4-5',
      'claude-haiku-4-5',
    ])
  })

  it('names the model in each request’s tooltip, and both models in a switch’s break', () => {
    expect(page).toContain('turn 2 step 1\nmodel claude-haiku-4-5, switched from claude-opus-5-5\n')
    expect(page).toContain('turn 1 step 2\nmodel claude-opus-5-5\n')
    const marker = page.match(/<g class="break-marker" data-index="2"><title>([^<]*)<\/title>/)
    expect(marker?.[1]).toBe(
      'break at 2.1: config-changed at model (claude-opus-5-5 → claude-haiku-4-5), 0 tokens lost, $0.0000',
    )
    expect(page).toContain(
      '<strong>config-changed</strong><span class="sub">model (<span class="nowrap">claude-opus-5-5</span> → <span class="nowrap">claude-haiku-4-5</span>)</span>',
    )
    expect(page).not.toMatch(/tools\[0\] \(/)
  })

  it('says which catalog model a request was simulated as', () => {
    const stand = sessionRows(
      { scenario: 'capture', variant: 'c-1', model: 'claude-next', simulatedAs: 'claude-opus-5-5' },
      [{ write: 5000 }, { read: 5000, uncached: 10 }],
    )
    const simulated = report(stand)
    expect(simulated).toContain(
      '<td class="label">claude-next<span class="sub">simulated as claude-opus-5-5</span></td>',
    )
    expect(simulated).toContain('model claude-next (simulated as claude-opus-5-5)\n')
    expect(simulated).toContain(
      '<span class="meta">claude-next (simulated as claude-opus-5-5) · warm hit ratio',
    )
  })

  it('heads a session with the agent that sent it, as a chip', () => {
    expect(page).toContain(
      `<h3>capture · ${CAPTURED_SESSION} · anthropic</h3> <span class="tag">session</span> <span class="chip agent" title="agent">claude-code/2.1.328</span>`,
    )
    expect(page).toContain(
      '<h3>capture · fdf5a279-6f6b-4ccc-b408-7bed182d60ab · anthropic</h3> <span class="chip agent" title="agent">claude-code/2.1.328</span>',
    )
  })

  it('groups the conversations under their session in the index, each chip labelled by its kind', () => {
    const index = section('<section id="index">', '<section id="costliest">')
    const group = index.match(/<span class="chip-group broke">(.*?)<\/span><a /)?.[1] ?? ''
    expect(group).toMatch(
      new RegExp(
        `^<a class="chip session-chip broke" href="#conversations-1"[^>]*>${CAPTURED_SESSION}<b>2 · `,
      ),
    )
    const kinds = [...group.matchAll(/<span class="kind kind-(\w+)">/g)].map((match) => match[1])
    expect(kinds).toEqual(['main', 'subagent', 'side', 'compaction'])
    expect(group).toContain('<span class="kind kind-subagent">subagent</span>a3c29f83d9214c246</a>')
  })

  it('totals a session in the summary from its conversations’ tokens, its conversations under it', () => {
    const summary = section('<section id="summary">', '<section id="sessions">')
    const total = summary.match(/<tr class="session-total broke">.*?<\/tr>/)?.[0] ?? ''
    expect(total).toContain(`${CAPTURED_SESSION}<span class="sub">session of 4 conversations</span>`)
    expect(total).toContain(
      '<td class="num">9</td><td class="num">55.04%<span class="sub">of 45,606</span></td>',
    )
    const conversationKinds = [
      ...summary.matchAll(/<tr class="conversation [^"]*">.*?<span class="kind kind-(\w+)">/g),
    ].map((match) => match[1])
    expect(conversationKinds).toEqual(['main', 'subagent', 'side', 'compaction'])
  })

  it('lists a session’s conversations in one section headed by their sums, and counts both in the header', () => {
    const sessions = section('<section id="sessions">', '<footer>')
    expect(sessions).toMatch(/<section class="conversations broke" id="conversations-1">/)
    expect(sessions).toContain(
      '4 conversations (1 main, 1 subagent, 1 side, 1 compaction) · warm hit ratio 55.04% (25,100 of 45,606 warm input tokens read from cache)',
    )
    expect(sessions.indexOf('<h4><span class="kind kind-main">main</span></h4>')).toBeLessThan(
      sessions.indexOf('<h4><span class="kind kind-compaction">compaction</span>1</h4>'),
    )
    expect(page).toContain('2 sessions of 5 conversations, 11 requests')
    expect(page).toContain('Only conversations with breaks (1 of 5)')
  })

  it('names a conversation’s break in the costliest breaks by its session and kind', () => {
    const costliest = section('<section id="costliest">', '<section id="summary">')
    expect(costliest).toContain(
      `<a href="#session-4">capture · ${CAPTURED_SESSION} · anthropic</a><span class="sub"><span class="kind kind-main">main</span></span>`,
    )
  })

  it('is byte-identical for identical input', () => {
    expect(report(capturedAgent(), 'capture-0001')).toBe(page)
  })
})
