// The public surface of reports/: the row vocabulary, CSV writing and reading, the summary, comparison
// and gate, the HTML report, and the Vitest matchers. Everything else in the folder is internal.

export { changeLines } from './break-change.ts'
export type { BreakEvent } from './break-events.ts'
export { breakEventsOf, describeEvent } from './break-events.ts'
export { breakLines, breaksOf } from './breaks.ts'
export type { ComparisonEntry } from './compare.ts'
export { compareSummaries, comparisonTable } from './compare.ts'
export { breaksCsv, claimsCsv, stepsCsv, summaryCsv } from './csv.ts'
export type {
  FallenStep,
  Finding,
  GateInput,
  GateOptions,
  GateResult,
  GateScope,
  GateSide,
  RowProblem,
  SessionVerdict,
  UnmatchedSessions,
} from './gate.ts'
export {
  checkBaseline,
  DEFAULT_BREAK_THRESHOLD_TOKENS,
  DEFAULT_COST_TOLERANCE_PERCENT,
  DEFAULT_TOLERANCE_POINTS,
} from './gate.ts'
export { gateGithub } from './gate-github.ts'
export { gateJson } from './gate-json.ts'
export { gateJunit } from './gate-junit.ts'
export { gateReport } from './gate-text.ts'
export type { ReportInput } from './html.ts'
export { renderReport } from './html.ts'
export { readBreaksCsv, readReportCsv, readStepsCsv, readSummaryCsv } from './load.ts'
export type { ReportCsv } from './parse.ts'
export { parseReportCsv, parseStepsCsv, parseSummaryCsv } from './parse.ts'
export type { RunPlan } from './plan.ts'
export { rowProblems } from './sanity.ts'
export type { SessionKey } from './session-key.ts'
export type { Observation, SessionRowContext } from './session-row-builder.ts'
export { SessionRowBuilder } from './session-row-builder.ts'
export { summarize } from './summary.ts'
export type { SummaryTableOptions } from './table.ts'
export { breaksDigest, summaryTable, wantsColour } from './table.ts'
export type { BreakCause, BreakChange, BreakRow, ClaimResult, StepRow, SummaryRow } from './types.ts'
export { BREAK_COLUMNS, CLAIM_COLUMNS, STEP_COLUMNS, SUMMARY_COLUMNS } from './types.ts'
export type { BaselineMatchOptions, CachelabMatchers } from './vitest.ts'
export { cachelabMatchers } from './vitest.ts'
