// Request derivation: the provider-neutral request as a pure function of the session projection.
// The loop sends exactly this; the invariant test re-derives it from a log prefix and compares bytes.

import { CachelabError } from './errors.ts'
import { builtFrom } from './lineage.ts'
import type { SessionProjection } from './session.ts'
import type { DerivedMessage, DerivedRequest, Message, Seq } from './types.ts'

/** Derive the request the loop sends next from the session's current state. */
export function deriveRequest(session: SessionProjection): DerivedRequest {
  const headerState = session.header
  const context = session.context
  if (headerState === undefined)
    throw new CachelabError('invariant', 'cannot derive a request before a request/header')
  if (context === undefined)
    throw new CachelabError('invariant', 'cannot derive a request before a request/context')
  const { header, seq: headerSeq } = headerState
  const previous = lastMessages.get(session)
  const derived = session.derivedMessages()
  const messages = derived.messages
  // The messages the previous request of this session went out with, the same objects (`builtFrom`):
  // the session's unchanged ones, up to where this request's prefix or the previous one's is spliced in
  // (new objects there, and the session's messages shifted past them).
  let splicedAt = Number.POSITIVE_INFINITY
  if (header.messagePrefix !== undefined && header.messagePrefix.length > 0) {
    splicedAt = messages[0]?.message.role === 'system' ? 1 : 0
    messages.splice(splicedAt, 0, ...requestOnly(header.messagePrefix, headerSeq, 'session-prefix'))
  }
  if (header.afterSlot !== undefined && header.afterSlot.length > 0) {
    messages.push(...requestOnly(header.afterSlot, headerSeq, 'after-slot'))
  }
  if (previous !== undefined)
    builtFrom(messages, previous.messages, Math.min(derived.unchanged, splicedAt, previous.splicedAt))
  lastMessages.set(session, { messages, splicedAt })
  const tools = header.tools ?? []
  return {
    sessionId: session.sessionId,
    config: header.config,
    route: context.route,
    ...(header.system !== undefined && header.system !== ''
      ? { system: { text: header.system, sourceSeq: headerSeq } }
      : {}),
    tools,
    ...(tools.length > 0 ? { toolsSeq: headerSeq } : {}),
    headerSeq,
    messages,
  }
}

/**
 * Each session's latest derived messages list (the next one's claim is about it) and where a request-only
 * prefix was spliced into it (infinity when none was).
 */
const lastMessages = new WeakMap<
  SessionProjection,
  { messages: readonly DerivedMessage[]; splicedAt: number }
>()

function requestOnly(
  messages: readonly Message[],
  headerSeq: Seq,
  origin: DerivedMessage['origin'],
): DerivedMessage[] {
  return messages.map((message) => ({ message, sourceSeqs: [headerSeq], origin }))
}
