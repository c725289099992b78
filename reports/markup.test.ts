import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { coordinate } from './markup.ts'

/** The coordinate as first written: the number rounded to two decimals, printed, -0 as 0. */
const printedRounded = (value: number): string => {
  const rounded = Number(value.toFixed(2))
  return String(Object.is(rounded, -0) ? 0 : rounded)
}

describe('coordinate', () => {
  it('prints what the rounded number prints, for any number', () => {
    fc.assert(
      fc.property(fc.double(), (value) => {
        expect(coordinate(value)).toBe(printedRounded(value))
      }),
    )
    fc.assert(
      fc.property(fc.double({ min: -1e7, max: 1e7 }), (value) => {
        expect(coordinate(value)).toBe(printedRounded(value))
      }),
    )
  })

  it('cuts trailing zeros and never prints -0', () => {
    expect([12, 12.5, 12.25, -0.001, -0, 0.004, -3.5].map(coordinate)).toEqual([
      '12',
      '12.5',
      '12.25',
      '0',
      '0',
      '0',
      '-3.5',
    ])
  })
})
