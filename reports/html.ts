// report.html: one self-contained page per run (inline CSS and SVG, no scripts, nothing fetched), with the
// summary table, then per session a chart and a collapsible step table. Same rows in, same bytes out.

import { chartLegend, sessionChart } from './chart.ts'
import { providerAdvice, stepLabel } from './labels.ts'
import type { LoopComparison } from './loops.ts'
import { loopsSection, type SessionInexpressible } from './loops-html.ts'
import { escapeHtml } from './markup.ts'
import { groupBySession, type SessionKey, sessionKeyString, sessionLabel } from './session-key.ts'
import { countText } from './text-table.ts'
import type { ClaimResult, StepRow, SummaryRow } from './types.ts'

/** A session the run left out because its model cannot serve the variant. */
export interface LeftOut {
  scenario: string
  variant: string
  provider: string
  model: string
  reason: string
}

/** What a report shows. */
export interface ReportInput {
  /** Every request of the run, in run order. */
  rows: readonly StepRow[]
  /** The run's summary, one row per session. */
  summaries: readonly SummaryRow[]
  /** The run id, shown in the title. */
  runId: string
  /** The scenario claims evaluated on the run. */
  claims?: readonly ClaimResult[]
  /** Variants not applicable on the model they would run on (no rows, no numbers). */
  notApplicable?: readonly LeftOut[]
  /** The model loop beside DSH's loop, per session both ran. */
  comparisons?: readonly LoopComparison[]
  /** Scenario events an external loop could not express. */
  inexpressible?: readonly SessionInexpressible[]
}

interface Session {
  key: SessionKey
  anchor: string
  summary: SummaryRow | undefined
  rows: readonly StepRow[]
}

const STYLE = `
:root { color-scheme: light; --text: #1d1d1f; --muted: #5f6368; --rule: #dcdce2; --panel: #f6f6f8; --break: #fff1e8; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--text); background: #fff; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1440px; margin: 0 auto; padding: 32px 24px 64px; }
h1 { font-size: 1.65rem; margin: 0 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 1.2rem; margin: 40px 0 8px; }
h3 { font-size: 1.05rem; margin: 0 0 4px; }
p { margin: 4px 0 12px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
a { color: #0b57d0; }
.meta, .note { color: var(--muted); }
.note { font-size: 0.85rem; max-width: 90ch; }
.table-scroll, .chart-scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; font-size: 0.9rem; }
th, td { padding: 6px 8px; text-align: left; vertical-align: top; border-bottom: 1px solid var(--rule); }
thead th { font-size: 0.78rem; font-weight: 600; color: var(--muted); border-bottom: 2px solid var(--rule); vertical-align: bottom; }
thead th.num, thead th.label { white-space: normal; }
.num, .label { text-align: right; white-space: nowrap; }
.label { text-align: left; }
.sub { display: block; font-size: 0.75rem; color: var(--muted); }
tbody tr:hover { background: var(--panel); }
tr.break td { background: var(--break); }
tr.failed td { color: var(--muted); font-style: italic; }
.fail { color: #b3261e; }
td.wrap { white-space: normal; min-width: 28ch; }
.tag { display: inline-block; font-size: 0.72rem; font-style: normal; padding: 0 6px; border-radius: 8px; border: 1px solid currentColor; }
.session { margin-top: 36px; padding-top: 20px; border-top: 1px solid var(--rule); }
figure { margin: 12px 0 8px; }
svg.chart { display: block; max-width: 100%; height: auto; font-family: inherit; }
svg.chart.wide { max-width: none; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; list-style: none; margin: 6px 0 0; padding: 0; font-size: 0.82rem; color: var(--muted); }
.legend li { display: flex; align-items: center; gap: 6px; }
details { margin-top: 12px; }
summary { cursor: pointer; font-weight: 600; }
footer { margin-top: 48px; padding-top: 16px; border-top: 1px solid var(--rule); }
footer p { max-width: 100ch; }
`

