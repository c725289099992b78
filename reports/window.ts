// A long session shown in bounded room: every request near a break (or a failure, an idle gap, the
// first and last) kept on its own, the quiet stretches between them drawn as averaged spans. The chart
// and the step table of report.html both read a session through this, so neither grows with its length.

/** What a window reads of a session: how many requests, and which need their own slot. */
export interface WindowSource {
  readonly count: number
  /** Notable (a break, a failure, the cold first request) or after an idle gap. */
  keeps(index: number): boolean
}

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
  /**
   * `bins`: a quiet stretch becomes as many spans as the room left allows (a chart keeps its shape);
   * `one`: each stretch is one span (a table says "n requests" once).
   */
  stretches: 'bins' | 'one'
}

/** The slots of a session's rows, in order, covering every row exactly once. */
export function windowRows(source: WindowSource, options: WindowOptions): Slot[] {
  const count = source.count
  if (count <= options.limit) return Array.from({ length: count }, (_, index) => ({ kind: 'request', index }))
  const kept = new Uint8Array(count)
  const keep = (index: number) => {
    for (let near = index - options.context; near <= index + options.context; near += 1)
      if (near >= 0 && near < count) kept[near] = 1
  }
  keep(0)
  keep(count - 1)
  for (let index = 0; index < count; index += 1) if (source.keeps(index)) keep(index)
  const stretches: Array<{ start: number; end: number }> = []
  let keptCount = 0
  for (let index = 0; index < count; ) {
    if (kept[index] === 1) {
      keptCount += 1
      index += 1
      continue
    }
    const start = index
    while (index < count && kept[index] !== 1) index += 1
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

/** The index of a slot's first row. */
export function slotStart(slot: Slot): number {
  return slot.kind === 'request' ? slot.index : slot.start
}

/** The index one past a slot's last row. */
export function slotEnd(slot: Slot): number {
  return slot.kind === 'request' ? slot.index + 1 : slot.end
}
