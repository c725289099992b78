// The run summary as a user reads it in a terminal after `cachelab run` (and `report`, `import`): one
// line per session grouped under its scenario (a captured agent's session as a line summing its
// conversations, each listed under it by kind and name), and the costliest breaks under it, fitted to 100
// columns (120 with conversations), breaks and failing claims highlighted; colour only when asked (a
// terminal without NO_COLOR), so pipes and CI logs stay plain.

import { changeLines } from './break-change.ts'
import { conversationName, groupBySessionId, hasConversations } from './conversations.ts'
import { stepLabel } from './labels.ts'
import { sessionLabel } from './session-key.ts'
import { notesUnderTable } from './session-notes.ts'
import { sessionTotal } from './summary.ts'
import { countText } from './text-table.ts'
import type { BreakRow, SummaryRow } from './types.ts'

/** How the summary is printed. */
export interface SummaryTableOptions {
  /** ANSI colour: breaks and losses in yellow, failing claims in red, zeros dimmed. Off by default. */
  colour?: boolean
  /** Widest line in columns; 100 unless given, 120 when a session holds several conversations. */
  width?: number
  /** How many breaks `breaksDigest` lists; 10 unless given. */
  limit?: number
}

/** The width the summary fits when none is given. */
export const SUMMARY_WIDTH = 100
/** The width when sessions hold conversations: room for a 36-character session id in full. */
export const CONVERSATIONS_WIDTH = 120

/** What a cell is for: it decides the colour, never the text. */
type Tone = 'plain' | 'dim' | 'break' | 'fail' | 'heading'

interface Cell {
  text: string
  tone: Tone
}

interface Column {
  /** Two header lines: a word above the title, or empty. */
  title: readonly [string, string]
  align: 'left' | 'right'
}

// The matrix's longest variant (22 with its indent) and provider (16) leave these 61 columns.
const COLUMNS: readonly Column[] = [
  { title: ['scenario', '  variant'], align: 'left' },
  { title: ['', 'provider'], align: 'left' },
  { title: ['', 'requests'], align: 'right' },
  { title: ['hit', 'warm'], align: 'right' },
  { title: ['lost', 'tokens'], align: 'right' },
  { title: ['lost', 'USD'], align: 'right' },
  { title: ['cost', 'USD'], align: 'right' },
  { title: ['', 'breaks'], align: 'right' },
  { title: ['', 'claims'], align: 'left' },
]

const GAP = '  '
/** Breaks listed under the table. */
const DIGEST_LENGTH = 10

const ANSI: Record<Tone, [string, string]> = {
  plain: ['', ''],
  dim: ['\u001b[2m', '\u001b[22m'],
  break: ['\u001b[33m', '\u001b[39m'],
  fail: ['\u001b[1;31m', '\u001b[22;39m'],
  heading: ['\u001b[1m', '\u001b[22m'],
}

/**
 * The summary table: counting as summary.csv does (successful requests, `+n` failed attempts), the warm
 * hit ratio token-weighted, what the breaks lost in tokens and in dollars (both sides), and per session
 * its largest break or, when a claim that reads it fails, that instead. A session of several conversations
 * is one line of their sums (the warm hit ratio their warm reads over their warm inputs), its conversations
 * under it: main, subagents, side requests, compactions.
 */
