// The summary table of report.html: one row per session worst first by lost dollars, a captured agent's
// session as a row of its conversations' sums with each conversation's row under it.

import {
  conversationHeading,
  dollars,
  type HeadCell,
  headRow,
  ratioCell,
  type Session,
  type SessionGroup,
  sessionClass,
  warmTokens,
} from './html-parts.ts'
import { escapeHtml } from './markup.ts'
import { sessionNotes } from './session-notes.ts'
import { countText } from './text-table.ts'
import type { SummaryRow } from './types.ts'

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
  { title: 'lost', numeric: true, note: 'USD, both sides' },
  { title: 'cost', numeric: true },
  { title: 'ideal cost', numeric: true },
  { title: 'breaks', numeric: true },
  { title: 'largest break', numeric: false, note: 'tokens at turn.step' },
  { title: 'claims', numeric: false, note: 'hold / read this session' },
]

/** The three label cells of a row: scenario, variant, provider with the model under it. */
interface Labels {
  scenario: string
  variant: string
  provider: string
}

/** The summary table, worst first: a session of several conversations as its total, then theirs. */
export function summarySection(groups: readonly SessionGroup[]): string {
  const body = groups.flatMap((group) => {
    const [only] = group.conversations
    if (only !== undefined && group.conversations.length === 1) return [sessionRow(only)]
    const rows = group.conversations.flatMap((session) => (session.rows === undefined ? [] : [session.rows]))
    const warm = warmTokens(rows)
    // Conversations interleave: the session's models are the distinct ones, not a sequence of switches.
    const models =
      rows.length === 0
        ? group.total?.model
        : [...new Set(rows.flatMap((session) => session.models))].join(', ')
    const labels = {
      scenario: `<a href="#${group.anchor}">${escapeHtml(group.key.scenario)}</a>`,
      variant: `${escapeHtml(group.key.variant)}<span class="sub">session of ${group.conversations.length} conversations</span>`,
      provider: providerCell(group.key.provider, models),
    }
    return [
      summaryRow(labels, group.total, group, warm?.input, 'session-total'),
      ...group.conversations.map((session) => {
        const conversation = {
          scenario: '',
          variant: `<a href="#${session.anchor}">${conversationHeading(session)}</a>`,
          provider: providerCell(session.key.provider, sessionModels(session)),
        }
        return summaryRow(conversation, session.summary, session, session.rows?.warm.input, 'conversation')
      }),
    ]
  })
  return [
    '<section id="summary">',
    '<h2>Summary</h2>',
    '<p class="note">Worst first by lost dollars. Hit ratios are token-weighted: cache-read tokens ÷ input tokens of the successful requests, with the denominator in tokens under each value. “Warm” leaves out each session’s first request; the write ratio is cache-write ÷ input tokens. A captured agent’s session of several conversations is a row of their sums (its hit ratios from the summed tokens, never an average), its conversations under it.</p>',
    '<div class="table-scroll"><table class="summary">',
    headRow(SUMMARY_HEAD),
    `<tbody>${body.join('\n')}</tbody>`,
    '</table></div>',
    ...notesList(groups),
    '</section>',
  ].join('\n')
}

/** How many noted sessions the list under the table names; summary.csv has every one. */
const NOTED_SESSIONS = 10

/**
 * What the clients did not ask for, under the table where a 0.00% is read (nothing marked for caching, no
 * prompt above the minimum): each noted conversation linked to its section, the first few by name.
 */
function notesList(groups: readonly SessionGroup[]): string[] {
  const noted = groups.flatMap((group) =>
    group.conversations.flatMap((session) => {
      const notes = session.summary === undefined ? [] : sessionNotes(session.summary)
      if (notes.length === 0) return []
      const { scenario, variant, provider } = session.key
      const name = `${scenario} · ${variant} · ${provider}`
      return [
        `<li><a href="#${session.anchor}">${escapeHtml(name)}</a>: ${escapeHtml(notes.join('; '))}</li>`,
      ]
    }),
  )
  if (noted.length === 0) return []
  const more = noted.length - NOTED_SESSIONS
  return [
    '<p class="note">What the client did not ask for:</p>',
    `<ul class="notes">${noted.slice(0, NOTED_SESSIONS).join('')}${more > 0 ? `<li>and ${more} more (summary.csv: nothing_marked_*, below_minimum_*)</li>` : ''}</ul>`,
  ]
}

