// steps.csv and summary.csv: rows in contract column order, numbers in a fixed format so a simulated
// run's files are byte-identical across runs.

import { priceSource } from './stand-ins.ts'
import {
  BREAK_COLUMNS,
  type BreakRow,
  CLAIM_COLUMNS,
  type ClaimResult,
  STEP_COLUMNS,
  type StepRow,
  SUMMARY_COLUMNS,
  type SummaryRow,
} from './types.ts'

type Cell = string | number | boolean | undefined

/** A field holding one of these is quoted (steps.csv's header, below, is written when the module loads). */
const NEEDS_QUOTES = /[",\n\r]/

function format(value: Cell, digits?: number): string {
  if (value === undefined) return ''
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'number') return digits === undefined ? String(value) : value.toFixed(digits)
  return value
}

/** A number the row measured: empty where the request's usage was not reported. */
function measure(row: StepRow, value: number, digits?: number): string {
  return row.usageNotReported === true ? '' : format(value, digits)
}

/** One steps.csv record in column order; a request answered without usage has its numbers' cells empty. */
export function stepRecord(row: StepRow): string[] {
  return [
    row.runId,
    row.scenario,
    row.variant,
    row.provider,
    row.model,
    row.route,
    format(row.turn),
    format(row.step),
    format(row.attempt),
    format(row.headerReason),
    format(row.startsSeries),
    measure(row, row.inputTokens),
    measure(row, row.cacheReadTokens),
    measure(row, row.cacheWriteTokens),
    measure(row, row.uncachedTokens),
    measure(row, row.outputTokens),
    format(row.hitRatio, 6),
    measure(row, row.idealCacheReadTokens),
    measure(row, row.lostTokens),
    format(row.breakNode),
    format(row.breakEventSeq),
    format(row.breakCause),
    measure(row, row.costUsd, 8),
    format(row.virtualTimeS, 3),
    format(row.latencyMs),
    format(row.providerCause),
    measure(row, row.providerLostTokens),
    measure(row, row.providerLostUsd, 8),
    format(row.predictedCacheReadTokens),
    format(row.predictedCacheWriteTokens),
    format(row.loop),
    format(row.session),
    format(row.conversationKind),
    format(row.agent),
    format(row.simulatedAs),
    priceSource(row),
    format(row.providerDiagnosis?.reason),
    format(row.providerDiagnosis?.missedTokens),
  ]
}

/**
 * One summary.csv record in column order. A session none of whose requests reported usage has its token
 * and cost cells empty: nothing was measured, so nothing is 0.
 */
export function summaryRecord(row: SummaryRow): string[] {
  const unknown = row.requests > 0 && row.usageNotReported === row.requests
  const sum = (value: number, digits?: number) => (unknown ? '' : format(value, digits))
  return [
    row.runId,
    row.scenario,
    row.variant,
    row.provider,
    row.model,
    format(row.requests),
    format(row.failedAttempts),
    sum(row.inputTokens),
    sum(row.cacheReadTokens),
    sum(row.cacheWriteTokens),
    sum(row.uncachedTokens),
    sum(row.outputTokens),
    format(row.hitRatioWarm, 6),
    format(row.hitRatioAll, 6),
    format(row.writeRatio, 6),
    sum(row.idealCacheReadTokens),
    sum(row.lostTokens),
    sum(row.providerLostTokens),
    sum(row.providerLostUsd, 8),
    sum(row.costUsd, 8),
    sum(row.idealCostUsd, 8),
    format(row.breaks),
    format(row.largestBreak?.lostTokens),
    format(row.largestBreak?.turn),
    format(row.largestBreak?.step),
    format(row.largestBreak?.cause),
    format(row.claimsHeld),
    format(row.claimsFailed),
    format(row.loop),
    format(row.session),
    format(row.conversationKind),
    format(row.agent),
    format(row.standInCostUsd, 8),
    format(row.usageNotReported ?? 0),
    format(row.nothingMarked?.requests),
    format(row.nothingMarked?.costUsd, 8),
    format(row.nothingMarked?.markedCostUsd, 8),
    format(row.belowMinimum?.requests),
    format(row.belowMinimum?.minTokens),
  ]
}

/** One breaks.csv record in column order. */
export function breakRecord(row: BreakRow): string[] {
  return [
    row.scenario,
    row.variant,
    row.provider,
    row.model,
    format(row.turn),
    format(row.step),
    format(row.attempt),
    format(row.cause),
    format(row.node),
    format(row.eventSeq),
    format(row.lostTokens),
    format(row.lostUsd, 8),
    format(row.providerCause),
    format(row.providerLostTokens),
    format(row.providerLostUsd, 8),
    format(row.inputTokens),
    format(row.cacheReadTokens),
    format(row.loop),
    format(row.session),
    format(row.conversationKind),
    format(row.previousModel),
    format(row.change?.node),
    format(row.change?.kind),
    format(row.change?.field),
    format(row.change?.context),
    format(row.change?.before),
    format(row.change?.after),
  ]
}

export function breaksCsv(rows: readonly BreakRow[]): string {
  return csvText([BREAK_COLUMNS, ...rows.map(breakRecord)])
}

export function claimsCsv(rows: readonly ClaimResult[]): string {
  return csvText([
    CLAIM_COLUMNS,
    ...rows.map((row) => [
      row.scenario,
      row.provider,
      row.claim,
      row.status,
      row.variants.join(' '),
      row.text,
      row.observed,
    ]),
  ])
}

export function stepsCsv(rows: readonly StepRow[]): string {
  return `${STEPS_CSV_HEAD}${stepsCsvLines(rows)}`
}

/** steps.csv's header line. */
export const STEPS_CSV_HEAD: string = csvLine(STEP_COLUMNS)

/** steps.csv's lines of some rows, without the header: a file written in pieces is the same file. */
export function stepsCsvLines(rows: readonly StepRow[]): string {
  // Joined, not added one to another: a string grown by `+=` is a tree of pieces that has to be walked
  // piece by piece when it is written out.
  return rows.map((row) => csvLine(stepRecord(row))).join('')
}

/**
 * One record of text fields as csv-stringify writes it with its defaults: a field holding a comma, a quote
 * or a line break quoted, its quotes doubled; the line ended with `\n`. Written here because steps.csv has a
 * line per request and the library's general path (casts, options per field) cost an import of many files
 * a third of a second, and so that writing a run's files loads no CSV library (run's library and loop
 * comparisons still use it); csv.test.ts checks this against csv-stringify.
 */
/** Records of text fields as csv-stringify writes them with its defaults: `csvLine` of each. */
export function csvText(records: ReadonlyArray<readonly string[]>): string {
  return records.map(csvLine).join('')
}

export function csvLine(fields: readonly string[]): string {
  let quoted: string[] | undefined
  for (let index = 0; index < fields.length; index += 1) {
    const field = fields[index] as string
    if (NEEDS_QUOTES.test(field)) {
      quoted ??= [...fields]
      quoted[index] = `"${field.replaceAll('"', '""')}"`
    }
  }
  return `${(quoted ?? fields).join(',')}\n`
}

export function summaryCsv(rows: readonly SummaryRow[]): string {
  return csvText([SUMMARY_COLUMNS, ...rows.map(summaryRecord)])
}
