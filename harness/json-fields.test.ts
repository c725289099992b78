import { describe, expect, it } from 'vitest'
import { asRecord, isRecord, optionalNumber } from './json-fields.ts'

describe('fields of untyped JSON', () => {
  it('reads an object as itself and anything else as no fields', () => {
    const object = { a: 1 }
    expect(asRecord(object)).toBe(object)
    for (const other of [[1, 2], null, undefined, 'text', 3, true]) expect(asRecord(other)).toEqual({})
  })

  it('tells a JSON object from an array, null and scalars', () => {
    expect([{}, { a: 1 }, [], [{}], null, undefined, 'text', 3, true].map(isRecord)).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ])
  })

  it('keeps a number, and nothing else, as a count', () => {
    expect([0, 12, -1.5, '12', null, undefined, Number.NaN].map(optionalNumber)).toEqual([
      0,
      12,
      -1.5,
      undefined,
      undefined,
      undefined,
      Number.NaN,
    ])
  })
})
