// A capture as rows (the library's `reportCapture`, and `cachelab report`): each session file of a
// `serve --record` directory read in turn through the captured-traffic port, so memory holds one
// session's exchanges, not the capture.

import type { CapturedExchange, ConversationKind } from '../providers/wire/exchange.ts'
import { CAPTURE_SCENARIO, CaptureRowBuilder } from '../reports/capture-rows.ts'
import { openCapture } from '../reports/observed/capture/store.ts'
import type { StepRow } from '../reports/types.ts'

/** A capture's rows and what the report says about how its sessions and conversations were told apart. */
export interface CaptureReport {
  runId: string
  /** When recording began (ISO 8601): virtual time 0 of the capture's rows. */
  started: string
  rows: StepRow[]
  /** Sessions by how they were told: header, agent, conversation-key, continuation (joined), new. */
  identities: Record<CapturedExchange['identity'], number>
  /** Conversations by kind. */
  kinds: Record<ConversationKind, number>
  /** Torn last lines (the server stopped mid-write), as `file:line`. */
  torn: string[]
}

/** Read a capture directory into rows. */
export function reportCapture(dir: string, scenario = CAPTURE_SCENARIO): CaptureReport {
  const capture = openCapture(dir)
  const rows: StepRow[] = []
  const torn: string[] = []
  const identities = { header: 0, agent: 0, 'conversation-key': 0, continuation: 0, new: 0 }
  const kinds = { main: 0, subagent: 0, side: 0, compaction: 0 }
  const sessions = new Set<string>()
  for (const file of capture.sessions) {
    const builder = new CaptureRowBuilder({ runId: capture.manifest.id, scenario })
    const exchanges = capture.read(file, (where) => torn.push(where))
    const first = exchanges[0]
    if (first !== undefined) {
      kinds[first.kind] += 1
      // A session is counted once, by how its first conversation's first request was told.
      if (!sessions.has(first.session)) identities[first.identity] += 1
      sessions.add(first.session)
    }
    for (const exchange of exchanges) rows.push(builder.add(exchange))
  }
  return { runId: capture.manifest.id, started: capture.manifest.started, rows, identities, kinds, torn }
}
