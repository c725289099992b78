// Vitest matchers for users' own cache tests (the `cachelab/vitest` entry point): a warm hit ratio floor,
// no break above a token count, a baseline to hold and a request that must extend its predecessor.
// Register with `expect.extend(cachelabMatchers)`. Vitest is only a type import here: the user's own
// Vitest runs the matchers.

import type { MatcherState } from 'vitest'
import { changeLines } from './break-change.ts'
import { breakLine, breakLines, breaksOf, breakTokens } from './breaks.ts'
import {
  checkBaseline,
  DEFAULT_BREAK_THRESHOLD_TOKENS,
  DEFAULT_COST_TOLERANCE_PERCENT,
  DEFAULT_TOLERANCE_POINTS,
} from './gate.ts'
import { gateReport } from './gate-text.ts'
import { breakDescription, stepLabel } from './labels.ts'
import { summarize } from './summary.ts'
import { countText, percentText } from './text-table.ts'
import type { StepRow, SummaryRow } from './types.ts'

/** Options of `toMatchBaseline`. */
export interface BaselineMatchOptions {
  /** How far below the baseline a warm hit ratio may fall, in percentage points; 0.5 when not given. */
  tolerancePP?: number
  /** How far above the baseline a session's cost may rise, in percent; 1 when not given. */
  costTolerancePercent?: number
}

/** The matchers' signatures, for the `vitest` module augmentation below. */
export interface CachelabMatchers<R = unknown> {
  /**
   * The rows' warm hit ratio, token-weighted (cache-read ÷ input tokens of successful requests after each
   * session's first), is at least `minimum`, a ratio from 0 to 1 (0.9 is 90%).
   */
  toHoldHitRatio(minimum: number): R
  /**
   * No request of the rows (StepRow[]) lost `tokens` or more to a break: each request's lost tokens (the
   * client's change) plus its provider-side lost tokens (expiry, lookback, routing) stay below `tokens`.
   */
  toHaveNoBreakAbove(tokens: number): R
  /** Every baseline session is in the rows (step or summary rows) with a warm hit ratio within tolerance. */
  toMatchBaseline(baseline: readonly SummaryRow[], options?: BaselineMatchOptions): R
  /** The step row has no break cause: it extended the previous request of its session. */
  toExtendPrevious(): R
}

declare module 'vitest' {
  // biome-ignore lint/suspicious/noExplicitAny: merging requires the same type parameter as Vitest declares (TS2428)
  interface Matchers<T = any> extends CachelabMatchers<T> {}
}

interface MatchResult {
  pass: boolean
  message: () => string
}