/** The report page. */
export function renderReport(input: ReportInput): string {
  const sessions = sessionsOf(input)
  const requests = input.rows.length
  const title = `cachelab report: ${input.runId}`
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    '<main>',
    '<header>',
    `<h1>cachelab report <code>${escapeHtml(input.runId)}</code></h1>`,
    `<p class="meta">${sessions.length} ${plural(sessions.length, 'session')}, ${countText(requests)} ${plural(requests, 'request')}</p>`,
    '</header>',
    summarySection(sessions),
    claimsSection(input.claims ?? []),
    notApplicableSection(input.notApplicable ?? []),
    loopsSection(input.comparisons ?? [], input.inexpressible ?? []),
    '<section>',
    '<h2>Sessions</h2>',
    ...sessions.map(sessionSection),
    '</section>',
    '<footer>',
    '<p class="note">Input tokens are split into disjoint buckets: input = cache-read + cache-write + uncached. ',
    'Hit ratios are token-weighted (sums of cache-read tokens over sums of input tokens, never averages of per-request ratios) over successful requests; ',
    '“warm” leaves out each session’s first request, which starts cold. ',
    'Ideal read is what the provider’s own rules would have read had the request extended the previous one unchanged, from the same cache at the same time; lost = ideal read − read, what the client’s change cost. ',
    'Provider lost is what a warm cache would have read on top of that (nothing expired, no lookback window, the same machine): what an idle gap or the provider’s reach cost. ',
    'Ideal cost prices the lost tokens as cache reads.</p>',
    '</footer>',
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n')
}

/** Sessions in summary order, then any that only have rows, each with its rows and summary. */
function sessionsOf(input: ReportInput): Session[] {
  const rowsByKey = new Map(
    groupBySession(input.rows).map((group) => [sessionKeyString(group[0] as StepRow), group]),
  )
  const keys = new Map<string, SessionKey>()
  for (const row of [...input.summaries, ...input.rows]) {
    const key = sessionKeyString(row)
    if (!keys.has(key))
      keys.set(key, {
        scenario: row.scenario,
        variant: row.variant,
        provider: row.provider,
        ...(row.loop !== undefined ? { loop: row.loop } : {}),
      })
  }
  const summaries = new Map(input.summaries.map((summary) => [sessionKeyString(summary), summary]))
  return [...keys.entries()].map(([keyString, key], index) => ({
    key,
    anchor: `session-${index + 1}`,
    summary: summaries.get(keyString),
    rows: rowsByKey.get(keyString) ?? [],
  }))
}

interface HeadCell {
  title: string
  numeric: boolean
  /** A second line under the title (the denominator of a ratio). */
  note?: string
}

const SUMMARY_HEAD: readonly HeadCell[] = [
  { title: 'scenario', numeric: false },
  { title: 'variant', numeric: false },
  { title: 'provider', numeric: false, note: 'model' },
  { title: 'requests', numeric: true },
  { title: 'hit ratio, warm', numeric: true, note: 'of warm input tokens' },
  { title: 'hit ratio, all', numeric: true, note: 'of input tokens' },
  { title: 'write ratio', numeric: true, note: 'of input tokens' },
  { title: 'lost tokens', numeric: true },
  { title: 'provider lost', numeric: true, note: 'idle gaps, reach' },
  { title: 'cost', numeric: true },
  { title: 'ideal cost', numeric: true },
  { title: 'breaks', numeric: true },
  { title: 'largest break', numeric: false, note: 'tokens at turn.step' },
  { title: 'claims', numeric: false, note: 'hold / read this session' },
]

function headRow(cells: readonly HeadCell[]): string {
  const cell = (head: HeadCell) =>
    `<th class="${head.numeric ? 'num' : 'label'}" scope="col">${escapeHtml(head.title)}${head.note === undefined ? '' : `<span class="sub">${escapeHtml(head.note)}</span>`}</th>`
  return `<thead><tr>${cells.map(cell).join('')}</tr></thead>`
}

