// Simulator fidelity: per step, what the real provider reported beside what the simulator predicted
// for the same request, so a user can tell a client-side break from provider noise and see when the
// simulator needs recalibrating.

import { stringify } from 'csv-stringify/sync'
import type { SimCounts } from '../providers/sim/types.ts'
import type { StepRow } from './types.ts'

/** The fidelity CSV columns, in order. */
export const FIDELITY_COLUMNS = [
  'scenario',
  'variant',
  'provider',
  'model',
  'turn',
  'step',
  'attempt',
  'input_tokens',
  'observed_read',
  'predicted_read',
  'observed_write',
  'predicted_write',
  'read_delta',
] as const

/** One step observed and predicted. `predicted` is undefined when the simulator had no prediction. */
export interface FidelityRow {
  row: StepRow
  predicted: SimCounts | undefined
}

/** Rows of successful requests paired with their predictions. */
export function fidelityRows(
  rows: readonly StepRow[],
  predicted: ReadonlyArray<SimCounts | undefined>,
): FidelityRow[] {
  return rows.flatMap((row, index) => (row.ok ? [{ row, predicted: predicted[index] }] : []))
}

/** The fidelity CSV (`read_delta` = observed − predicted; empty without a prediction). */
export function fidelityCsv(rows: readonly FidelityRow[]): string {
  return stringify([
    [...FIDELITY_COLUMNS],
    ...rows.map(({ row, predicted }) => [
      row.scenario,
      row.variant,
      row.provider,
      row.model,
      String(row.turn),
      String(row.step),
      String(row.attempt),
      String(row.inputTokens),
      String(row.cacheReadTokens),
      predicted === undefined ? '' : String(predicted.read),
      String(row.cacheWriteTokens),
      predicted === undefined ? '' : String(predicted.write),
      predicted === undefined ? '' : String(row.cacheReadTokens - predicted.read),
    ]),
  ])
}
