// One session of report.html, or one conversation of a captured agent's session: a summary line of
// facts that opens onto its chart and its step table, a long session's table windowed around its breaks
// (window.ts).

import { durationText, sessionChart } from './chart.ts'
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
  modelsText,
  percent,
  plural,
  type Session,
  sessionClass,
  warmTokens,
} from './html-parts.ts'
import { stepLabel } from './labels.ts'
import { escapeHtml } from './markup.ts'
import { sessionLabel } from './session-key.ts'
import { countText } from './text-table.ts'
import type { StepRow } from './types.ts'
import { IDLE_SECONDS, idleBefore, slotRows, windowRows } from './window.ts'

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
    facts.push(escapeHtml(rows.length === 0 ? summary.model : modelsText(rows)))
    const warm = warmTokens(rows)
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
  const failed = rows.filter((row) => !row.ok).length
  facts.push(
    `${countText(rows.length)} ${plural(rows.length, 'request')}${failed === 0 ? '' : ` (${failed} failed)`}`,
  )
  const heading = inGroup
    ? `<h4>${conversationHeading(session)}</h4>`
    : `<h3>${escapeHtml(label)}</h3>${session.kind === 'main' ? '' : ` ${kindChip(session.kind)}`}${agentChip(session.agent)}`
  const parts = [
    `<details class="session ${sessionClass(session)}" id="${session.anchor}"${session.breaks > 0 ? ' open' : ''}>`,
    `<summary>${heading}<span class="meta">${facts.join(' · ')}</span></summary>`,
  ]
  if (rows.length === 0) {
    parts.push('<p class="meta">No step rows for this session.</p>', '</details>')
    return parts.join('\n')
  }
  parts.push(
    '<div class="session-body">',
    '<figure>',
    `<div class="chart-scroll">${sessionChart(rows, `${session.anchor}-chart`, `Tokens per request: ${label}`, { eventOf: (seq) => eventOf(session.key, seq) })}</div>`,
    '</figure>',
    stepTable(session, eventOf),
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
function stepTable(session: Session, eventOf: EventLookup): string {
  const { rows } = session
  const predicted = rows.some((row) => row.predictedCacheReadTokens !== undefined)
  // The prediction goes after cache-write.
  const after = STEP_HEAD.findIndex((cell) => cell.title === 'cache-write') + 1
  const head = predicted
    ? [...STEP_HEAD.slice(0, after), ...PREDICTED_HEAD, ...STEP_HEAD.slice(after)]
    : STEP_HEAD
  const optional = (value: number | undefined) => (value === undefined ? '' : countText(value))
  const slots = windowRows(rows, {
    limit: STEP_TABLE_LIMIT,
    context: 2,
    idleSeconds: IDLE_SECONDS,
    stretches: 'one',
  })
  const body = slots.map((slot) => {
    if (slot.kind === 'span') return elidedRow(slotRows(rows, slot), head.length)
    const index = slot.index
    const row = rows[index] as StepRow
    const broke = row.breakCause !== undefined || row.providerCause !== undefined
    const classes = [row.ok ? '' : 'failed', broke ? 'break' : ''].filter((name) => name !== '')
    const idle = idleBefore(rows, index)
    const cells = [
      String(index + 1),
      `${escapeHtml(stepLabel(row))}${statusTag(row)}`,
      modelCell(row),
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
      breakCell(row, session.key, eventOf, session.switched.get(row)),
      dollars(row.costUsd, 6),
      `${row.virtualTimeS.toFixed(3)}${idle === 0 ? '' : `<span class="sub">after idle ${durationText(idle)}</span>`}`,
      countText(row.latencyMs),
    ]
    const rowClass = classes.length === 0 ? '' : ` class="${classes.join(' ')}"`
    // Cells are right-aligned by the table's style; only text cells carry a class.
    return `<tr${rowClass}>${cells.map((cell, column) => (head[column]?.numeric === true ? `<td>${cell}</td>` : `<td class="label${column === head.length - 4 ? ' wrap' : ''}">${cell}</td>`)).join('')}</tr>`
  })
  const shown = slots.filter((slot) => slot.kind === 'request').length
  const summaryText =
    shown === rows.length
      ? `Steps (${countText(rows.length)} ${plural(rows.length, 'request')})`
      : `Steps (${countText(shown)} of ${countText(rows.length)} requests: those near breaks, the rest summed)`
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
function elidedRow(rows: readonly StepRow[], columns: number): string {
  const first = rows[0] as StepRow
  const last = rows[rows.length - 1] as StepRow
  const ok = rows.filter((row) => row.ok)
  const sum = (pick: (row: StepRow) => number) => ok.reduce((total, row) => total + pick(row), 0)
  const input = sum((row) => row.inputTokens)
  const hit = input === 0 ? undefined : sum((row) => row.cacheReadTokens) / input
  const text = `${countText(rows.length)} requests without a break, ${stepLabel(first)} to ${stepLabel(last)}: hit ratio ${percent(hit)} of ${countText(input)} input tokens, ${countText(sum((row) => row.lostTokens))} tokens lost, ${dollars(
    sum((row) => row.costUsd),
    4,
  )} (every row is in steps.csv)`
  return `<tr class="elided"><td colspan="${columns}">… ${text}</td></tr>`
}

function statusTag(row: StepRow): string {
  if (!row.ok) return ' <span class="tag">failed</span>'
  return row.cold ? ' <span class="tag">cold</span>' : ''
}
