import { describe, expect, it } from 'vitest'
import { SessionRows } from './session-rows.ts'
import { type StepSketch, sessionRows } from './testing.ts'
import type { StepRow } from './types.ts'
import { type Slot, slotEnd, slotStart, type WindowOptions, windowRows } from './window.ts'

const chart: WindowOptions = { limit: 200, context: 2, stretches: 'bins' }
const table: WindowOptions = { ...chart, limit: 80, stretches: 'one' }

function session(length: number, sketch: (index: number) => StepSketch = () => ({})): StepRow[] {
  return sessionRows(
    {},
    Array.from({ length }, (_, index) => ({
      turn: index + 1,
      at: index * 5,
      read: 1000,
      uncached: 10,
      ...sketch(index),
    })),
  )
}

/** The slots cover every row once, in order. */
function expectCoverage(slots: readonly Slot[], length: number): void {
  let next = 0
  for (const slot of slots) {
    expect(slotStart(slot)).toBe(next)
    expect(slotEnd(slot)).toBeGreaterThan(next)
    next = slotEnd(slot)
  }
  expect(next).toBe(length)
}

const requestAt = (slots: readonly Slot[], index: number) =>
  slots.some((slot) => slot.kind === 'request' && slot.index === index)

describe('windowRows', () => {
  it('gives a session that fits one slot per request', () => {
    const slots = windowRows(SessionRows.of(session(150)), chart)
    expect(slots).toHaveLength(150)
    expect(slots.every((slot) => slot.kind === 'request')).toBe(true)
  })

  it('keeps a long session within the limit, covering every request exactly once', () => {
    for (const length of [201, 777, 1440, 5000]) {
      const slots = windowRows(SessionRows.of(session(length)), chart)
      expect(slots.length).toBeLessThanOrEqual(chart.limit)
      expectCoverage(slots, length)
    }
  })

  it('draws a break, its neighbours, a failed attempt and the request after an idle gap one by one', () => {
    const rows = session(1440, (index) =>
      index === 600
        ? { breakCause: 'tools-changed', lost: 900 }
        : index === 900
          ? { failed: true }
          : index === 1200
            ? { at: 1200 * 5 + 400 }
            : {},
    )
    // The idle gap moves every later request: keep times rising.
    for (const row of rows.slice(1201)) row.virtualTimeS += 400
    const slots = windowRows(SessionRows.of(rows), chart)
    for (const index of [0, 598, 599, 600, 601, 602, 900, 1200, 1439])
      expect(requestAt(slots, index)).toBe(true)
    expectCoverage(slots, rows.length)
  })

  it('sums each quiet stretch of a table into one line', () => {
    const rows = session(1000, (index) => (index === 500 ? { breakCause: 'system-replace', lost: 900 } : {}))
    const slots = windowRows(SessionRows.of(rows), table)
    expect(slots.filter((slot) => slot.kind === 'span')).toEqual([
      { kind: 'span', start: 3, end: 498 },
      { kind: 'span', start: 503, end: 997 },
    ])
    expectCoverage(slots, rows.length)
  })

  it('bins a chart evenly when breaks are everywhere, and a table still lists every break', () => {
    const rows = session(1000, (index) => (index % 2 === 0 ? { breakCause: 'after-slot', lost: 900 } : {}))
    const drawn = windowRows(SessionRows.of(rows), chart)
    expect(drawn.length).toBeLessThanOrEqual(chart.limit)
    expectCoverage(drawn, rows.length)
    const listed = windowRows(SessionRows.of(rows), table)
    expect(listed.filter((slot) => slot.kind === 'request')).toHaveLength(1000)
  })
})
