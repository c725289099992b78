// What changed at a break, as the gate's reporters print it under a failure: the node and kind of change,
// the text both requests share just before it, then what the previous request had (`-`) and what this one
// has (`+`), like a test runner's expected and received. A stand-in until break-change.ts exports the
// one rendering every surface shares; swap the import in the reporters then.

import type { BreakChange } from './types.ts'

/** Characters of each text shown; the change's own texts are already clipped where they were computed. */
const SHOWN = 160

/** A text as one quoted line: newlines and quotes escaped, clipped to `SHOWN` characters. */
function quoted(text: string, from: 'start' | 'end'): string {
  const clipped =
    text.length <= SHOWN ? text : from === 'end' ? `…${text.slice(-SHOWN)}` : `${text.slice(0, SHOWN)}…`
  return JSON.stringify(clipped)
}

/** The change in a few lines, without indentation. */
export function changeLines(change: BreakChange): string[] {
  if (change.kind === 'field')
    return [
      `${change.field ?? change.node} changed: ${change.before === undefined ? '(absent)' : quoted(change.before, 'start')} → ${change.after === undefined ? '(absent)' : quoted(change.after, 'start')}`,
    ]
  const context = change.context === undefined ? '' : ` after ${quoted(change.context, 'end')}`
  return [
    `${change.node}: ${change.kind}${context}`,
    ...(change.before === undefined ? [] : [`- ${quoted(change.before, 'start')}`]),
    ...(change.after === undefined ? [] : [`+ ${quoted(change.after, 'start')}`]),
  ]
}
