// One session of report.html, or one conversation of a captured agent's session: a summary line of
// facts that opens onto its chart and its step table, a long session's table windowed around its breaks
// (window.ts).

import { durationText, sessionChart } from './chart.ts'
import { changesSection, changeTargets } from './html-change.ts'
import {
  agentChip,
  breakCell,
  conversationHeading,
  dollars,
  type EventLookup,
  type HeadCell,
  headRow,
  kindChip,
  modelCell,
  percent,
  plural,
  type Session,
  sessionClass,
} from './html-parts.ts'
import { stepLabel } from './labels.ts'
import { escapeHtml } from './markup.ts'
import { sessionLabel } from './session-key.ts'
import { sessionNotes } from './session-notes.ts'
import { type SessionRows, WINDOW_CONTEXT } from './session-rows.ts'
import { countText } from './text-table.ts'
import type { StepRow } from './types.ts'
import { windowRows } from './window.ts'

/** A step table lists every request up to this many; a longer session lists those near its breaks. */
const STEP_TABLE_LIMIT = 80

/**
 * A session: a line of facts that opens onto its chart and step table; open when it broke. A conversation
 * listed under its session (`inGroup`) is headed by its kind and name alone, the session's header above
 * naming the rest.
 */
export function sessionSection(session: Session, eventOf: EventLookup, inGroup = false): string {
  const label = sessionLabel(session.key)
  const { rows, summary } = session
  const facts: string[] = []
  if (summary !== undefined) {
    facts.push(escapeHtml(rows === undefined ? summary.model : rows.modelsText()))
    const warm = rows?.warm
    facts.push(
      `warm hit ratio ${percent(summary.hitRatioWarm)}${warm === undefined ? '' : ` (${countText(warm.read)} of ${countText(warm.input)} warm input tokens read from cache)`}`,
      `${countText(summary.lostTokens)} tokens lost`,
      `${countText(summary.providerLostTokens)} on the provider side`,
    )
  }
  facts.push(
    session.breaks === 0
      ? 'no break'
      : `<span class="lost">${countText(session.breaks)} ${plural(session.breaks, 'break')}, ${dollars(session.lostUsd, 4)} lost</span>`,
  )
  const requests = rows?.count ?? 0
  const failed = rows?.failed ?? 0
  facts.push(
    `${countText(requests)} ${plural(requests, 'request')}${failed === 0 ? '' : ` (${failed} failed)`}`,
  )
  const heading = inGroup
    ? `<h4>${conversationHeading(session)}</h4>`
    : `<h3>${escapeHtml(label)}</h3>${session.kind === 'main' ? '' : ` ${kindChip(session.kind)}`}${agentChip(session.agent)}`
  const parts = [
    `<details class="session ${sessionClass(session)}" id="${session.anchor}"${session.breaks > 0 ? ' open' : ''}>`,
    `<summary>${heading}<span class="meta">${facts.join(' · ')}</span></summary>`,
  ]
  // What the client did not ask for (nothing marked, nothing above the minimum): said, never a silent 0%.
  const notes = summary === undefined ? [] : sessionNotes(summary)
  if (notes.length > 0)
    parts.push(`<p class="note">${notes.map((note) => escapeHtml(note)).join('<br>')}</p>`)
  if (rows === undefined) {
    parts.push('<p class="meta">No step rows for this session.</p>', '</details>')
    return parts.join('\n')
  }
  const changes = changeTargets(session.anchor, rows.breakRows)
  parts.push(
    '<div class="session-body">',
    '<figure>',
    `<div class="chart-scroll">${sessionChart(rows, `${session.anchor}-chart`, `Tokens per request: ${label}`, { eventOf: (seq) => eventOf(session.key, seq), changeHref: (row) => changes.get(row) })}</div>`,
    '</figure>',
    changesSection(session.anchor, rows.breakRows),
    stepTable(session, rows, eventOf, changes),
    '</div>',
    '</details>',
  )
  return parts.join('\n')
}

const STEP_HEAD: readonly HeadCell[] = [
  { title: '#', numeric: true },
  { title: 'turn.step', numeric: false },
  { title: 'model', numeric: false },
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
  { title: 'break', numeric: false, note: 'cause, node, event: what it did; cost' },
  { title: 'cost', numeric: true },
  { title: 'time (s)', numeric: true, note: 'virtual' },
  { title: 'latency (ms)', numeric: true },
]

