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

/**
 * How far an observed read or write may stray from its prediction: `max(tokens, ratio × observed input)`.
 * Zero for both is an exact comparison (the loopback server is the simulator itself).
 */
export interface FidelityTolerance {
  /** Slack in tokens, for the providers' granularity (OpenAI's 128-token steps, DeepSeek's units). */
  tokens: number
  /** Slack as a part of the step's observed input tokens, for best-effort caches. */
  ratio: number
}

/** Observed must equal predicted. */
export const EXACT_TOLERANCE: FidelityTolerance = { tokens: 0, ratio: 0 }

/**
 * The default against real providers: two OpenAI cache steps, or a tenth of the step's input. With the
 * prediction read at the provider's token count (see `fidelityVerdict`), what remains is granularity
 * and best-effort noise; a lost prefix (a read of zero where the simulator reads the history) is far
 * outside it.
 */
export const LIVE_TOLERANCE: FidelityTolerance = { tokens: 256, ratio: 0.1 }

/** The count a mismatch is about. */
export type FidelityBucket = 'read' | 'write'

/** One step whose observation the simulator did not predict within the tolerance. */
export type FidelityMismatch =
  | {
      kind: 'count'
      row: StepRow
      bucket: FidelityBucket
      observed: number
      /** The simulator's count, in its own (o200k_base × catalog scale) tokens. */
      predicted: number
      /** `predicted` at the provider's token count: × observed input / predicted input. */
      expected: number
      /** The slack allowed for this step, tokens. */
      allowed: number
    }
  | {
      /** The provider answered a request the simulator refuses: nothing to compare with. */
      kind: 'unpredicted'
      row: StepRow
    }

/**
 * Every successful step whose observed read or write is further from the prediction than the tolerance.
 * The prediction is first rescaled by observed input / predicted input, so a provider whose tokenizer
 * counts differently from o200k_base (catalog `tokenScale` 1 until calibrated) is compared on what it
 * cached rather than on how it counts; on the loopback server the two inputs are equal and the scale is 1.
 */
export function fidelityVerdict(
  rows: readonly FidelityRow[],
  tolerance: FidelityTolerance,
): FidelityMismatch[] {
  const mismatches: FidelityMismatch[] = []
  for (const { row, predicted } of rows) {
    if (predicted === undefined) {
      mismatches.push({ kind: 'unpredicted', row })
      continue
    }
    const scale = predicted.input === 0 ? 1 : row.inputTokens / predicted.input
    const allowed = Math.max(tolerance.tokens, tolerance.ratio * row.inputTokens)
    const compared: Array<[FidelityBucket, number, number]> = [
      ['read', row.cacheReadTokens, predicted.read],
      ['write', row.cacheWriteTokens, predicted.write],
    ]
    for (const [bucket, observed, count] of compared) {
      const expected = count * scale
      if (Math.abs(observed - expected) > allowed)
        mismatches.push({ kind: 'count', row, bucket, observed, predicted: count, expected, allowed })
    }
  }
  return mismatches
}

/**
 * One line naming the mismatch: provider, scenario.variant, turn.step (and attempt when retried), and
 * observed against predicted.
 */
export function describeMismatch(mismatch: FidelityMismatch): string {
  const { row } = mismatch
  const attempt = row.attempt === 0 ? '' : ` attempt ${row.attempt}`
  const where = `${row.provider} ${row.scenario}.${row.variant} turn.step ${row.turn}.${row.step}${attempt}`
  switch (mismatch.kind) {
    case 'unpredicted':
      return `${where}: the provider answered (read ${row.cacheReadTokens}, write ${row.cacheWriteTokens}) a request the simulator refuses`
    case 'count': {
      const { bucket, observed, predicted, expected, allowed } = mismatch
      const rescaled =
        Math.round(expected) === predicted ? '' : ` (${Math.round(expected)} at the provider's token count)`
      return `${where}: ${bucket} observed ${observed}, predicted ${predicted}${rescaled}, tolerance ±${Math.round(allowed)}`
    }
  }
}