export function summaryTable(rows: readonly SummaryRow[], options: SummaryTableOptions = {}): string {
  const width =
    options.width ?? (hasConversations(groupBySessionId(rows)) ? CONVERSATIONS_WIDTH : SUMMARY_WIDTH)
  const paint = (cell: Cell) =>
    options.colour === true && cell.tone !== 'plain' && cell.text !== ''
      ? `${ANSI[cell.tone][0]}${cell.text}${ANSI[cell.tone][1]}`
      : cell.text
  const groups = groupByScenario(rows)
  const body = groups.map((group) => scenarioLines(group.rows))
  const widths = fitWidths(
    COLUMNS.map((column, index) =>
      Math.max(
        column.title[0].length,
        column.title[1].length,
        ...body.flat().map((cells) => (cells[index]?.text ?? '').length),
      ),
    ),
    width,
  )
  const line = (cells: readonly Cell[]) =>
    COLUMNS.map((column, index) => {
      const cell = cells[index] ?? { text: '', tone: 'plain' }
      const size = widths[index] ?? 0
      const text = cut(cell.text, size)
      const padding = ' '.repeat(Math.max(0, size - text.length))
      return column.align === 'left' ? paint({ ...cell, text }) + padding : padding + paint({ ...cell, text })
    })
      .join(GAP)
      .trimEnd()
  const lines = [
    line(COLUMNS.map((column) => ({ text: column.title[0], tone: 'dim' }))),
    line(COLUMNS.map((column) => ({ text: column.title[1], tone: 'dim' }))),
    line(widths.map((size) => ({ text: '-'.repeat(size), tone: 'dim' }))),
  ]
  for (const [index, group] of groups.entries()) {
    lines.push(paint({ text: cut(group.scenario, width), tone: 'heading' }))
    for (const cells of body[index] ?? []) lines.push(line(cells))
  }
  for (const text of usageNote(rows)) lines.push(paint({ text: cut(text, width), tone: 'break' }))
  for (const text of notesUnderTable(rows)) lines.push(paint({ text: cut(text, width), tone: 'break' }))
  return lines.filter((text) => text.trim() !== '').join('\n')
}

/** How many sessions the usage note names. */
const NAMED_SESSIONS = 3

/**
 * Lines under the table for requests answered without usage, none when every request reported its
 * usage: how many, in which sessions, and that the sums leave them out.
 */
export function usageNote(rows: readonly SummaryRow[]): string[] {
  const missing = rows.filter((row) => (row.usageNotReported ?? 0) > 0)
  if (missing.length === 0) return []
  const count = missing.reduce((sum, row) => sum + (row.usageNotReported ?? 0), 0)
  const requests = rows.reduce((sum, row) => sum + row.requests, 0)
  const named = missing.slice(0, NAMED_SESSIONS)
  const more = missing.length - named.length
  return [
    `usage not reported for ${countText(count)} of ${countText(requests)} requests: the sums leave them out ("-" where a session reported none)`,
    ...named.map(
      (row) =>
        `  ${sessionLabel(row)}: ${countText(row.usageNotReported ?? 0)} of ${countText(row.requests)}`,
    ),
    ...(more > 0 ? [`  and ${more} more sessions (summary.csv, usage_not_reported)`] : []),
  ]
}

/**
 * Whether to colour output on a stream: only a terminal, and never when `NO_COLOR` is set to anything
 * but the empty string (https://no-color.org).
 */
export function wantsColour(
  stream: { isTTY?: boolean },
  environment: Readonly<Record<string, string | undefined>>,
): boolean {
  const noColour = environment.NO_COLOR
  return stream.isTTY === true && (noColour === undefined || noColour === '')
}

function groupByScenario(rows: readonly SummaryRow[]): Array<{ scenario: string; rows: SummaryRow[] }> {
  const groups = new Map<string, SummaryRow[]>()
  for (const row of rows) {
    const group = groups.get(row.scenario)
    if (group === undefined) groups.set(row.scenario, [row])
    else group.push(row)
  }
  return [...groups.entries()].map(([scenario, group]) => ({ scenario, rows: group }))
}

/** A scenario's lines: each session's, and a session of several conversations followed by theirs. */
function scenarioLines(rows: readonly SummaryRow[]): Cell[][] {
  const variantText = (variant: string, row: SummaryRow) =>
    row.loop === 'dsh' ? `${variant} (dsh loop)` : variant
  return groupBySessionId(rows).flatMap(({ key, conversations }) => {
    const [only] = conversations
    if (only !== undefined && conversations.length === 1)
      return [sessionCells(only, `  ${variantText(only.variant, only)}`, 'plain')]
    const total = sessionTotal(key, conversations)
    return [
      sessionCells(total, `  ${variantText(key.variant, total)}`, 'heading'),
      ...conversations.map((row) => sessionCells(row, `    ${conversationName(row)}`, 'plain')),
    ]
  })
}

