// What a session's client did not ask for, in words: requests that marked nothing for caching where the
// provider caches only what is marked (Anthropic, Bedrock: with what one cache mark would have cost, from
// a simulation of the same requests marked), and a session none of whose
// prompts reached its model's caching minimum. Notes, not failures: the numbers beside them are true, and
// say 0% for a reason the note names.

import { sessionLabel } from './session-key.ts'
import { countText, dollarText } from './text-table.ts'
import type { SummaryRow } from './types.ts'

/** One session's notes, each a line (empty when there is none). */
export function sessionNotes(row: SummaryRow): string[] {
  const notes: string[] = []
  const unmarked = row.nothingMarked
  if (unmarked !== undefined)
    notes.push(
      `nothing marked for caching on ${countText(unmarked.requests)} of ${countText(row.requests)} requests: ${dollarText(unmarked.costUsd)}, ${dollarText(unmarked.markedCostUsd)} with a cache mark`,
    )
  const below = row.belowMinimum
  if (below !== undefined)
    notes.push(
      `no prompt reached the model's caching minimum (${countText(below.minTokens)} tokens): nothing was cacheable`,
    )
  return notes
}

/** How many sessions the notes under a table name. */
const NAMED_SESSIONS = 3

/** Lines under a table for the sessions with notes: each session's notes, a few sessions, then a count. */
export function notesUnderTable(rows: readonly SummaryRow[]): string[] {
  const noted = rows.filter((row) => sessionNotes(row).length > 0)
  if (noted.length === 0) return []
  const named = noted.slice(0, NAMED_SESSIONS)
  const more = noted.length - named.length
  return [
    'notes:',
    ...named.flatMap((row) => [`  ${sessionLabel(row)}`, ...sessionNotes(row).map((note) => `    ${note}`)]),
    ...(more > 0 ? [`  and ${more} more sessions (summary.csv: nothing_marked_*, below_minimum_*)`] : []),
  ]
}
