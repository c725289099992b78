// steps.csv and summary.csv read back into rows, the inverse of csv.ts: the kind told by the header,
// every cell checked, and a bad cell reported as `file:line: column: reason`.

import { parse } from 'csv-parse/sync'
import { CachelabError, unreachable } from '../harness/errors.ts'
import { LOOP_NAMES, type LoopName } from '../harness/loops/types.ts'
import {
  COMPATIBLE_ID_PATTERN,
  type HeaderReason,
  PROVIDER_IDS,
  type ProviderId,
  type Route,
} from '../harness/types.ts'
import { findModel, vendorOf } from '../providers/catalog.ts'
import { knownProviderIds } from '../providers/compatible.ts'
import { CONVERSATION_KINDS, type ConversationKind } from '../providers/wire/exchange.ts'
import { costUsd, idealCostUsd } from './cost.ts'
import { sessionKeyString, sessionLabel } from './session-key.ts'
import { standInOf } from './stand-ins.ts'
import {
  BREAK_COLUMNS,
  type BreakCause,
  type BreakChange,
  type BreakRow,
  STEP_COLUMNS,
  type StepRow,
  SUMMARY_COLUMNS,
  type SummaryRow,
} from './types.ts'

/** A parsed report file: which of the two it was, and its rows. */
export type ReportCsv = { kind: 'steps'; rows: StepRow[] } | { kind: 'summary'; rows: SummaryRow[] }

// Records keyed by every member of a union, so the compiler flags a value added to the union but not here.
const HEADER_REASONS: Record<HeaderReason, true> = { initial: true, resume: true, change: true, series: true }
const ROUTES: Record<Route, true> = { 'in-history': true, unsupported: true }
const BREAK_CAUSES: Record<BreakCause, true> = {
  'system-replace': true,
  'compaction-summary': true,
  'tool-result-prune': true,
  'tools-changed': true,
  'config-changed': true,
  'ttl-expired': true,
  'below-minimum': true,
  'lookback-miss': true,
  'routing-miss': true,
  evicted: true,
  'prefix-drift': true,
  'after-slot': true,
  'image-offload': true,
  'history-rewrite': true,
  'message-edited': true,
  'history-truncated': true,
  'history-summarized': true,
  'reasoning-dropped': true,
  resume: true,
  unexplained: true,
  'gateway-cache-marks-dropped': true,
  'gateway-cache-marks-added': true,
  'gateway-cache-marks-moved': true,
  'gateway-system-prefixed': true,
  'gateway-system-rewritten': true,
  'gateway-blocks-stripped': true,
  'gateway-blocks-injected': true,
  'gateway-cache-key-set': true,
  'gateway-cache-key-overwritten': true,
  'gateway-cache-key-dropped': true,
  'gateway-tools-reordered': true,
  'gateway-tools-changed': true,
  'gateway-wire-translated': true,
  'gateway-model-changed': true,
  'gateway-fields-dropped': true,
  'gateway-usage-dropped': true,
  'gateway-usage-zeroed': true,
}
const PROVIDERS: Record<string, true> = Object.fromEntries(PROVIDER_IDS.map((id) => [id, true]))

interface CsvTable {
  header: string[]
  records: Array<{ line: number; cells: string[] }>
}

/** Parse a steps.csv or summary.csv, telling which by its header. `file` names it in errors. */
export function parseReportCsv(text: string, file: string): ReportCsv {
  const table = readTable(text, file)
  const kind = kindOf(table.header, file)
  switch (kind) {
    case 'steps':
      return { kind, rows: stepRows(table, file) }
    case 'summary':
      return { kind, rows: summaryRows(table, file) }
    default:
      return unreachable(kind)
  }
}

/** Parse a steps.csv; any other file is an input error. */
export function parseStepsCsv(text: string, file: string): StepRow[] {
  const parsed = parseReportCsv(text, file)
  if (parsed.kind !== 'steps')
    throw new CachelabError('input', `${file}: expected a steps.csv, got a summary.csv`)
  return parsed.rows
}

/** Parse a summary.csv; any other file is an input error. */
export function parseSummaryCsv(text: string, file: string): SummaryRow[] {
  const parsed = parseReportCsv(text, file)
  if (parsed.kind !== 'summary')
    throw new CachelabError('input', `${file}: expected a summary.csv, got a steps.csv`)
  return parsed.rows
}