function summarySection(sessions: readonly Session[]): string {
  const body = sessions.map((session) => {
    const summary = session.summary
    if (summary === undefined)
      return `<tr>${labelCells(session, undefined)}<td colspan="${SUMMARY_HEAD.length - 3}" class="meta">no summary row</td></tr>`
    const failed =
      summary.failedAttempts === 0
        ? ''
        : `<span class="sub">+${countText(summary.failedAttempts)} failed</span>`
    const largest = summary.largestBreak
    const cells = [
      `${countText(summary.requests)}${failed}`,
      ratioCell(summary.hitRatioWarm, warmTokens(session.rows)?.input),
      ratioCell(summary.hitRatioAll, summary.inputTokens),
      ratioCell(summary.writeRatio, summary.inputTokens),
      countText(summary.lostTokens),
      countText(summary.providerLostTokens),
      dollars(summary.costUsd, 4),
      dollars(summary.idealCostUsd, 4),
      countText(summary.breaks),
      largest === undefined
        ? '<span class="meta">none</span>'
        : `${countText(largest.lostTokens)} at ${largest.turn}.${largest.step}<span class="sub">${escapeHtml(largest.cause ?? 'cause unknown')}</span>`,
      claimsCell(summary),
    ]
    const numeric = SUMMARY_HEAD.slice(3).map((head) => head.numeric)
    return `<tr>${labelCells(session, summary.model)}${cells.map((cell, index) => `<td class="${numeric[index] === true ? 'num' : 'label'}">${cell}</td>`).join('')}</tr>`
  })
  return [
    '<section>',
    '<h2>Summary</h2>',
    '<p class="note">Hit ratios are token-weighted: cache-read tokens ÷ input tokens of the successful requests, with the denominator in tokens under each value. “Warm” leaves out each session’s first request; the write ratio is cache-write ÷ input tokens.</p>',
    '<div class="table-scroll"><table>',
    headRow(SUMMARY_HEAD),
    `<tbody>${body.join('\n')}</tbody>`,
    '</table></div>',
    '</section>',
  ].join('\n')
}

function claimsCell(summary: SummaryRow): string {
  const total = summary.claimsHeld + summary.claimsFailed
  if (total === 0) return '<span class="meta">–</span>'
  if (summary.claimsFailed === 0) return `${summary.claimsHeld} of ${total}`
  return `<strong class="fail">${summary.claimsFailed} of ${total} fail</strong>`
}

/** Every claim evaluated on the run, failures first. */
function claimsSection(claims: readonly ClaimResult[]): string {
  if (claims.length === 0) return ''
  const order = { fails: 0, holds: 1, 'not-run': 2 } as const
  const sorted = [...claims].sort((left, right) => order[left.status] - order[right.status])
  const held = claims.filter((claim) => claim.status === 'holds').length
  const failed = claims.filter((claim) => claim.status === 'fails').length
  const body = sorted.map((claim) => {
    const status =
      claim.status === 'fails'
        ? '<strong class="fail">fails</strong>'
        : claim.status === 'holds'
          ? 'holds'
          : '<span class="meta">not run</span>'
    return `<tr${claim.status === 'fails' ? ' class="break"' : ''}><td class="label">${status}</td><td class="label">${escapeHtml(claim.scenario)}<span class="sub">${escapeHtml(claim.variants.join(', '))}</span></td><td class="label">${escapeHtml(claim.provider)}</td><td class="label wrap">${escapeHtml(claim.text)}</td><td class="label wrap">${escapeHtml(claim.observed)}</td></tr>`
  })
  return [
    '<section>',
    '<h2>Claims</h2>',
    `<p class="meta">${held} of ${claims.length} hold${failed > 0 ? `, <strong class="fail">${failed} fail</strong>` : ''}. Each scenario’s “demonstrates” sentence, checked on this run’s rows.</p>`,
    '<div class="table-scroll"><table>',
    headRow([
      { title: 'status', numeric: false },
      { title: 'scenario', numeric: false, note: 'variants read' },
      { title: 'provider', numeric: false },
      { title: 'claim', numeric: false },
      { title: 'observed', numeric: false },
    ]),
    `<tbody>${body.join('\n')}</tbody>`,
    '</table></div>',
    '</section>',
  ].join('\n')
}

