// A long session shown in bounded room: every request near a break (or a failure, an idle gap, the
// first and last) kept on its own, the quiet stretches between them drawn as averaged spans. The chart
// and the step table of report.html both read a session through this, so neither grows with its length.

import type { StepRow } from './types.ts'

/** One column of a chart or one line of a table: a request, or consecutive requests taken together. */
export type Slot =
  /** One request, at `index` in the session's rows. */
  | { kind: 'request'; index: number }
  /** The requests from `start` to `end` (exclusive), quiet unless the session has no room for its notable ones. */
  | { kind: 'span'; start: number; end: number }

/** How much room a session gets. */
export interface WindowOptions {
  /** At most this many slots, unless the notable requests alone need more. */
  limit: number
  /** Requests kept on each side of a notable one. */
  context: number
  /** A gap in virtual time of at least this many seconds before a request makes it notable. */
  idleSeconds: number
  /**
   * `bins`: a quiet stretch becomes as many spans as the room left allows (a chart keeps its shape);
   * `one`: each stretch is one span (a table says "n requests" once).
   */
  stretches: 'bins' | 'one'
}

/** Gaps this long between two requests are drawn on the time axis. */
export const IDLE_SECONDS = 60

/** Whether a request needs its own slot: a break on either side, a failed attempt, the cold first request. */
export function isNotable(row: StepRow): boolean {
  return !row.ok || row.cold || row.breakCause !== undefined || row.providerCause !== undefined
}

/** Seconds of virtual time between a request and the one before it, when that is an idle gap. */
export function idleBefore(rows: readonly StepRow[], index: number, idleSeconds = IDLE_SECONDS): number {
  const row = rows[index]
  const previous = rows[index - 1]
  if (row === undefined || previous === undefined) return 0
  const gap = row.virtualTimeS - previous.virtualTimeS
  return gap >= idleSeconds ? gap : 0
}

/** The slots of a session's rows, in order, covering every row exactly once. */
export function windowRows(rows: readonly StepRow[], options: WindowOptions): Slot[] {
  const count = rows.length
  if (count <= options.limit) return rows.map((_, index) => ({ kind: 'request', index }))
  const kept = new Array<boolean>(count).fill(false)
  const keep = (index: number) => {
    for (let near = index - options.context; near <= index + options.context; near += 1)
      if (near >= 0 && near < count) kept[near] = true
  }
  keep(0)
  keep(count - 1)
  for (const [index, row] of rows.entries()) {
    if (isNotable(row) || idleBefore(rows, index, options.idleSeconds) > 0) keep(index)
  }
  const stretches: Array<{ start: number; end: number }> = []
  let keptCount = 0
  for (let index = 0; index < count; ) {
    if (kept[index] === true) {
      keptCount += 1
      index += 1
      continue
    }
    const start = index
    while (index < count && kept[index] !== true) index += 1
    stretches.push({ start, end: index })
  }
  // Notable requests everywhere (a break on every step): the chart bins the whole session evenly instead.
  if (options.stretches === 'bins' && keptCount > options.limit)
    return stretchSlots({ start: 0, end: count }, options.limit)
  const quiet = count - keptCount
  // Room left for the quiet stretches; at least one slot each, so a stretch never disappears.
  const room = Math.max(stretches.length, options.limit - keptCount)
  const slots: Slot[] = []
  let next = 0
  for (const stretch of stretches) {
    for (; next < stretch.start; next += 1) slots.push({ kind: 'request', index: next })
    slots.push(
      ...stretchSlots(
        stretch,
        options.stretches === 'one' ? 1 : (room * (stretch.end - stretch.start)) / quiet,
      ),
    )
    next = stretch.end
  }
  for (; next < count; next += 1) slots.push({ kind: 'request', index: next })
  return slots
}

/** A quiet stretch as about `share` spans of equal length; a single request stays a request. */
function stretchSlots(stretch: { start: number; end: number }, share: number): Slot[] {
  const length = stretch.end - stretch.start
  if (length === 1) return [{ kind: 'request', index: stretch.start }]
  const pieces = Math.min(length, Math.max(1, Math.floor(share)))
  const slots: Slot[] = []
  for (let piece = 0; piece < pieces; piece += 1) {
    const start = stretch.start + Math.floor((piece * length) / pieces)
    const end = stretch.start + Math.floor(((piece + 1) * length) / pieces)
    slots.push(end - start === 1 ? { kind: 'request', index: start } : { kind: 'span', start, end })
  }
  return slots
}

/** The rows a slot covers. */
export function slotRows(rows: readonly StepRow[], slot: Slot): readonly StepRow[] {
  return slot.kind === 'request' ? rows.slice(slot.index, slot.index + 1) : rows.slice(slot.start, slot.end)
}

/** The index of a slot's first row. */
export function slotStart(slot: Slot): number {
  return slot.kind === 'request' ? slot.index : slot.start
}

/** The index one past a slot's last row. */
export function slotEnd(slot: Slot): number {
  return slot.kind === 'request' ? slot.index + 1 : slot.end
}
