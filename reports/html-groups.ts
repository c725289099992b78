// Captured agents' sessions in report.html: the page's sessions grouped by the agent session they are
// conversations of, a session of several shown as a header of sums over its conversations (in the index,
// the summary and the sessions), each conversation named by its kind and what follows the session id.

import { groupBySessionId } from './conversations.ts'
import {
  agentChip,
  conversationHeading,
  dollars,
  type EventLookup,
  percent,
  plural,
  type Session,
  type SessionGroup,
  sessionClass,
  shortDollars,
} from './html-parts.ts'
import { sessionSection } from './html-session.ts'
import { escapeHtml } from './markup.ts'
import { sessionLabel } from './session-key.ts'
import { sessionTotal } from './summary.ts'
import { countText } from './text-table.ts'
import type { SummaryRow } from './types.ts'

/** The sessions grouped by agent session, in first-seen order; a session of one conversation is its own group. */
export function groupsOf(sessions: readonly Session[]): SessionGroup[] {
  const labelled = sessions.map((session) => ({
    ...session.key,
    ...(session.session !== undefined ? { session: session.session } : {}),
    conversationKind: session.kind,
    entry: session,
  }))
  let count = 0
  return groupBySessionId(labelled).map(({ key, conversations }) => {
    const members = conversations.map((conversation) => conversation.entry)
    // A group holds at least the conversation that opened it.
    const first = members[0] as Session
    const sum = (pick: (session: Session) => number) =>
      members.reduce((total, session) => total + pick(session), 0)
    const common = {
      lostUsd: sum((session) => session.lostUsd),
      breaks: sum((session) => session.breaks),
      claimsFailed: sum((session) => session.claimsFailed),
      order: Math.min(...members.map((session) => session.order)),
    }
    if (members.length === 1)
      return {
        key: first.key,
        anchor: first.anchor,
        conversations: members,
        total: first.summary,
        ...common,
        ...(first.agent !== undefined ? { agent: first.agent } : {}),
      }
    count += 1
    const summaries = members.flatMap((session) => (session.summary === undefined ? [] : [session.summary]))
    const agents = new Set(members.map((session) => session.agent))
    return {
      key,
      anchor: `conversations-${count}`,
      conversations: members,
      total: summaries.length === members.length ? sessionTotal(key, summaries) : undefined,
      ...common,
      ...(agents.size === 1 && first.agent !== undefined ? { agent: first.agent } : {}),
    }
  })
}

/** Whether the group lists several conversations under a session header. */
export function isSessionOfConversations(group: SessionGroup): boolean {
  return group.conversations.length > 1
}

/** How many conversations of each kind, in the order the page lists them: `1 main, 2 subagent`. */
export function kindsText(group: SessionGroup): string {
  const counts = new Map<string, number>()
  for (const session of group.conversations) counts.set(session.kind, (counts.get(session.kind) ?? 0) + 1)
  return [...counts.entries()].map(([kind, count]) => `${count} ${kind}`).join(', ')
}

/** One chip of the index: a link to a section, its breaks and lost dollars as a badge, a hint on hover. */
export function indexChip(
  target: { anchor: string; breaks: number; lostUsd: number; claimsFailed: number },
  textHtml: string,
  hint: string,
  extraClass = '',
): string {
  const classes = ['chip', extraClass, sessionClass(target), target.claimsFailed > 0 ? 'failing' : '']
  const badge = target.breaks === 0 ? '' : `<b>${target.breaks} · ${shortDollars(target.lostUsd)}</b>`
  return `<a class="${classes.filter((name) => name !== '').join(' ')}" href="#${target.anchor}" title="${escapeHtml(hint)}">${textHtml}${badge}</a>`
}

/** What a chip's hint says of a session or conversation: its breaks, lost dollars and failing claims. */
export function chipHint(
  label: string,
  target: { breaks: number; lostUsd: number; claimsFailed: number },
): string {
  const claims =
    target.claimsFailed > 0 ? `, ${target.claimsFailed} failing ${plural(target.claimsFailed, 'claim')}` : ''
  return `${label}: ${target.breaks} ${plural(target.breaks, 'break')}, ${dollars(target.lostUsd, 4)} lost${claims}`
}

/** A session of several conversations in the index: the session's chip (its totals), then each conversation's. */
export function groupChips(group: SessionGroup): string {
  const head = indexChip(
    group,
    escapeHtml(group.key.variant),
    chipHint(`${sessionLabel(group.key)}, ${group.conversations.length} conversations`, group),
    'session-chip',
  )
  const members = group.conversations.map((session) =>
    indexChip(session, conversationHeading(session), chipHint(sessionLabel(session.key), session)),
  )
  return `<span class="chip-group ${sessionClass(group)}">${head}${members.join('')}</span>`
}

/**
 * A session of several conversations among the sessions: a header of what they add up to (the warm hit
 * ratio their warm reads over their warm inputs), then each conversation, main first.
 */
export function groupSection(group: SessionGroup, eventOf: EventLookup): string {
  const { total } = group
  const requests = group.conversations.reduce((sum, session) => sum + (session.rows?.count ?? 0), 0)
  const facts = [`${group.conversations.length} conversations (${kindsText(group)})`]
  if (total !== undefined) facts.push(...totalFacts(total))
  facts.push(
    group.breaks === 0
      ? 'no break'
      : `<span class="lost">${countText(group.breaks)} ${plural(group.breaks, 'break')}, ${dollars(group.lostUsd, 4)} lost</span>`,
    `${countText(requests)} ${plural(requests, 'request')}`,
  )
  if (total !== undefined) facts.push(`${dollars(total.costUsd, 4)} in all`)
  return [
    `<section class="conversations ${sessionClass(group)}" id="${group.anchor}">`,
    `<div class="conversations-head"><h3>${escapeHtml(sessionLabel(group.key))}</h3> <span class="tag">session</span>${agentChip(group.agent)}<span class="meta">${facts.join(' · ')}</span></div>`,
    ...group.conversations.map((session) => sessionSection(session, eventOf, true)),
    '</section>',
  ].join('\n')
}

function totalFacts(total: SummaryRow): string[] {
  const warm =
    total.warmInputTokens === undefined || total.warmCacheReadTokens === undefined
      ? ''
      : ` (${countText(total.warmCacheReadTokens)} of ${countText(total.warmInputTokens)} warm input tokens read from cache)`
  return [
    `warm hit ratio ${percent(total.hitRatioWarm)}${warm}`,
    `${countText(total.lostTokens)} tokens lost`,
    `${countText(total.providerLostTokens)} on the provider side`,
  ]
}