/** The prediction columns of a session whose usage came from the real provider, after cache-write. */
const PREDICTED_HEAD: readonly HeadCell[] = [
  { title: 'predicted read', numeric: true, note: 'simulator' },
  { title: 'predicted write', numeric: true, note: 'simulator' },
]

/** The session's requests, or in a long session those near a break with one line for each quiet stretch. */
function stepTable(
  session: Session,
  rows: SessionRows,
  eventOf: EventLookup,
  changes: ReadonlyMap<StepRow, string>,
): string {
  const predicted = rows.predicted
  // The prediction goes after cache-write.
  const after = STEP_HEAD.findIndex((cell) => cell.title === 'cache-write') + 1
  const head = predicted
    ? [...STEP_HEAD.slice(0, after), ...PREDICTED_HEAD, ...STEP_HEAD.slice(after)]
    : STEP_HEAD
  const optional = (value: number | undefined) => (value === undefined ? '' : countText(value))
  const slots = windowRows(rows, { limit: STEP_TABLE_LIMIT, context: WINDOW_CONTEXT, stretches: 'one' })
  const body = slots.map((slot) => {
    if (slot.kind === 'span') return elidedRow(rows, slot.start, slot.end, head.length)
    const index = slot.index
    const row = rows.row(index)
    const broke = row.breakCause !== undefined || row.providerCause !== undefined
    const classes = [row.ok ? '' : 'failed', broke ? 'break' : ''].filter((name) => name !== '')
    const idle = rows.idleBefore(index)
    // A request answered without usage: its numbers are unknown, not 0.
    const count = (value: number) => (row.usageNotReported === true ? '–' : countText(value))
    const cells = [
      String(index + 1),
      `${escapeHtml(stepLabel(row))}${statusTag(row)}`,
      modelCell(row),
      String(row.attempt),
      escapeHtml(row.headerReason ?? ''),
      count(row.inputTokens),
      count(row.cacheReadTokens),
      count(row.cacheWriteTokens),
      ...(predicted ? [optional(row.predictedCacheReadTokens), optional(row.predictedCacheWriteTokens)] : []),
      count(row.uncachedTokens),
      count(row.outputTokens),
      percent(row.hitRatio),
      count(row.idealCacheReadTokens),
      count(row.lostTokens),
      count(row.providerLostTokens),
      breakCell(row, session.key, eventOf, rows.switched.get(row), changes.get(row)),
      row.usageNotReported === true ? '–' : dollars(row.costUsd, 6),
      `${row.virtualTimeS.toFixed(3)}${idle === 0 ? '' : `<span class="sub">after idle ${durationText(idle)}</span>`}`,
      countText(row.latencyMs),
    ]
    const rowClass = classes.length === 0 ? '' : ` class="${classes.join(' ')}"`
    // Cells are right-aligned by the table's style; only text cells carry a class.
    return `<tr${rowClass}>${cells.map((cell, column) => (head[column]?.numeric === true ? `<td>${cell}</td>` : `<td class="label${column === head.length - 4 ? ' wrap' : ''}">${cell}</td>`)).join('')}</tr>`
  })
  const shown = slots.filter((slot) => slot.kind === 'request').length
  const summaryText =
    shown === rows.count
      ? `Steps (${countText(rows.count)} ${plural(rows.count, 'request')})`
      : `Steps (${countText(shown)} of ${countText(rows.count)} requests: those near breaks, the rest summed)`
  return [
    `<details><summary>${summaryText}</summary>`,
    '<div class="table-scroll"><table class="steps">',
    headRow(head),
    `<tbody>${body.join('\n')}</tbody>`,
    '</table></div>',
    '</details>',
  ].join('\n')
}

/** One line for a quiet stretch of a long session: how many requests, their hit ratio and cost. */
function elidedRow(rows: SessionRows, start: number, end: number, columns: number): string {
  const span = rows.span(start, end)
  const hit = span.input === 0 ? undefined : span.read / span.input
  const text = `${countText(span.count)} requests without a break, ${stepLabel(span.first)} to ${stepLabel(span.last)}: hit ratio ${percent(hit)} of ${countText(span.input)} input tokens, ${countText(span.lost)} tokens lost, ${dollars(
    span.costUsd,
    4,
  )} (every row is in steps.csv)`
  return `<tr class="elided"><td colspan="${columns}">… ${text}</td></tr>`
}

function statusTag(row: StepRow): string {
  if (!row.ok) return ' <span class="tag">failed</span>'
  if (row.usageNotReported === true) return ' <span class="tag">usage not reported</span>'
  return row.cold ? ' <span class="tag">cold</span>' : ''
}