/** Parse a breaks.csv (a run's or a baseline's); any other file is an input error. */
export function parseBreaksCsv(text: string, file: string): BreakRow[] {
  const table = readTable(text, file)
  const absent = required(BREAK_COLUMNS).filter((column) => !table.header.includes(column))
  if (absent.length > 0)
    throw new CachelabError('input', `${file}:1: not a cachelab breaks.csv (lacks ${absent.join(', ')})`)
  return readers(table, file).map((reader) => {
    return {
      ...sessionLabelsWithoutRun(reader),
      turn: reader.integer('turn'),
      step: reader.integer('step'),
      attempt: reader.integer('attempt'),
      cause: reader.optionalOneOf('break_cause', BREAK_CAUSES),
      node: reader.optionalText('break_node'),
      eventSeq: reader.optionalInteger('break_event_seq'),
      lostTokens: reader.integer('lost_tokens'),
      lostUsd: reader.number('lost_usd'),
      providerCause: reader.optionalOneOf('provider_cause', BREAK_CAUSES),
      providerLostTokens: reader.integer('provider_lost_tokens'),
      providerLostUsd: reader.number('provider_lost_usd'),
      inputTokens: reader.integer('input_tokens'),
      cacheReadTokens: reader.integer('cache_read_tokens'),
      ...optionalText('previousModel', reader.optionalText('previous_model')),
      ...breakChange(reader),
    }
  })
}

const CHANGE_KINDS: Record<BreakChange['kind'], true> = {
  inserted: true,
  removed: true,
  replaced: true,
  field: true,
}

/**
 * What changed at a break, from its `change_*` cells; nothing where they are empty (a break whose source
 * kept no text, or a breaks.csv written before the columns were). Texts are read as written, spaces kept.
 */
function breakChange(reader: RecordReader): { change?: BreakChange } {
  const kind = reader.optionalOneOf('change_kind', CHANGE_KINDS)
  if (kind === undefined) return {}
  const change: BreakChange = { node: reader.optionalText('change_node') ?? reader.text('break_node'), kind }
  const field = reader.optionalText('change_field')
  if (field !== undefined) change.field = field
  const context = reader.verbatim('change_context')
  if (context !== undefined) change.context = context
  const before = reader.verbatim('change_before')
  if (before !== undefined) change.before = before
  const after = reader.verbatim('change_after')
  if (after !== undefined) change.after = after
  return { change }
}

function readTable(text: string, file: string): CsvTable {
  let parsed: Array<{ record: string[]; info: { lines: number } }>
  try {
    parsed = parse(text, { info: true, bom: true, skip_empty_lines: true }) as unknown as typeof parsed
  } catch (error) {
    const line = (error as { lines?: unknown }).lines
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0]
    throw new CachelabError(
      'input',
      `${file}:${typeof line === 'number' ? line : 1}: not valid CSV: ${reason}`,
    )
  }
  const [first, ...rest] = parsed
  if (first === undefined) throw new CachelabError('input', `${file}: empty file, expected a header line`)
  return {
    header: first.record.map((cell) => cell.trim()),
    records: rest.map((entry) => ({ line: entry.info.lines, cells: entry.record })),
  }
}

function kindOf(header: readonly string[], file: string): ReportCsv['kind'] {
  const missing = (columns: readonly string[]) =>
    required(columns).filter((column) => !header.includes(column))
  const missingSteps = missing(STEP_COLUMNS)
  const missingSummary = missing(SUMMARY_COLUMNS)
  if (missingSteps.length === 0) return 'steps'
  if (missingSummary.length === 0) return 'summary'
  // Name the missing columns of the kind the header resembles more.
  const closer = missingSteps.length <= missingSummary.length ? 'steps' : 'summary'
  const absent = closer === 'steps' ? missingSteps : missingSummary
  const total = required(closer === 'steps' ? STEP_COLUMNS : SUMMARY_COLUMNS).length
  if (absent.length < total / 2)
    throw new CachelabError(
      'input',
      `${file}:1: ${closer}.csv header lacks column${absent.length === 1 ? '' : 's'} ${absent.join(', ')}`,
    )
  throw new CachelabError(
    'input',
    `${file}:1: not a cachelab steps.csv or summary.csv (header starts ${JSON.stringify(header.slice(0, 3).join(','))})`,
  )
}

/** Typed access to one record's cells by column name; a bad cell is an input error at its line. */
class RecordReader {
  constructor(
    private readonly file: string,
    readonly line: number,
    private readonly cells: readonly string[],
    private readonly columns: ReadonlyMap<string, number>,
  ) {}

  fail(column: string, reason: string): never {
    throw new CachelabError('input', `${this.file}:${this.line}: column ${column}: ${reason}`)
  }

