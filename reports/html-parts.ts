// The vocabulary and formats report.html's sections share: a session as the page shows it, table heads,
// the break cell, and numbers as dollars and percentages.

import type { BreakEvent } from './break-events.ts'
import { providerAdvice } from './labels.ts'
import { escapeHtml } from './markup.ts'
import type { SessionKey } from './session-key.ts'
import { countText } from './text-table.ts'
import type { StepRow, SummaryRow } from './types.ts'

export interface Session {
  key: SessionKey
  /** Position in the run (summary order), from 0. */
  order: number
  anchor: string
  summary: SummaryRow | undefined
  rows: readonly StepRow[]
  /** What the session's breaks cost in dollars: the client's changes and the provider side together. */
  lostUsd: number
  /** Requests with a break on either side. */
  breaks: number
  /** Claims that read this session and fail. */
  claimsFailed: number
}

/** Looks up the described event behind a break. */
export type EventLookup = (key: SessionKey, seq: number) => BreakEvent | undefined

export interface HeadCell {
  title: string
  numeric: boolean
  /** A second line under the title (the denominator of a ratio). */
  note?: string
}

export function headRow(cells: readonly HeadCell[]): string {
  const cell = (head: HeadCell) =>
    `<th class="${head.numeric ? 'num' : 'label'}" scope="col">${escapeHtml(head.title)}${head.note === undefined ? '' : `<span class="sub">${escapeHtml(head.note)}</span>`}</th>`
  return `<thead><tr>${cells.map(cell).join('')}</tr></thead>`
}

/** What a request's client-side break cost in dollars: its cost above the cost at its ideal read. */
export function rowLostUsd(row: StepRow): number {
  return row.costUsd - row.idealCostUsd
}

/** The classes a session's entries share: `quiet` (hidden by the breaks-only filter) when it has no break. */
export function sessionClass(session: Session): string {
  return session.breaks === 0 ? 'quiet' : 'broke'
}

/** Cache-read and input tokens of the session's warm requests (successful, after the first). */
export function warmTokens(rows: readonly StepRow[]): { read: number; input: number } | undefined {
  if (rows.length === 0) return undefined
  const warm = rows.filter((row) => row.ok && !row.cold)
  return {
    read: warm.reduce((total, row) => total + row.cacheReadTokens, 0),
    input: warm.reduce((total, row) => total + row.inputTokens, 0),
  }
}

/** A break as cause, node and the event behind it (its type and what it did), then what it cost in dollars. */
export function breakCell(row: StepRow, key: SessionKey, eventOf: EventLookup): string {
  const parts: string[] = []
  if (row.breakCause !== undefined && row.breakCause !== row.providerCause) {
    const event = row.breakEventSeq === undefined ? undefined : eventOf(key, row.breakEventSeq)
    const where = [
      row.breakNode,
      row.breakEventSeq === undefined
        ? undefined
        : `event ${row.breakEventSeq}${event === undefined ? '' : ` ${event.type}`}`,
    ].filter((part) => part !== undefined)
    const lines = [
      where.length === 0 ? undefined : where.join(' · '),
      event?.description,
      `${countText(row.lostTokens)} tokens, ${dollars(rowLostUsd(row), 4)}`,
    ].filter((line) => line !== undefined)
    parts.push(
      `<strong>${escapeHtml(row.breakCause)}</strong>${lines.map((line) => `<span class="sub">${escapeHtml(line)}</span>`).join('')}`,
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
export function ratioCell(ratio: number | undefined, denominator: number | undefined): string {
  return `${percent(ratio)}${denominator === undefined ? '' : `<span class="sub">of ${countText(denominator)}</span>`}`
}

export function percent(ratio: number | undefined): string {
  return ratio === undefined ? '–' : `${(ratio * 100).toFixed(2)}%`
}

/** Dollars in a chip: cents from a cent up, four decimals below, `$0` when nothing was lost. */
export function shortDollars(value: number): string {
  if (value < 0.00005) return '$0'
  return dollars(value, value < 0.01 ? 4 : 2)
}

export function dollars(value: number, digits: number): string {
  return `$${value.toFixed(digits)}`
}

export function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`
}
