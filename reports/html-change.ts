// report.html's view of what changed at a session's breaks: per break whose source held the content, the
// previous request's side and this request's side by side (stacked on a narrow screen), the shared text
// before the change muted, the change marked; the costliest-breaks table, the step table and the chart's
// markers link to it. Plain HTML and CSS: the page stays self-contained, with no script.

import { stepLabel } from './labels.ts'
import { escapeHtml } from './markup.ts'
import type { StepLabel } from './session-rows.ts'
import type { BreakChange, StepRow } from './types.ts'

/** Changes drawn per session; the rest are in breaks.csv. */
export const CHANGES_SHOWN = 40

/** The styles of the view (joined into the page's). */
export const CHANGE_STYLE = `
.changes { margin: 8px 0 12px; }
.changes > p { margin: 0 0 4px; }
.change { margin: 8px 0; padding: 8px 12px; border-left: 3px solid var(--break-strong); background: var(--panel); scroll-margin-top: 96px; }
.change:target { box-shadow: 0 0 0 2px var(--break-strong); }
.change-head { margin: 0 0 6px; font-size: 0.9rem; overflow-wrap: anywhere; }
.change-sides { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 320px), 1fr)); gap: 8px; }
.change-side { min-width: 0; }
.change-side .sub { font-weight: 600; }
.change-side pre { margin: 2px 0 0; padding: 6px 8px; background: #fff; border: 1px solid var(--rule); border-radius: 4px; white-space: pre-wrap; overflow-wrap: anywhere; font: 0.85rem/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.change .shared { color: var(--muted); }
.change del, .change ins { text-decoration: none; border-radius: 2px; padding: 0 1px; }
.change del { background: #ffe1dc; color: #86181d; }
.change ins { background: #d5f5dc; color: #0f5323; }
.change .none { color: var(--muted); font-style: italic; font-family: system-ui, sans-serif; }
.change .shared + .none { margin-left: 1ch; }
`

/** The id of a break's change view, unique in the page: its session's anchor and its turn.step#attempt. */
export function changeAnchor(sessionAnchor: string, row: StepLabel): string {
  return `${sessionAnchor}-change-${row.turn}-${row.step}-${row.attempt}`
}

/** The break rows of a session whose change the page draws, in order: the first `CHANGES_SHOWN` that have one. */
export function shownChanges(breakRows: readonly StepRow[]): StepRow[] {
  return breakRows.filter((row) => row.breakChange !== undefined).slice(0, CHANGES_SHOWN)
}

/** Where each drawn change of a session is, by its row (for the links to it). */
export function changeTargets(sessionAnchor: string, breakRows: readonly StepRow[]): Map<StepRow, string> {
  return new Map(shownChanges(breakRows).map((row) => [row, `#${changeAnchor(sessionAnchor, row)}`]))
}

/** A link to a break's change view, as a line under its break cell; nothing without one. */
export function changeLink(href: string | undefined): string {
  return href === undefined ? '' : `<span class="sub"><a href="${href}">what changed</a></span>`
}

/** The changes at a session's breaks, one view each; nothing when no break kept its content. */
export function changesSection(sessionAnchor: string, breakRows: readonly StepRow[]): string {
  const shown = shownChanges(breakRows)
  if (shown.length === 0) return ''
  const all = breakRows.filter((row) => row.breakChange !== undefined).length
  const more =
    all > shown.length ? ` The first ${shown.length} of ${all} are drawn; every one is in breaks.csv.` : ''
  return [
    '<div class="changes">',
    `<p class="note"><strong>What changed at ${all === 1 ? 'the break' : `${all} breaks`}</strong>: the previous request against this one at the node where they part, the text both share before it in grey.${more}</p>`,
    ...shown.map((row) => changeView(sessionAnchor, row, row.breakChange as BreakChange)),
    '</div>',
  ].join('\n')
}

/** One break's change: a heading line, then the two sides. */
function changeView(sessionAnchor: string, row: StepRow, change: BreakChange): string {
  const cause = row.breakCause === undefined ? '' : `<strong>${escapeHtml(row.breakCause)}</strong> · `
  // The panes show the shared text: the heading says where and what alone.
  const head =
    change.kind === 'field'
      ? `${change.field ?? change.node} changed${change.context === undefined ? '' : ` (tool ${change.context})`}`
      : `${change.node}: ${change.kind}`
  return [
    `<div class="change" id="${changeAnchor(sessionAnchor, row)}">`,
    `<p class="change-head">${escapeHtml(stepLabel(row))} · ${cause}<code>${escapeHtml(head)}</code></p>`,
    '<div class="change-sides">',
    side('previous request', change, change.before, 'del'),
    side('this request', change, change.after, 'ins'),
    '</div>',
    '</div>',
  ].join('\n')
}

/** One side: the shared text before the change, then what this side has there (marked), or that it has nothing. */
function side(title: string, change: BreakChange, text: string | undefined, mark: 'del' | 'ins'): string {
  const field = change.kind === 'field'
  // A field's context names its tool, not text before a value.
  const shared =
    field || change.context === undefined ? '' : `<span class="shared">${escapeHtml(change.context)}</span>`
  const what =
    text === undefined
      ? `<span class="none">${field ? 'not set' : '(nothing here)'}</span>`
      : `<${mark}>${visible(text)}</${mark}>`
  return `<div class="change-side"><span class="sub">${title}</span><pre>${shared}${what}</pre></div>`
}

/** A changed text escaped, its line breaks and tabs shown (a change of whitespace alone is seen). */
function visible(text: string): string {
  return escapeHtml(text).replaceAll('\t', '⇥\t').replaceAll('\n', '↵\n')
}
