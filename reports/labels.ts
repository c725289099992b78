// How a request and its break read in reports, tooltips and test failure messages.

import { countText } from './text-table.ts'
import type { StepRow } from './types.ts'

/** A request's place in its session: `turn.step`, with `#attempt` for a retry. */
export function stepLabel(row: Pick<StepRow, 'turn' | 'step' | 'attempt'>): string {
  return `${row.turn}.${row.step}${row.attempt === 0 ? '' : `#${row.attempt}`}`
}

/** A break as a phrase: cause, divergent node, session event and the tokens it lost. */
export function breakDescription(
  row: Pick<StepRow, 'breakCause' | 'breakNode' | 'breakEventSeq' | 'lostTokens'>,
): string {
  const node = row.breakNode === undefined ? '' : ` at ${row.breakNode}`
  const event = row.breakEventSeq === undefined ? '' : ` (event ${row.breakEventSeq})`
  return `${row.breakCause ?? 'unknown cause'}${node}${event}, ${countText(row.lostTokens)} tokens lost`
}