/** The matchers, for `expect.extend`. */
export const cachelabMatchers = {
  toHoldHitRatio(this: MatcherState, received: unknown, minimum: number): MatchResult {
    const rows = stepRowsOf(received, 'toHoldHitRatio')
    if (typeof minimum !== 'number' || !(minimum >= 0 && minimum <= 1))
      throw new TypeError(`toHoldHitRatio takes a ratio from 0 to 1 (0.9 is 90%), got ${String(minimum)}`)
    const warm = rows.filter((row) => row.ok && !row.cold)
    const read = warm.reduce((total, row) => total + row.cacheReadTokens, 0)
    const input = warm.reduce((total, row) => total + row.inputTokens, 0)
    const floor = percentText(minimum)
    if (input === 0)
      return {
        pass: false,
        message: () =>
          `expected a warm hit ratio of at least ${floor}, but there is none: the denominator, warm input tokens (successful requests after each session's first), is 0 over ${rows.length} rows`,
      }
    const ratio = read / input
    const basis = `${countText(read)} cache-read of ${countText(input)} warm input tokens, token-weighted over ${warm.length} successful requests after each session's first`
    return {
      pass: ratio >= minimum,
      message: () =>
        this.isNot
          ? `expected a warm hit ratio below ${floor}, got ${percentText(ratio)} (${basis})`
          : `expected a warm hit ratio of at least ${floor}, got ${percentText(ratio)} (${basis})`,
    }
  },

  toHaveNoBreakAbove(this: MatcherState, received: unknown, tokens: number): MatchResult {
    const rows = stepRowsOf(received, 'toHaveNoBreakAbove')
    if (typeof tokens !== 'number' || !(tokens > 0) || !Number.isFinite(tokens))
      throw new TypeError(`toHaveNoBreakAbove takes a positive token count, got ${String(tokens)}`)
    const breaks = breaksOf(rows)
    const above = breaks.filter((entry) => breakTokens(entry) >= tokens)
    const limit = `${countText(tokens)} token${tokens === 1 ? '' : 's'}`
    return {
      pass: above.length === 0,
      message: () => {
        if (this.isNot)
          return breaks.length === 0
            ? `expected a break of ${limit} or more, but no request of the ${rows.length} rows broke`
            : `expected a break of ${limit} or more, but the breaks cost less:\n${breaks.map((entry) => `  ${breakLine(entry)}`).join('\n')}`
        const requests = above.length === 1 ? 'one request' : `${above.length} requests`
        // Each break with what changed there beneath it, as the terminal and the gate show it.
        return `expected no break of ${limit} or more (lost plus provider-side), but ${requests} lost that much:\n${above.flatMap((entry) => breakLines(entry)).join('\n')}`
      },
    }
  },

  toMatchBaseline(
    this: MatcherState,
    received: unknown,
    baseline: readonly SummaryRow[],
    options: BaselineMatchOptions = {},
  ): MatchResult {
    const tolerancePoints = options.tolerancePP ?? DEFAULT_TOLERANCE_POINTS
    if (!(tolerancePoints >= 0))
      throw new TypeError(`toMatchBaseline takes tolerancePP >= 0, got ${String(options.tolerancePP)}`)
    if (!Array.isArray(baseline) || baseline.length === 0)
      throw new TypeError('toMatchBaseline needs the baseline summary rows (readSummaryCsv), got none')
    const run = isSummaryRows(received) ? received : summarize(stepRowsOf(received, 'toMatchBaseline'))
    const result = checkBaseline({
      baseline: { summary: baseline, breaks: undefined },
      run: { summary: run, breaks: undefined },
      claims: [],
      rowProblems: [],
      options: {
        tolerancePoints,
        costTolerancePercent: options.costTolerancePercent ?? DEFAULT_COST_TOLERANCE_PERCENT,
        breakThresholdTokens: DEFAULT_BREAK_THRESHOLD_TOKENS,
        strict: false,
      },
    })
    return {
      pass: result.passed,
      message: () =>
        this.isNot
          ? `expected the rows not to hold the baseline, but all ${result.checked} baseline sessions hold within ${tolerancePoints} pp`
          : `expected the rows to hold the baseline:\n${gateReport(result)}`,
    }
  },

  toExtendPrevious(this: MatcherState, received: unknown): MatchResult {
    if (!isStepRow(received))
      throw new TypeError(`toExtendPrevious expects a StepRow, got ${describe(received)}`)
    const where = `request ${stepLabel(received)} of ${received.scenario} · ${received.variant} · ${received.provider}`
    return {
      pass: received.breakCause === undefined,
      message: () =>
        this.isNot
          ? `expected ${where} to break the cache, but it extends the previous request`
          : `expected ${where} to extend the previous request, but it broke: ${breakDescription(received)}${
              received.breakChange === undefined
                ? ''
                : `\n${changeLines(received.breakChange)
                    .map((line) => `    ${line}`)
                    .join('\n')}`
            }`,
    }
  },
}

function stepRowsOf(received: unknown, matcher: string): readonly StepRow[] {
  if (Array.isArray(received) && received.every(isStepRow)) return received
  throw new TypeError(`${matcher} expects StepRow[] (a run's rows), got ${describe(received)}`)
}

function isStepRow(value: unknown): value is StepRow {
  if (typeof value !== 'object' || value === null) return false
  const row = value as Partial<Record<keyof StepRow, unknown>>
  return (
    typeof row.ok === 'boolean' &&
    typeof row.cold === 'boolean' &&
    typeof row.inputTokens === 'number' &&
    typeof row.cacheReadTokens === 'number' &&
    typeof row.turn === 'number' &&
    typeof row.step === 'number'
  )
}

function isSummaryRows(value: unknown): value is readonly SummaryRow[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every(
      (row: unknown) =>
        typeof row === 'object' &&
        row !== null &&
        'hitRatioWarm' in row &&
        'requests' in row &&
        !('turn' in row),
    )
  )
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`
  return value === null ? 'null' : typeof value
}
