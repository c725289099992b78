// A captured agent's sessions as the reports show them: each conversation (one variant) under the session
// it belongs to, main first, then subagents, side requests and compactions, named by what follows the
// session id rather than by the 36-character id again.

import type { ConversationKind } from '../providers/wire/exchange.ts'
import { type SessionKey, sessionKeyString } from './session-key.ts'

/** What a step or summary row says of its conversation. */
export interface ConversationLabels extends SessionKey {
  /** The session the conversation belongs to; absent where the variant is the session. */
  session?: string
  /** Absent for `main`. */
  conversationKind?: ConversationKind
}

/** A session and its conversations, in the order the reports list them. */
export interface SessionGroup<T extends ConversationLabels> {
  /** The session: its scenario, provider and loop, the session id as its variant. */
  key: SessionKey
  /** Main first, then subagents, side requests and compactions; first seen first within a kind. */
  conversations: T[]
}

const KIND_ORDER: Readonly<Record<ConversationKind, number>> = {
  main: 0,
  subagent: 1,
  side: 2,
  compaction: 3,
}

/** The session a conversation belongs to: its own variant when the variant is the session. */
export function sessionIdOf(labels: ConversationLabels): string {
  return labels.session ?? labels.variant
}

/** The conversation's kind, `main` when the row names none. */
export function kindOf(labels: Pick<ConversationLabels, 'conversationKind'>): ConversationKind {
  return labels.conversationKind ?? 'main'
}

/**
 * The conversation's name within its session: what follows `<session>.` (`subagent-a3c29f83d9214c246`,
 * `side-title-5e1f…`, `compaction-1`), its kind for the session's own conversation, and the kind
 * before the name where the name does not start with it.
 */
export function conversationName(labels: ConversationLabels): string {
  const kind = kindOf(labels)
  if (labels.session === undefined) return kind
  const prefix = `${labels.session}.`
  const name = labels.variant.startsWith(prefix) ? labels.variant.slice(prefix.length) : labels.variant
  return name === kind || name.startsWith(`${kind}-`) ? name : `${kind} ${name}`
}

/** What follows the kind in a conversation's name (`a3c29f83d9214c246`); empty for the main conversation. */
export function conversationDetail(labels: ConversationLabels): string {
  const name = conversationName(labels)
  const kind = kindOf(labels)
  return name === kind ? '' : name.slice(kind.length + 1)
}

/**
 * Conversations grouped by session (scenario, provider, loop and session id), sessions in first-seen
 * order. A run without sessions gets one group per conversation, in its order.
 */
export function groupBySessionId<T extends ConversationLabels>(items: readonly T[]): SessionGroup<T>[] {
  const groups = new Map<string, SessionGroup<T>>()
  for (const item of items) {
    const key: SessionKey = {
      scenario: item.scenario,
      variant: sessionIdOf(item),
      provider: item.provider,
      ...(item.loop !== undefined ? { loop: item.loop } : {}),
    }
    const id = sessionKeyString(key)
    const group = groups.get(id)
    if (group === undefined) groups.set(id, { key, conversations: [item] })
    else group.conversations.push(item)
  }
  // Array.prototype.sort is stable: first seen stays first within a kind.
  for (const group of groups.values())
    group.conversations.sort((left, right) => KIND_ORDER[kindOf(left)] - KIND_ORDER[kindOf(right)])
  return [...groups.values()]
}

/** Whether any session holds more than one conversation (the reports then list them under it). */
export function hasConversations<T extends ConversationLabels>(groups: readonly SessionGroup<T>[]): boolean {
  return groups.some((group) => group.conversations.length > 1)
}
