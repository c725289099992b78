import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import type { SimCounts } from '../providers/sim/types.ts'
import { FIDELITY_COLUMNS, fidelityCsv, fidelityRows } from './fidelity.ts'
import { sessionRows } from './testing.ts'

const counts = (read: number, write: number, uncached: number): SimCounts => ({
  input: read + write + uncached,
  read,
  write,
  write5m: write,
  write1h: 0,
  uncached,
  output: 10,
})

describe('fidelity rows', () => {
  const rows = sessionRows({ scenario: 'append-only' }, [
    { uncached: 1000, write: 0 },
    { failed: true, step: 2 },
    { read: 900, uncached: 150, step: 2, attempt: 1 },
    { read: 1000, uncached: 100, step: 3 },
  ])
  const predictions = [counts(0, 0, 1000), undefined, counts(1000, 0, 50), undefined]

  it('keeps successful requests with the prediction made for the same request', () => {
    const paired = fidelityRows(rows, predictions)
    expect(paired.map(({ row }) => [row.step, row.attempt])).toEqual([
      [1, 0],
      [2, 1],
      [3, 0],
    ])
    expect(paired.map(({ predicted }) => predicted?.read)).toEqual([0, 1000, undefined])
  })

  it('writes observed minus predicted, and empty cells where nothing was predicted', () => {
    const [header, ...lines] = parse(fidelityCsv(fidelityRows(rows, predictions))) as string[][]
    expect(header).toEqual([...FIDELITY_COLUMNS])
    const column = (name: (typeof FIDELITY_COLUMNS)[number]) =>
      lines.map((line) => line[FIDELITY_COLUMNS.indexOf(name)])
    expect(column('observed_read')).toEqual(['0', '900', '1000'])
    expect(column('predicted_read')).toEqual(['0', '1000', ''])
    // The provider read less than the simulator expected: a negative delta.
    expect(column('read_delta')).toEqual(['0', '-100', ''])
    expect(column('predicted_write')).toEqual(['0', '0', ''])
  })
})
