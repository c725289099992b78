// Request derivation: the provider-neutral request as a pure function of the session projection.
// The loop sends exactly this; the invariant test re-derives it from a log prefix and compares bytes.

import { CachelabError } from './errors.ts'
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
  const messages = session.messages()
  if (header.messagePrefix !== undefined && header.messagePrefix.length > 0) {
    const at = messages[0]?.message.role === 'system' ? 1 : 0
    messages.splice(at, 0, ...requestOnly(header.messagePrefix, headerSeq, 'session-prefix'))
  }
  if (header.afterSlot !== undefined && header.afterSlot.length > 0) {
    messages.push(...requestOnly(header.afterSlot, headerSeq, 'after-slot'))
  }
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

function requestOnly(
  messages: readonly Message[],
  headerSeq: Seq,
  origin: DerivedMessage['origin'],
): DerivedMessage[] {
  return messages.map((message) => ({ message, sourceSeqs: [headerSeq], origin }))
}
