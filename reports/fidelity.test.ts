import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import type { SimCounts } from '../providers/sim/types.ts'
import {
  describeMismatch,
  EXACT_TOLERANCE,
  FIDELITY_COLUMNS,
  type FidelityRow,
  fidelityCsv,
  fidelityRows,
  fidelityVerdict,
  LIVE_TOLERANCE,
} from './fidelity.ts'
import { sessionRows, stepRow } from './testing.ts'

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

describe('fidelity verdict', () => {
  const step = (
    observed: { read: number; write: number; uncached: number },
    predicted: SimCounts | undefined,
  ): FidelityRow => ({
    row: stepRow({
      provider: 'deepseek',
      scenario: 'prompt-change',
      variant: 'in-history',
      turn: 3,
      step: 1,
      ...observed,
    }),
    predicted,
  })

  it('passes a step whose read and write equal the prediction, under the exact tolerance', () => {
    expect(
      fidelityVerdict([step({ read: 900, write: 50, uncached: 50 }, counts(900, 50, 50))], EXACT_TOLERANCE),
    ).toEqual([])
  })

  it('fails a one-token difference exactly, naming provider, scenario.variant, turn.step and both counts', () => {
    const mismatches = fidelityVerdict(
      [step({ read: 899, write: 51, uncached: 50 }, counts(900, 50, 50))],
      EXACT_TOLERANCE,
    )
    expect(mismatches.map(describeMismatch)).toEqual([
      'deepseek prompt-change.in-history turn.step 3.1: read observed 899, predicted 900, tolerance ±0',
      'deepseek prompt-change.in-history turn.step 3.1: write observed 51, predicted 50, tolerance ±0',
    ])
  })

  it('allows the larger of the token slack and the part of the input', () => {
    const observed = { read: 2700, write: 0, uncached: 300 }
    const predicted = counts(3000, 0, 0)
    // 300 off: inside ±max(256, 0.1 × 3,000) = ±300, outside ±max(256, 0.05 × 3,000) = ±256.
    expect(fidelityVerdict([step(observed, predicted)], { tokens: 256, ratio: 0.1 })).toEqual([])
    expect(fidelityVerdict([step(observed, predicted)], { tokens: 256, ratio: 0.05 })).toHaveLength(1)
    expect(fidelityVerdict([step(observed, predicted)], { tokens: 300, ratio: 0 })).toEqual([])
  })

  it("reads the prediction at the provider's token count, so a tokenizer that counts more is no mismatch", () => {
    // The provider counts 30% more tokens for the same prompt and caches the same part of it.
    const observed = { read: 3900, write: 0, uncached: 130 }
    const predicted = counts(3000, 0, 100)
    expect(fidelityVerdict([step(observed, predicted)], LIVE_TOLERANCE)).toEqual([])
    const [mismatch] = fidelityVerdict(
      [step({ read: 0, write: 0, uncached: 4030 }, predicted)],
      LIVE_TOLERANCE,
    )
    expect(mismatch && describeMismatch(mismatch)).toBe(
      "deepseek prompt-change.in-history turn.step 3.1: read observed 0, predicted 3000 (3900 at the provider's token count), tolerance ±403",
    )
  })

  it('fails a step the provider answered and the simulator refuses', () => {
    const mismatches = fidelityVerdict([step({ read: 0, write: 0, uncached: 10 }, undefined)], LIVE_TOLERANCE)
    expect(mismatches.map((mismatch) => mismatch.kind)).toEqual(['unpredicted'])
    expect(describeMismatch(mismatches[0] as (typeof mismatches)[number])).toContain(
      'a request the simulator refuses',
    )
  })

  it('names a retried attempt', () => {
    const retried: FidelityRow = {
      row: stepRow({ turn: 2, step: 4, attempt: 1, read: 10, uncached: 90 }),
      predicted: counts(0, 0, 100),
    }
    const [mismatch] = fidelityVerdict([retried], EXACT_TOLERANCE)
    expect(mismatch && describeMismatch(mismatch)).toBe(
      'anthropic append-only.default turn.step 2.4 attempt 1: read observed 10, predicted 0, tolerance ±0',
    )
  })
})