/** Variants the run left out, with why: never a number for a request the model would refuse. */
function notApplicableSection(entries: readonly LeftOut[]): string {
  if (entries.length === 0) return ''
  const items = entries.map(
    (entry) =>
      `<li><strong>${escapeHtml(`${entry.scenario} · ${entry.variant} · ${entry.provider}`)}</strong> on ${escapeHtml(entry.model)}: ${escapeHtml(entry.reason)}</li>`,
  )
  return ['<section>', '<h2>Not applicable</h2>', `<ul>${items.join('')}</ul>`, '</section>'].join('\n')
}

function labelCells(session: Session, model: string | undefined): string {
  const { scenario, variant, provider } = session.key
  const modelLine = model === undefined ? '' : `<span class="sub">${escapeHtml(model)}</span>`
  return [
    `<td class="label"><a href="#${session.anchor}">${escapeHtml(scenario)}</a></td>`,
    `<td class="label">${escapeHtml(variant)}${session.key.loop === 'dsh' ? '<span class="sub">DSH loop</span>' : ''}</td>`,
    `<td class="label">${escapeHtml(provider)}${modelLine}</td>`,
  ].join('')
}

/** Cache-read and input tokens of the session's warm requests (successful, after the first). */
function warmTokens(rows: readonly StepRow[]): { read: number; input: number } | undefined {
  if (rows.length === 0) return undefined
  const warm = rows.filter((row) => row.ok && !row.cold)
  return {
    read: warm.reduce((total, row) => total + row.cacheReadTokens, 0),
    input: warm.reduce((total, row) => total + row.inputTokens, 0),
  }
}

function sessionSection(session: Session): string {
  const label = sessionLabel(session.key)
  const { rows, summary } = session
  const facts: string[] = []
  if (summary !== undefined) {
    facts.push(escapeHtml(summary.model))
    const warm = warmTokens(rows)
    facts.push(
      `warm hit ratio ${percent(summary.hitRatioWarm)}${warm === undefined ? '' : ` (${countText(warm.read)} of ${countText(warm.input)} warm input tokens read from cache)`}`,
      `${countText(summary.lostTokens)} tokens lost`,
      `${countText(summary.providerLostTokens)} on the provider side`,
      `${countText(summary.breaks)} ${plural(summary.breaks, 'break')}`,
    )
  }
  const failed = rows.filter((row) => !row.ok).length
  facts.push(
    `${countText(rows.length)} ${plural(rows.length, 'request')}${failed === 0 ? '' : ` (${failed} failed)`}`,
  )
  const parts = [
    `<article class="session" id="${session.anchor}">`,
    `<h3>${escapeHtml(label)}</h3>`,
    `<p class="meta">${facts.join(' · ')}</p>`,
  ]
  if (rows.length === 0) {
    parts.push('<p class="meta">No step rows for this session.</p>', '</article>')
    return parts.join('\n')
  }
  parts.push(
    '<figure>',
    `<div class="chart-scroll">${sessionChart(rows, `${session.anchor}-chart`, `Tokens per request: ${label}`)}</div>`,
    `<figcaption>${chartLegend()}</figcaption>`,
    '</figure>',
    stepTable(rows),
    '</article>',
  )
  return parts.join('\n')
}

const STEP_HEAD: readonly HeadCell[] = [
  { title: '#', numeric: true },
  { title: 'turn.step', numeric: false },
  { title: 'attempt', numeric: true },
  { title: 'header', numeric: false },
  { title: 'input', numeric: true },
  { title: 'cache-read', numeric: true },
  { title: 'cache-write', numeric: true },
  { title: 'uncached', numeric: true },
  { title: 'output', numeric: true },
  { title: 'hit ratio', numeric: true },
  { title: 'ideal read', numeric: true },
  { title: 'lost', numeric: true },
  { title: 'provider lost', numeric: true },
  { title: 'break', numeric: false, note: 'cause, node, event' },
  { title: 'cost', numeric: true },
  { title: 'time (s)', numeric: true },
  { title: 'latency (ms)', numeric: true },
]

