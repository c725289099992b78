import { afterEach, describe, expect, it } from 'vitest'
import { builtFrom, identicalPrefix, readLineage } from './lineage.ts'

const items = (count: number) => Array.from({ length: count }, (_, index) => ({ index }))

afterEach(() => readLineage(true))

describe('list lineage', () => {
  it('compares by identity from the start when a list makes no claim', () => {
    const [a, b, c, d] = items(4)
    expect(identicalPrefix([a, b, c], [a, b, d], [a, b, d])).toBe(2)
    expect(identicalPrefix([a, b], [a, b, c, d])).toBe(2)
    expect(identicalPrefix([], [a])).toBe(0)
  })

  it("takes a list's claim about the previous list on trust and compares only past it", () => {
    const previous = items(5)
    const next = [...previous.slice(0, 4), { index: 9 }]
    builtFrom(next, previous, 3)
    // The kept copy is compared from index 3 on: a claim is what spares the first three compares.
    const kept = [{ index: -1 }, { index: -2 }, { index: -3 }, ...previous.slice(3)]
    expect(identicalPrefix(next, kept, previous)).toBe(4)
    // About another list, or with claims ignored, it compares from the start.
    expect(identicalPrefix(next, kept, items(5))).toBe(0)
    readLineage(false)
    expect(identicalPrefix(next, kept, previous)).toBe(0)
  })

  it('keeps one step only: a new claim drops its base’s own, and a claim never passes either length', () => {
    const first = items(4)
    const second = first.slice()
    builtFrom(second, first, 4)
    const third = second.slice(0, 2)
    builtFrom(third, second, 10)
    const stranger = items(4)
    expect(identicalPrefix(second, stranger, first)).toBe(0)
    expect(identicalPrefix(third, stranger, second)).toBe(2)
  })
})
