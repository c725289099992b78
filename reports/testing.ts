// Test helpers for reports: step rows sketched from their token buckets, sessions of them with the first
// successful request marked cold, as rows.ts marks it. Used by the reports and CLI tests.

import type { ProviderId } from '../harness/types.ts'
import type { BreakCause, StepRow } from './types.ts'

/** The parts of a step row a test cares about; the rest get plain defaults. */
export interface StepSketch {
  scenario?: string
  variant?: string
  provider?: ProviderId
  model?: string
  turn?: number
  step?: number
  attempt?: number
  /** Cache-read tokens. */
  read?: number
  /** Cache-write tokens. */
  write?: number
  /** Uncached tokens. */
  uncached?: number
  /** A failed attempt: every token column 0. */
  failed?: boolean
  /** Tokens the request would have read had it extended the previous one, beyond those it read. */
  lost?: number
  breakCause?: BreakCause
  providerCause?: BreakCause
  providerLost?: number
  breakNode?: string
  breakEventSeq?: number
  cold?: boolean
  /** Virtual time of the request, in seconds. */
  at?: number
}

/** One step row; buckets sum to the input, the hit ratio is read / input. */
export function stepRow(sketch: StepSketch = {}): StepRow {
  const failed = sketch.failed === true
  const read = failed ? 0 : (sketch.read ?? 0)
  const write = failed ? 0 : (sketch.write ?? 0)
  const uncached = failed ? 0 : (sketch.uncached ?? 0)
  const input = read + write + uncached
  const lost = failed ? 0 : (sketch.lost ?? 0)
  const cost = (uncached * 3 + read * 0.3 + write * 3.75) / 1_000_000
  return {
    runId: 'sim-test',
    scenario: sketch.scenario ?? 'append-only',
    variant: sketch.variant ?? 'default',
    provider: sketch.provider ?? 'anthropic',
    model: sketch.model ?? 'test-model',
    route: 'unsupported',
    turn: sketch.turn ?? 1,
    step: sketch.step ?? 1,
    attempt: sketch.attempt ?? 0,
    headerReason: undefined,
    startsSeries: false,
    ok: !failed,
    cold: sketch.cold ?? false,
    inputTokens: input,
    cacheReadTokens: read,
    cacheWriteTokens: write,
    uncachedTokens: uncached,
    outputTokens: failed ? 0 : 10,
    hitRatio: input === 0 ? undefined : read / input,
    idealCacheReadTokens: read + lost,
    lostTokens: lost,
    breakNode: sketch.breakNode,
    breakEventSeq: sketch.breakEventSeq,
    breakCause: sketch.breakCause,
    providerCause: sketch.providerCause,
    providerLostTokens: failed ? 0 : (sketch.providerLost ?? 0),
    providerLostUsd: failed ? 0 : ((sketch.providerLost ?? 0) * 2.7) / 1_000_000,
    costUsd: cost,
    idealCostUsd: cost - (lost * 2.7) / 1_000_000,
    virtualTimeS: sketch.at ?? 0,
    latencyMs: 100,
    predictedCacheReadTokens: undefined,
    predictedCacheWriteTokens: undefined,
  }
}

/** A session's rows: steps numbered 1, 2, … in turn 1 unless sketched, the first successful one cold. */
export function sessionRows(
  labels: Pick<StepSketch, 'scenario' | 'variant' | 'provider' | 'model'>,
  sketches: readonly StepSketch[],
): StepRow[] {
  let seenSuccess = false
  return sketches.map((sketch, index) => {
    const cold = sketch.failed !== true && !seenSuccess
    if (sketch.failed !== true) seenSuccess = true
    return stepRow({ step: index + 1, ...labels, ...sketch, cold })
  })
}