/** The prediction columns of a session whose usage came from the real provider, after cache-write. */
const PREDICTED_HEAD: readonly HeadCell[] = [
  { title: 'predicted read', numeric: true, note: 'simulator' },
  { title: 'predicted write', numeric: true, note: 'simulator' },
]

function stepTable(rows: readonly StepRow[]): string {
  const predicted = rows.some((row) => row.predictedCacheReadTokens !== undefined)
  const head = predicted ? [...STEP_HEAD.slice(0, 7), ...PREDICTED_HEAD, ...STEP_HEAD.slice(7)] : STEP_HEAD
  const optional = (value: number | undefined) => (value === undefined ? '' : countText(value))
  const body = rows.map((row, index) => {
    const broke = row.breakCause !== undefined || row.providerCause !== undefined
    const classes = [row.ok ? '' : 'failed', broke ? 'break' : ''].filter((name) => name !== '')
    const cells = [
      String(index + 1),
      `${escapeHtml(stepLabel(row))}${statusTag(row)}`,
      String(row.attempt),
      escapeHtml(row.headerReason ?? ''),
      countText(row.inputTokens),
      countText(row.cacheReadTokens),
      countText(row.cacheWriteTokens),
      ...(predicted ? [optional(row.predictedCacheReadTokens), optional(row.predictedCacheWriteTokens)] : []),
      countText(row.uncachedTokens),
      countText(row.outputTokens),
      percent(row.hitRatio),
      countText(row.idealCacheReadTokens),
      countText(row.lostTokens),
      countText(row.providerLostTokens),
      breakCell(row),
      dollars(row.costUsd, 6),
      row.virtualTimeS.toFixed(3),
      countText(row.latencyMs),
    ]
    const rowClass = classes.length === 0 ? '' : ` class="${classes.join(' ')}"`
    return `<tr${rowClass}>${cells.map((cell, column) => `<td class="${head[column]?.numeric === true ? 'num' : 'label'}">${cell}</td>`).join('')}</tr>`
  })
  return [
    `<details><summary>Steps (${countText(rows.length)} ${plural(rows.length, 'request')})</summary>`,
    '<div class="table-scroll"><table>',
    headRow(head),
    `<tbody>${body.join('\n')}</tbody>`,
    '</table></div>',
    '</details>',
  ].join('\n')
}

function statusTag(row: StepRow): string {
  if (!row.ok) return ' <span class="tag">failed</span>'
  return row.cold ? ' <span class="tag">cold</span>' : ''
}

function breakCell(row: StepRow): string {
  const parts: string[] = []
  if (row.breakCause !== undefined && row.breakCause !== row.providerCause) {
    const where = [
      row.breakNode,
      row.breakEventSeq === undefined ? undefined : `event ${row.breakEventSeq}`,
    ].filter((part) => part !== undefined)
    parts.push(
      `<strong>${escapeHtml(row.breakCause)}</strong>${where.length === 0 ? '' : `<span class="sub">${escapeHtml(where.join(' · '))}</span>`}`,
    )
  }
  if (row.providerCause !== undefined) {
    const advice = providerAdvice(row)
    parts.push(
      `<strong>${escapeHtml(row.providerCause)}</strong><span class="sub">${escapeHtml(`${countText(row.providerLostTokens)} tokens, ${dollars(row.providerLostUsd, 4)}${advice === undefined ? '' : `; ${advice}`}`)}</span>`,
    )
  }
  return parts.join('<br>')
}

/** A ratio over its denominator in tokens, written under it. */
function ratioCell(ratio: number | undefined, denominator: number | undefined): string {
  return `${percent(ratio)}${denominator === undefined ? '' : `<span class="sub">of ${countText(denominator)}</span>`}`
}

function percent(ratio: number | undefined): string {
  return ratio === undefined ? '–' : `${(ratio * 100).toFixed(2)}%`
}

function dollars(value: number, digits: number): string {
  return `$${value.toFixed(digits)}`
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`
}
