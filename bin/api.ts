// The library's main entry point (`import … from 'cachelab'`): what the command line does, as functions
// that return data: `run` the scenario matrix into rows, `simulate` wire bodies into usage, `check` a run
// against a baseline, `exportRows` as OpenTelemetry spans; the row vocabulary, the catalog and the
// scenario library to look things up in, and the CSV readers. Matchers are in `cachelab/vitest`, the mock
// providers in `cachelab/msw`.

export { CachelabError, type CachelabErrorKind } from '../harness/errors.ts'
export { PROVIDER_IDS, type ProviderId, type Usage } from '../harness/types.ts'
export {
  CATALOG,
  DEFAULT_MODELS,
  findModel,
  type ModelEntry,
  type Prices,
  resolveModel,
  type Vendor,
  vendorOf,
} from '../providers/catalog.ts'
export {
  type SimulateOptions,
  type SimulationInput,
  type SimulationOutput,
  simulate,
} from '../providers/simulate.ts'
export type { CapturedExchange } from '../providers/wire/exchange.ts'
export { breaksOf } from '../reports/breaks.ts'
export { CAPTURE_SCENARIO } from '../reports/capture-rows.ts'
export {
  DEFAULT_BREAK_THRESHOLD_TOKENS,
  DEFAULT_COST_TOLERANCE_PERCENT,
  DEFAULT_TOLERANCE_POINTS,
  type Finding,
  type GateOptions,
  type GateResult,
  type GateSide,
  type SessionVerdict,
} from '../reports/gate.ts'
export { gateGithub } from '../reports/gate-github.ts'
export { gateJson } from '../reports/gate-json.ts'
export { gateJunit } from '../reports/gate-junit.ts'
export { gateReport } from '../reports/gate-text.ts'
export { readBreaksCsv, readStepsCsv, readSummaryCsv } from '../reports/load.ts'
export { FIXED_EPOCH_MS } from '../reports/otel.ts'
export {
  type EndpointOutcome,
  exportRows,
  type OtelExportOptions,
  type OtelExportResult,
} from '../reports/otel-export.ts'
export type { OtelNameSet } from '../reports/otel-names.ts'
export { summarize } from '../reports/summary.ts'
export type { BreakCause, BreakRow, ClaimResult, StepRow, SummaryRow } from '../reports/types.ts'
export * from '../scenarios/authoring.ts'
export { findScenario, SCENARIOS } from '../scenarios/index.ts'
export { type RunOptions, type RunResult, run, type SessionProgress } from '../scenarios/matrix.ts'
export type { NotApplicable } from '../scenarios/requirements.ts'
export { type RunFiles, writeRunFiles } from '../scenarios/run-files.ts'
export { type CheckOptions, type CheckResult, type CheckScope, check } from './check.ts'
export { type CaptureReport, reportCapture } from './report.ts'
