// The vocabulary and formats report.html's sections share: a session (or a conversation of one) and a
// session of several conversations as the page shows them, table heads, the break cell, the kind and
// agent chips, and numbers as dollars and percentages.

import type { ConversationKind } from '../providers/wire/exchange.ts'
import type { BreakEvent } from './break-events.ts'
import { conversationDetail } from './conversations.ts'
import { changeLink } from './html-change.ts'
import { providerAdvice } from './labels.ts'
import { escapeHtml } from './markup.ts'
import type { SessionKey } from './session-key.ts'
import type { SessionRows } from './session-rows.ts'
import { countText } from './text-table.ts'
import type { StepRow, SummaryRow } from './types.ts'

/** A session of the run, or a conversation of a captured agent's session (one variant either way). */
export interface Session {
  key: SessionKey
  /** Position in the run (summary order), from 0. */
  order: number
  anchor: string
  summary: SummaryRow | undefined
  /** Its requests; undefined for a session known by its summary row alone. */
  rows: SessionRows | undefined
  /** What the session's breaks cost in dollars: the client's changes and the provider side together. */
  lostUsd: number
  /** Requests with a break on either side. */
  breaks: number
  /** Claims that read this session and fail. */
  claimsFailed: number
  /** The session it is a conversation of, as its rows say; absent where the variant is the session. */
  session?: string
  /** Its kind (`main` when the rows name none). */
  kind: ConversationKind
  /** The agent and version that sent it, where its rows say. */
  agent?: string
}

/** A captured agent's session of several conversations: one line of sums, its conversations under it. */
export interface SessionGroup {
  /** The session: its scenario, provider and loop, the session id as its variant. */
  key: SessionKey
  anchor: string
  /** Main first, then subagents, side requests and compactions. */
  conversations: Session[]
  /** The conversations' summaries summed; undefined when one of them has no summary row. */
  total: SummaryRow | undefined
  /** Sums over the conversations. */
  lostUsd: number
  breaks: number
  claimsFailed: number
  /** Position of its first conversation in the run. */
  order: number
  /** The agent, when every conversation names the same one. */
  agent?: string
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
export function sessionClass(session: Pick<Session, 'breaks'>): string {
  return session.breaks === 0 ? 'quiet' : 'broke'
}

/** A conversation's kind as a chip. */
export function kindChip(kind: ConversationKind): string {
  return `<span class="kind kind-${kind}">${kind}</span>`
}

/** A conversation as the page names it under its session: its kind as a chip, then what follows it. */
export function conversationHeading(session: Session): string {
  const detail = conversationDetail({
    ...session.key,
    ...(session.session !== undefined ? { session: session.session } : {}),
    conversationKind: session.kind,
  })
  return `${kindChip(session.kind)}${escapeHtml(detail)}`
}

/** The agent and version as a chip, or nothing where the rows do not say. */
export function agentChip(agent: string | undefined): string {
  return agent === undefined ? '' : ` <span class="chip agent" title="agent">${escapeHtml(agent)}</span>`
}

/** A request's model cell: the model, and the catalog model that stood in for it. */
export function modelCell(row: StepRow): string {
  return `${escapeHtml(row.model)}${row.simulatedAs === undefined ? '' : `<span class="sub">simulated as ${escapeHtml(row.simulatedAs)}</span>`}`
}

/** Cache-read and input tokens of several sessions' successful warm requests; undefined for none. */
export function warmTokens(sessions: readonly SessionRows[]): { read: number; input: number } | undefined {
  if (sessions.length === 0) return undefined
  return {
    read: sessions.reduce((total, session) => total + session.warm.read, 0),
    input: sessions.reduce((total, session) => total + session.warm.input, 0),
  }
}

/**
 * A break as cause, node (with the two models of a switch) and the event behind it (its type and what it
 * did), then what it cost in dollars, and a link to what changed there where the page draws it.
 */
export function breakCell(
  row: StepRow,
  key: SessionKey,
  eventOf: EventLookup,
  previousModel?: string | undefined,
  changeHref?: string | undefined,
): string {
  const parts: string[] = []
  if (row.breakCause !== undefined && row.breakCause !== row.providerCause) {
    const event = row.breakEventSeq === undefined ? undefined : eventOf(key, row.breakEventSeq)
    // Each model name kept on one line: a name broken at its hyphens reads as two.
    const models =
      previousModel === undefined
        ? undefined
        : `(<span class="nowrap">${escapeHtml(previousModel)}</span> → <span class="nowrap">${escapeHtml(row.model)}</span>)`
    const node = row.breakNode === undefined ? undefined : escapeHtml(row.breakNode)
    const where = [
      node === undefined || models === undefined ? (node ?? models) : `${node} ${models}`,
      row.breakEventSeq === undefined
        ? undefined
        : escapeHtml(`event ${row.breakEventSeq}${event === undefined ? '' : ` ${event.type}`}`),
    ].filter((part) => part !== undefined)
    const lines = [
      where.length === 0 ? undefined : where.join(' · '),
      event === undefined ? undefined : escapeHtml(event.description),
      escapeHtml(`${countText(row.lostTokens)} tokens, ${dollars(rowLostUsd(row), 4)}`),
    ].filter((line) => line !== undefined)
    parts.push(
      `<strong>${escapeHtml(row.breakCause)}</strong>${lines.map((line) => `<span class="sub">${line}</span>`).join('')}`,
    )
  }
  if (row.providerCause !== undefined) {
    const advice = providerAdvice(row)
    parts.push(
      `<strong>${escapeHtml(row.providerCause)}</strong><span class="sub">${escapeHtml(`${countText(row.providerLostTokens)} tokens, ${dollars(row.providerLostUsd, 4)}${advice === undefined ? '' : `; ${advice}`}`)}</span>`,
    )
  }
  return `${parts.join('<br>')}${changeLink(changeHref)}`
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