  optionalText(column: string): string | undefined {
    const cell = (this.cells[this.columns.get(column) ?? -1] ?? '').trim()
    return cell === '' ? undefined : cell
  }

  /** A text cell as written, its spaces kept; undefined when empty. */
  verbatim(column: string): string | undefined {
    const cell = this.cells[this.columns.get(column) ?? -1] ?? ''
    return cell === '' ? undefined : cell
  }

  text(column: string): string {
    return this.optionalText(column) ?? this.fail(column, 'empty, expected a value')
  }

  optionalNumber(column: string): number | undefined {
    const cell = this.optionalText(column)
    if (cell === undefined) return undefined
    const value = Number(cell)
    if (!Number.isFinite(value)) this.fail(column, `expected a number, got ${JSON.stringify(cell)}`)
    return value
  }

  number(column: string): number {
    return this.optionalNumber(column) ?? this.fail(column, 'empty, expected a number')
  }

  optionalInteger(column: string): number | undefined {
    const cell = this.optionalText(column)
    if (cell === undefined) return undefined
    if (!/^-?\d+$/.test(cell)) this.fail(column, `expected an integer, got ${JSON.stringify(cell)}`)
    return Number(cell)
  }

  integer(column: string): number {
    return this.optionalInteger(column) ?? this.fail(column, 'empty, expected an integer')
  }

  boolean(column: string): boolean {
    const cell = this.optionalText(column)
    if (cell === 'true') return true
    if (cell === 'false') return false
    return this.fail(column, `expected true or false, got ${JSON.stringify(cell ?? '')}`)
  }

  optionalOneOf<T extends string>(column: string, allowed: Readonly<Record<T, true>>): T | undefined {
    const cell = this.optionalText(column)
    if (cell === undefined) return undefined
    if (!Object.hasOwn(allowed, cell))
      this.fail(column, `unknown value ${JSON.stringify(cell)} (known: ${Object.keys(allowed).join(', ')})`)
    return cell as T
  }

  oneOf<T extends string>(column: string, allowed: Readonly<Record<T, true>>): T {
    return this.optionalOneOf(column, allowed) ?? this.fail(column, 'empty, expected a value')
  }

  /**
   * A provider id: a built-in one, or one of the form of a compatible provider's (`xai`), whether or not
   * the catalog loaded now describes it (a baseline may come from a run with another catalog file).
   */
  provider(column: string): ProviderId {
    const cell = this.optionalText(column) ?? this.fail(column, 'empty, expected a value')
    if (!Object.hasOwn(PROVIDERS, cell) && !COMPATIBLE_ID_PATTERN.test(cell))
      this.fail(column, `unknown value ${JSON.stringify(cell)} (known: ${knownProviderIds().join(', ')})`)
    return cell as ProviderId
  }
}

/** Columns appended after a format shipped: a file written before them still reads (the cell is empty). */
const OPTIONAL_COLUMNS: ReadonlySet<string> = new Set([
  'loop',
  'session',
  'conversation_kind',
  'agent',
  'simulated_as',
  'price_source',
  'stand_in_cost_usd',
  'previous_model',
  'usage_not_reported',
  'nothing_marked_requests',
  'nothing_marked_cost_usd',
  'marked_cost_usd',
  'below_minimum_requests',
  'caching_minimum_tokens',
  'provider_diagnosis',
  'provider_diagnosis_missed_tokens',
  'change_node',
  'change_kind',
  'change_field',
  'change_context',
  'change_before',
  'change_after',
])

const KINDS = Object.fromEntries(CONVERSATION_KINDS.map((kind) => [kind, true])) as Record<
  ConversationKind,
  true
>

const LOOPS = Object.fromEntries(LOOP_NAMES.map((name) => [name, true])) as Record<LoopName, true>

function required(columns: readonly string[]): string[] {
  return columns.filter((column) => !OPTIONAL_COLUMNS.has(column))
}

/** `{ [key]: value }`, or nothing for an empty cell (a number). */
function optionalNumber<K extends string>(key: K, value: number | undefined): { [P in K]?: number } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: number }
}

/** `{ [key]: value }`, or nothing for an empty cell. */
function optionalText<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string }
}

/** The labels that name a row's session (its conversation, where a session holds several). */
function sessionLabelsWithoutRun(reader: RecordReader) {
  const loop = reader.optionalOneOf('loop', LOOPS)
  const session = reader.optionalText('session')
  const conversationKind = reader.optionalOneOf('conversation_kind', KINDS)
  const agent = reader.optionalText('agent')
  return {
    scenario: reader.text('scenario'),
    variant: reader.text('variant'),
    provider: reader.provider('provider'),
    model: reader.text('model'),
    ...(loop !== undefined ? { loop } : {}),
    ...(session !== undefined ? { session } : {}),
    ...(conversationKind !== undefined ? { conversationKind } : {}),
    ...(agent !== undefined ? { agent } : {}),
  }
}