function sessionCells(row: SummaryRow, label: string, tone: Tone): Cell[] {
  const lostUsd = row.costUsd - row.idealCostUsd + row.providerLostUsd
  const lostTokens = row.lostTokens + row.providerLostTokens
  // No request of the session reported usage: its sums are unknown, not 0.
  const unknown = row.requests > 0 && row.usageNotReported === row.requests
  const amount = (text: string, value: number): Cell =>
    unknown ? { text: '-', tone: 'dim' } : { text, tone: value > 0 ? 'break' : 'dim' }
  const claims = row.claimsHeld + row.claimsFailed
  return [
    { text: label, tone: row.claimsFailed > 0 ? 'fail' : tone },
    { text: row.provider, tone: 'plain' },
    {
      text: `${countText(row.requests)}${row.failedAttempts === 0 ? '' : `+${countText(row.failedAttempts)}`}`,
      tone: 'plain',
    },
    { text: percentText(row.hitRatioWarm), tone: 'plain' },
    amount(countText(lostTokens), lostTokens),
    amount(lostUsd.toFixed(4), Number(lostUsd.toFixed(4))),
    { text: unknown ? '-' : row.costUsd.toFixed(4), tone: 'plain' },
    amount(String(row.breaks), row.breaks),
    claims === 0
      ? { text: '-', tone: 'dim' }
      : row.claimsFailed > 0
        ? { text: `${row.claimsFailed} fail`, tone: 'fail' }
        : { text: `${row.claimsHeld}/${claims}`, tone: 'plain' },
  ]
}

/**
 * The costliest breaks of a run under its table, worst first by the dollars they lost (both sides): which
 * session, where, why, and what it cost; each line cut to the width.
 */
export function breaksDigest(breaks: readonly BreakRow[], options: SummaryTableOptions = {}): string {
  if (breaks.length === 0) return ''
  const width = options.width ?? SUMMARY_WIDTH
  const lost = (entry: BreakRow) => entry.lostUsd + entry.providerLostUsd
  const worst = breaks
    .map((entry, order) => ({ entry, order }))
    .sort((left, right) => lost(right.entry) - lost(left.entry) || left.order - right.order)
    .slice(0, options.limit ?? DIGEST_LENGTH)
  const dollars = worst.map(({ entry }) => `$${lost(entry).toFixed(4)}`)
  const size = Math.max(...dollars.map((text) => text.length))
  const lines = worst.flatMap(({ entry }, index) => {
    const cause = entry.cause ?? entry.providerCause ?? 'unknown cause'
    const tokens = countText(entry.lostTokens + entry.providerLostTokens)
    // Cause and cost before the session: a line cut to the width loses the end of the label, not the why.
    const rest = `  ${cause} at ${stepLabel(entry)}, ${tokens} tokens: ${sessionLabel(entry)}`
    const amount = (dollars[index] ?? '').padStart(size)
    const text = cut(`  ${amount}${rest}`, width)
    // What changed, under the cause: the previous request's side and this one's, as a test runner shows them.
    const change = entry.change === undefined ? [] : changeLines(entry.change)
    return [
      options.colour === true
        ? `${ANSI.break[0]}${text.slice(0, 2 + size)}${ANSI.break[1]}${text.slice(2 + size)}`
        : text,
      ...change.map((line) => cut(`${' '.repeat(size + 6)}${line}`, width)),
    ]
  })
  const head =
    breaks.length > worst.length
      ? `costliest breaks (${worst.length} of ${countText(breaks.length)}, all in breaks.csv):`
      : `breaks, costliest first (${breaks.length}):`
  return [head, ...lines].join('\n')
}

/** Column widths within `width`: the label column gives way first, then the provider. */
function fitWidths(natural: readonly number[], width: number): number[] {
  const widths = [...natural]
  const total = () => widths.reduce((sum, size) => sum + size, 0) + GAP.length * (widths.length - 1)
  const shrink = (index: number, floor: number) => {
    const over = total() - width
    const current = widths[index] ?? 0
    if (over > 0) widths[index] = Math.max(floor, current - over)
  }
  shrink(0, 12)
  shrink(1, 8)
  return widths
}

/** Text cut to `size` characters, with an ellipsis where it was cut. */
function cut(text: string, size: number): string {
  return text.length <= size ? text : `${text.slice(0, Math.max(0, size - 1))}…`
}

function percentText(value: number | undefined): string {
  return value === undefined ? '-' : `${(value * 100).toFixed(2)}%`
}
