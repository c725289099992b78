import { stringify } from 'csv-stringify/sync'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { csvLine, csvText } from './csv.ts'

describe('csvLine', () => {
  it('writes a record of text fields as csv-stringify does, quotes, commas and line breaks included', () => {
    const field = fc.string({ unit: fc.constantFrom('a', 'é', ' ', ',', '"', '\n', '\r', "'", '') })
    fc.assert(
      fc.property(fc.array(field, { minLength: 1, maxLength: 6 }), (fields) => {
        expect(csvLine(fields)).toBe(stringify([fields]))
      }),
    )
  })

  it('quotes a field with a comma, a quote or a line break, and leaves an empty one bare', () => {
    expect(csvLine(['a,b', 'say "hi"', 'x\ny', '', 'plain'])).toBe('"a,b","say ""hi""","x\ny",,plain\n')
  })
})

describe('csvText', () => {
  it('writes records of text fields as csv-stringify does, one line each', () => {
    const field = fc.string({ unit: fc.constantFrom('a', 'é', ',', '"', '\n', '') })
    fc.assert(
      fc.property(fc.array(fc.array(field, { minLength: 1, maxLength: 4 }), { maxLength: 5 }), (records) => {
        expect(csvText(records)).toBe(stringify(records))
      }),
    )
  })
})
