import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countText } from './text-table.ts'

/** The count as first written: rounded, thousands marked by a regular expression. */
const marked = (value: number): string =>
  (value < 0 ? '-' : '') + String(Math.abs(Math.round(value))).replace(/\B(?=(\d{3})+(?!\d))/g, ',')

describe('countText', () => {
  it('marks thousands as the regular expression does, for any number', () => {
    fc.assert(
      fc.property(fc.double(), (value) => {
        expect(countText(value)).toBe(marked(value))
      }),
    )
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 53), max: 2 ** 53 }), (value) => {
        expect(countText(value)).toBe(marked(value))
      }),
    )
  })

  it('rounds, and marks every third digit from the right', () => {
    expect([0, 999, 1000, 123456.6, -1234567, 1e21].map(countText)).toEqual([
      '0',
      '999',
      '1,000',
      '123,457',
      '-1,234,567',
      '1e+21',
    ])
  })
})
