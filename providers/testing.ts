// Test fixtures for the adapters: derived requests and their surface messages, built by hand so each
// adapter test states exactly what the loop would hand it.

import type { CallConfig, DerivedMessage, DerivedRequest, Message, Seq } from '../harness/types.ts'

/** A message of the session surface produced by event `seq`. */
export const surfaceMessage = (message: Message, seq: Seq): DerivedMessage => ({
  message,
  sourceSeqs: [seq],
  origin: 'surface',
})

/** A user text message on the surface. */
export const userText = (text: string, seq: Seq): DerivedMessage =>
  surfaceMessage({ role: 'user', content: [{ type: 'text', text }] }, seq)

/** An assistant text message on the surface. */
export const assistantText = (text: string, seq: Seq): DerivedMessage =>
  surfaceMessage({ role: 'assistant', content: [{ type: 'text', text }] }, seq)

/** A derived in-history request of session `s` with header event 1, no tools unless `extra` says. */
export function derivedRequest(
  config: CallConfig,
  messages: DerivedMessage[],
  extra: Partial<DerivedRequest> = {},
): DerivedRequest {
  return { sessionId: 's', config, route: 'in-history', tools: [], headerSeq: 1, messages, ...extra }
}