/** A session of its own (a run's, or a captured session of one conversation). */
function sessionRow(session: Session): string {
  const { scenario, variant, provider } = session.key
  const labels = {
    scenario: `<a href="#${session.anchor}">${escapeHtml(scenario)}</a>`,
    variant: `${escapeHtml(variant)}${session.key.loop === 'dsh' ? '<span class="sub">DSH loop</span>' : ''}`,
    provider: providerCell(provider, session.summary === undefined ? undefined : sessionModels(session)),
  }
  return summaryRow(labels, session.summary, session, session.rows?.warm.input)
}

function summaryRow(
  labels: Labels,
  summary: SummaryRow | undefined,
  entry: { breaks: number; lostUsd: number },
  warmInput: number | undefined,
  kind?: 'session-total' | 'conversation',
): string {
  const rowClass = ` class="${[kind, sessionClass(entry)].filter((name) => name !== undefined).join(' ')}"`
  const labelCells = [
    `<td class="label">${labels.scenario}</td>`,
    `<td class="label">${labels.variant}</td>`,
    `<td class="label">${labels.provider}</td>`,
  ].join('')
  if (summary === undefined)
    return `<tr${rowClass}>${labelCells}<td colspan="${SUMMARY_HEAD.length - 3}" class="meta">no summary row</td></tr>`
  const failed =
    summary.failedAttempts === 0
      ? ''
      : `<span class="sub">+${countText(summary.failedAttempts)} failed</span>`
  const unreported =
    summary.usageNotReported === undefined
      ? ''
      : `<span class="sub">${countText(summary.usageNotReported)} usage not reported</span>`
  // No request reported usage: its sums are unknown, shown as such rather than as 0 or $0.
  const unknown = summary.requests > 0 && summary.usageNotReported === summary.requests
  const measured = (text: string) => (unknown ? '<span class="meta">–</span>' : text)
  const largest = summary.largestBreak
  const cells = [
    `${countText(summary.requests)}${failed}${unreported}`,
    ratioCell(summary.hitRatioWarm, warmInput),
    ratioCell(summary.hitRatioAll, summary.inputTokens),
    ratioCell(summary.writeRatio, summary.inputTokens),
    measured(countText(summary.lostTokens)),
    measured(countText(summary.providerLostTokens)),
    measured(entry.lostUsd > 0 ? `<span class="lost">${dollars(entry.lostUsd, 4)}</span>` : dollars(0, 4)),
    measured(dollars(summary.costUsd, 4)),
    measured(dollars(summary.idealCostUsd, 4)),
    countText(summary.breaks),
    largest === undefined
      ? '<span class="meta">none</span>'
      : `${countText(largest.lostTokens)} at ${largest.turn}.${largest.step}<span class="sub">${escapeHtml(largest.cause ?? 'cause unknown')}</span>`,
    claimsCell(summary),
  ]
  const numeric = SUMMARY_HEAD.slice(3).map((head) => head.numeric)
  return `<tr${rowClass}>${labelCells}${cells.map((cell, index) => `<td class="${numeric[index] === true ? 'num' : 'label'}">${cell}</td>`).join('')}</tr>`
}

/** The models a session used, in order; its summary's when it has no rows. */
function sessionModels(session: Session): string | undefined {
  return session.rows === undefined ? session.summary?.model : session.rows.modelsText()
}

/** The provider, and the models under it, a line breaking between models but never within a name. */
function providerCell(provider: string, models: string | undefined): string {
  if (models === undefined) return escapeHtml(provider)
  const names = models.split(/(?<= →|,) /).map((name) => `<span class="nowrap">${escapeHtml(name)}</span>`)
  return `${escapeHtml(provider)}<span class="sub">${names.join(' ')}</span>`
}

function claimsCell(summary: SummaryRow): string {
  const total = summary.claimsHeld + summary.claimsFailed
  if (total === 0) return '<span class="meta">–</span>'
  if (summary.claimsFailed === 0) return `${summary.claimsHeld} of ${total}`
  return `<strong class="fail">${summary.claimsFailed} of ${total} fail</strong>`
}