/** The labels that name a row's session and run, common to steps.csv and summary.csv. */
function sessionLabels(reader: RecordReader) {
  return { runId: reader.text('run_id'), ...sessionLabelsWithoutRun(reader) }
}

function readers(table: CsvTable, file: string): RecordReader[] {
  const columns = new Map(table.header.map((name, index) => [name, index]))
  return table.records.map((record) => new RecordReader(file, record.line, record.cells, columns))
}

function stepRows(table: CsvTable, file: string): StepRow[] {
  const sessionsWithSuccess = new Set<string>()
  return readers(table, file).map((reader) => {
    const labels = sessionLabels(reader)
    // csv.ts leaves every number of a request answered without usage empty (a measured row has them all).
    const unreported = reader.optionalText('input_tokens') === undefined
    const measured = (column: string) => (unreported ? 0 : reader.integer(column))
    const input = measured('input_tokens')
    const read = measured('cache_read_tokens')
    const write = measured('cache_write_tokens')
    const uncached = measured('uncached_tokens')
    const output = measured('output_tokens')
    if (read + write + uncached !== input)
      reader.fail(
        'input_tokens',
        `${input} is not cache_read + cache_write + uncached (${read} + ${write} + ${uncached})`,
      )
    // rows.ts writes a failed attempt with every token column 0; the CSV has no column of its own for it.
    const ok = unreported || input !== 0 || output !== 0
    // The first successful request of each session is cold, as rows.ts marks it.
    const session = sessionKeyString(labels)
    const cold = ok && !sessionsWithSuccess.has(session)
    if (ok) sessionsWithSuccess.add(session)
    const lost = measured('lost_tokens')
    const cost = unreported ? 0 : reader.number('cost_usd')
    return {
      ...labels,
      route: reader.oneOf('route', ROUTES),
      turn: reader.integer('turn'),
      step: reader.integer('step'),
      attempt: reader.integer('attempt'),
      headerReason: reader.optionalOneOf('header_reason', HEADER_REASONS),
      startsSeries: reader.boolean('starts_series'),
      ok,
      ...(unreported ? { usageNotReported: true as const } : {}),
      cold,
      inputTokens: input,
      cacheReadTokens: read,
      cacheWriteTokens: write,
      uncachedTokens: uncached,
      outputTokens: output,
      hitRatio: reader.optionalNumber('hit_ratio'),
      idealCacheReadTokens: measured('ideal_cache_read_tokens'),
      lostTokens: lost,
      breakNode: reader.optionalText('break_node'),
      breakEventSeq: reader.optionalInteger('break_event_seq'),
      breakCause: reader.optionalOneOf('break_cause', BREAK_CAUSES),
      providerCause: reader.optionalOneOf('provider_cause', BREAK_CAUSES),
      providerLostTokens: measured('provider_lost_tokens'),
      providerLostUsd: unreported ? 0 : reader.number('provider_lost_usd'),
      costUsd: cost,
      idealCostUsd: cost - savingsUsd(labels.provider, labels.model, { read, write, uncached, output }, lost),
      virtualTimeS: reader.number('virtual_time_s'),
      latencyMs: reader.number('latency_ms'),
      predictedCacheReadTokens: reader.optionalInteger('predicted_cache_read_tokens'),
      predictedCacheWriteTokens: reader.optionalInteger('predicted_cache_write_tokens'),
      ...optionalText(
        'simulatedAs',
        reader.optionalText('simulated_as') ?? standInOf(reader.optionalText('price_source')),
      ),
      ...providerDiagnosisOf(reader),
    }
  })
}

/** The provider's own diagnosis of a row, where steps.csv has one (files before the columns have none). */
function providerDiagnosisOf(reader: RecordReader): Pick<StepRow, 'providerDiagnosis'> {
  const reason = reader.optionalText('provider_diagnosis')
  if (reason === undefined) return {}
  const missedTokens = reader.optionalInteger('provider_diagnosis_missed_tokens')
  return { providerDiagnosis: { reason, ...(missedTokens !== undefined ? { missedTokens } : {}) } }
}

/**
 * What reading the lost tokens would have saved. steps.csv has no ideal cost column, so it is priced again
 * from the catalog, with every write at the 5-minute rate (the CSV does not split writes by TTL); a model
 * the catalog does not list saves nothing.
 */
function savingsUsd(
  provider: ProviderId,
  model: string,
  tokens: { read: number; write: number; uncached: number; output: number },
  lost: number,
): number {
  const prices = findModel(vendorOf(provider), model)?.prices
  if (prices === undefined || lost <= 0) return 0
  const buckets = { ...tokens, write5m: tokens.write, write1h: 0 }
  return Math.max(0, costUsd(buckets, prices) - idealCostUsd(buckets, lost, prices))
}

function summaryRows(table: CsvTable, file: string): SummaryRow[] {
  const firstLine = new Map<string, number>()
  return readers(table, file).map((reader) => {
    const labels = sessionLabels(reader)
    const session = sessionKeyString(labels)
    const earlier = firstLine.get(session)
    if (earlier !== undefined)
      throw new CachelabError(
        'input',
        `${file}:${reader.line}: a second row for ${sessionLabel(labels)} (the first is on line ${earlier})`,
      )
    firstLine.set(session, reader.line)
    const largestLost = reader.optionalInteger('largest_break_lost_tokens')
    const requests = reader.integer('requests')
    const unreported = reader.optionalInteger('usage_not_reported') ?? 0
    // csv.ts leaves the sums empty where no request reported usage: nothing was measured.
    const unknown = requests > 0 && unreported === requests
    const sum = (column: string) => (unknown ? (reader.optionalInteger(column) ?? 0) : reader.integer(column))
    const dollars = (column: string) =>
      unknown ? (reader.optionalNumber(column) ?? 0) : reader.number(column)
    return {
      ...labels,
      requests,
      failedAttempts: reader.integer('failed_attempts'),
      ...(unreported > 0 ? { usageNotReported: unreported } : {}),
      inputTokens: sum('input_tokens'),
      cacheReadTokens: sum('cache_read_tokens'),
      cacheWriteTokens: sum('cache_write_tokens'),
      uncachedTokens: sum('uncached_tokens'),
      outputTokens: sum('output_tokens'),
      hitRatioWarm: ratio(reader, 'hit_ratio_warm'),
      hitRatioAll: ratio(reader, 'hit_ratio_all'),
      writeRatio: ratio(reader, 'write_ratio'),
      idealCacheReadTokens: sum('ideal_cache_read_tokens'),
      lostTokens: sum('lost_tokens'),
      providerLostTokens: sum('provider_lost_tokens'),
      providerLostUsd: dollars('provider_lost_usd'),
      costUsd: dollars('cost_usd'),
      idealCostUsd: dollars('ideal_cost_usd'),
      breaks: reader.integer('breaks'),
      claimsHeld: reader.integer('claims_held'),
      claimsFailed: reader.integer('claims_failed'),
      ...optionalNumber('standInCostUsd', reader.optionalNumber('stand_in_cost_usd')),
      ...notesOf(reader),
      largestBreak:
        largestLost === undefined
          ? undefined
          : {
              lostTokens: largestLost,
              turn: reader.integer('largest_break_turn'),
              step: reader.integer('largest_break_step'),
              cause: reader.optionalOneOf('largest_break_cause', BREAK_CAUSES),
            },
    }
  })
}

/** The session's notes: nothing marked for caching, nothing above the caching minimum (empty cells: none). */
function notesOf(reader: RecordReader): Pick<SummaryRow, 'nothingMarked' | 'belowMinimum'> {
  const unmarked = reader.optionalInteger('nothing_marked_requests')
  const below = reader.optionalInteger('below_minimum_requests')
  return {
    ...(unmarked !== undefined && unmarked > 0
      ? {
          nothingMarked: {
            requests: unmarked,
            costUsd: reader.number('nothing_marked_cost_usd'),
            markedCostUsd: reader.number('marked_cost_usd'),
          },
        }
      : {}),
    ...(below !== undefined && below > 0
      ? { belowMinimum: { requests: below, minTokens: reader.integer('caching_minimum_tokens') } }
      : {}),
  }
}

function ratio(reader: RecordReader, column: string): number | undefined {
  const value = reader.optionalNumber(column)
  if (value !== undefined && (value < 0 || value > 1))
    reader.fail(column, `expected a ratio between 0 and 1, got ${value}`)
  return value
}

/** Parse a CSV with a header line into records keyed by column name. */
export function parseCsv(text: string): Array<Record<string, string>> {
  return parse(text, { columns: true, skip_empty_lines: true }) as Array<Record<string, string>>
}
