// A session's requests as report.html reads them, in memory that does not grow with the session's rows
// as objects: every request's numbers packed into typed columns, and whole rows kept only where the page
// can show one (near a break, a failure, an idle gap, the first and last requests; every row while the
// session is short). Rows are added one at a time, so an import builds it as the requests arrive
// (notes/2026-12-02-streaming-rows.md).

import { modelText } from './labels.ts'
import { sessionKeyString } from './session-key.ts'
import { StandInTally, type StandInUse } from './stand-ins.ts'
import type { StepRow } from './types.ts'

/** Seconds of virtual time between two requests that make an idle gap, drawn on the request axis. */
export const IDLE_SECONDS = 60

/** Requests kept on each side of a notable one, by the chart and the step table alike. */
export const WINDOW_CONTEXT = 2

/**
 * A session keeps every row whole up to this many. Past it, the windows (200 chart columns, 80 table
 * lines) can show a request on its own only where it is notable, within WINDOW_CONTEXT of one, or a lone
 * quiet request between two such: the quiet stretches are too long to be split into single requests
 * (session-rows.test.ts checks a page is the same either way).
 */
export const WHOLE_ROWS_UP_TO = 2_000

/**
 * Whether a request needs its own slot: a break on either side, a failed attempt, the cold first request,
 * a request answered without usage (its unknown numbers are never averaged into a stretch's).
 */
export function isNotable(row: StepRow): boolean {
  return (
    !row.ok ||
    row.cold ||
    row.usageNotReported === true ||
    row.breakCause !== undefined ||
    row.providerCause !== undefined
  )
}

/** What the page shows of consecutive requests taken together. */
export interface SpanFacts {
  /** Requests in the span, and how many succeeded. */
  count: number
  ok: number
  /** Sums over the successful requests. */
  input: number
  read: number
  write: number
  uncached: number
  ideal: number
  lost: number
  costUsd: number
  /** Lost tokens over every request of the span, failed attempts included. */
  lostAll: number
  /** The first and last requests' turn, step and attempt. */
  first: StepLabel
  last: StepLabel
  /** The distinct models (as `modelText` names them), in order. */
  models: string[]
  /** The requests with a client-side break, whole (every notable request is kept). */
  clientBreaks: StepRow[]
}

/** What labels a request on the page: `turn.step#attempt`. */
export type StepLabel = Pick<StepRow, 'turn' | 'step' | 'attempt'>

// Bits of a request's flags byte.
const OK = 1
const KEEPS = 2
const CLIENT_BREAK = 4

// The packed numeric columns, in order.
const INPUT = 0
const READ = 1
const WRITE = 2
const UNCACHED = 3
const IDEAL = 4
const LOST = 5
const COST = 6
const TIME = 7
const NUMBERS = 8

/** One session's requests, added in order. */
export class SessionRows {
  /** The first row: its session labels name the session on the page. */
  readonly first: StepRow
  private size = 0
  private capacity = 8
  private numbers = new Float64Array(8 * NUMBERS)
  private labels = new Int32Array(8 * 3)
  private flags = new Uint8Array(8)
  private modelIndex = new Uint32Array(8)
  /** The model names met (as modelText names them), by index. */
  private readonly modelNames: string[] = []
  private readonly modelIndexOf = new Map<string, number>()
  /** Whole rows, by index: every row up to `wholeUpTo`, then only those the page can show alone. */
  private readonly kept = new Map<number, StepRow>()
  private readonly wholeUpTo: number
  // Running facts of the whole session.
  private failedCount = 0
  private clientBreakCount = 0
  private predictedAny = false
  private warmRead = 0
  private warmInput = 0
  private okLostUsd = 0
  private readonly breakRowsInOrder: StepRow[] = []
  /** The model sequence as modelsText shows it: its first few changes, the distinct set, the switch count. */
  private readonly sequence: string[] = []
  private sequenceLength = 0
  private lastModelText: string | undefined
  private lastOkModel: string | undefined
  private readonly switchedFrom = new Map<StepRow, string>()

  constructor(first: StepRow, options: { wholeUpTo?: number } = {}) {
    this.first = first
    this.wholeUpTo = options.wholeUpTo ?? WHOLE_ROWS_UP_TO
  }

  /** A session's rows (in order, all of one session). */
  static of(rows: readonly StepRow[], options: { wholeUpTo?: number } = {}): SessionRows {
    const [first] = rows
    if (first === undefined) throw new Error('a session has at least one row')
    const session = new SessionRows(first, options)
    for (const row of rows) session.add(row)
    return session
  }

  /** Requests added so far. */
  get count(): number {
    return this.size
  }

  add(row: StepRow): void {
    const index = this.size
    if (index === this.capacity) this.grow()
    this.size += 1
    const at = index * NUMBERS
    this.numbers[at + INPUT] = row.inputTokens
    this.numbers[at + READ] = row.cacheReadTokens
    this.numbers[at + WRITE] = row.cacheWriteTokens
    this.numbers[at + UNCACHED] = row.uncachedTokens
    this.numbers[at + IDEAL] = row.idealCacheReadTokens
    this.numbers[at + LOST] = row.lostTokens
    this.numbers[at + COST] = row.costUsd
    this.numbers[at + TIME] = row.virtualTimeS
    this.labels[index * 3] = row.turn
    this.labels[index * 3 + 1] = row.step
    this.labels[index * 3 + 2] = row.attempt
    const idle = index > 0 && row.virtualTimeS - (this.numbers[at - NUMBERS + TIME] as number) >= IDLE_SECONDS
    this.flags[index] =
      (row.ok ? OK : 0) |
      (isNotable(row) || idle ? KEEPS : 0) |
      (row.breakCause !== undefined ? CLIENT_BREAK : 0)
    const name = modelText(row)
    let model = this.modelIndexOf.get(name)
    if (model === undefined) {
      model = this.modelNames.length
      this.modelNames.push(name)
      this.modelIndexOf.set(name, model)
    }
    this.modelIndex[index] = model
    this.tally(row, name)
    this.kept.set(index, row)
    // A row far enough behind that every neighbour deciding its place is known goes unless the page can show it.
    if (this.size > this.wholeUpTo) {
      const settled = this.size - 1 - (WINDOW_CONTEXT + 2)
      if (this.size === this.wholeUpTo + 1) for (let old = 0; old < settled; old += 1) this.settle(old)
      if (settled >= 0) this.settle(settled)
    }
  }

  /** Whether the request at `index` needs its own slot: notable, or after an idle gap. */
  keeps(index: number): boolean {
    return ((this.flags[index] ?? 0) & KEEPS) !== 0
  }

  /** The request at `index`, whole; only a request the page can show alone is kept past the first rows. */
  row(index: number): StepRow {
    const row = this.kept.get(index)
    if (row === undefined) throw new Error(`request ${index} of the session was not kept whole`)
    return row
  }

  /** Seconds of virtual time between the request at `index` and the one before it, when that is an idle gap. */
  idleBefore(index: number): number {
    if (index <= 0 || index >= this.size) return 0
    const gap = this.time(index) - this.time(index - 1)
    return gap >= IDLE_SECONDS ? gap : 0
  }

  /** Virtual seconds of the request at `index`. */
  time(index: number): number {
    return this.numbers[index * NUMBERS + TIME] as number
  }

  /** The requests from `start` to `end` (exclusive) taken together. */
  span(start: number, end: number): SpanFacts {
    const sums = new Float64Array(NUMBERS)
    let ok = 0
    let lostAll = 0
    const models: string[] = []
    const seen = new Set<number>()
    const clientBreaks: StepRow[] = []
    for (let index = start; index < end; index += 1) {
      const flags = this.flags[index] as number
      const at = index * NUMBERS
      lostAll += this.numbers[at + LOST] as number
      if ((flags & OK) !== 0) {
        ok += 1
        for (let column = 0; column < COST + 1; column += 1)
          sums[column] = (sums[column] as number) + (this.numbers[at + column] as number)
      }
      const model = this.modelIndex[index] as number
      if (!seen.has(model)) {
        seen.add(model)
        models.push(this.modelNames[model] as string)
      }
      if ((flags & CLIENT_BREAK) !== 0) clientBreaks.push(this.row(index))
    }
    return {
      count: end - start,
      ok,
      input: sums[INPUT] as number,
      read: sums[READ] as number,
      write: sums[WRITE] as number,
      uncached: sums[UNCACHED] as number,
      ideal: sums[IDEAL] as number,
      lost: sums[LOST] as number,
      costUsd: sums[COST] as number,
      lostAll,
      first: this.label(start),
      last: this.label(end - 1),
      models,
      clientBreaks,
    }
  }

  /** Failed attempts in the session. */
  get failed(): number {
    return this.failedCount
  }

  /** Requests with a client-side break (failed or not). */
  get clientBreaks(): number {
    return this.clientBreakCount
  }

  /** Whether any request carries the simulator's prediction. */
  get predicted(): boolean {
    return this.predictedAny
  }

  /** Cache-read and input tokens of the successful warm requests. */
  get warm(): { read: number; input: number } {
    return { read: this.warmRead, input: this.warmInput }
  }

  /** Dollars lost over the successful requests: cost above ideal plus the provider side. */
  get lostUsd(): number {
    return this.okLostUsd
  }

  /** The successful requests with a break on either side, in order. */
  get breakRows(): readonly StepRow[] {
    return this.breakRowsInOrder
  }

  /** The distinct models (as modelText names them), in order. */
  get models(): readonly string[] {
    return this.modelNames
  }

  /**
   * The models of the session's requests in the order it used them (`claude-opus-5-5 → claude-haiku-4-5`),
   * each with the model it was simulated as; the distinct ones and the number of switches when it switched
   * often.
   */
  modelsText(): string {
    if (this.sequenceLength <= 4) return this.sequence.join(' → ')
    return `${this.modelNames.join(', ')} (${this.sequenceLength - 1} switches)`
  }

  /** The kept requests that switched model, to the model before them. */
  get switched(): ReadonlyMap<StepRow, string> {
    return this.switchedFrom
  }

  private label(index: number): StepLabel {
    return {
      turn: this.labels[index * 3] as number,
      step: this.labels[index * 3 + 1] as number,
      attempt: this.labels[index * 3 + 2] as number,
    }
  }

  private tally(row: StepRow, name: string): void {
    if (!row.ok) this.failedCount += 1
    if (row.breakCause !== undefined) this.clientBreakCount += 1
    if (row.predictedCacheReadTokens !== undefined) this.predictedAny = true
    if (name !== this.lastModelText) {
      this.sequenceLength += 1
      if (this.sequence.length <= 4) this.sequence.push(name)
      this.lastModelText = name
    }
    if (!row.ok) return
    if (!row.cold) {
      this.warmRead += row.cacheReadTokens
      this.warmInput += row.inputTokens
    }
    // Summed as the page always summed it: the running total plus cost above ideal, then the provider side.
    this.okLostUsd = this.okLostUsd + (row.costUsd - row.idealCostUsd) + row.providerLostUsd
    if (row.breakCause !== undefined || row.providerCause !== undefined) this.breakRowsInOrder.push(row)
    if (this.lastOkModel !== undefined && this.lastOkModel !== row.model)
      this.switchedFrom.set(row, this.lastOkModel)
    this.lastOkModel = row.model
  }

  /** Drop the whole row at `index` unless a window can show it alone. */
  private settle(index: number): void {
    if (this.showable(index)) return
    const row = this.kept.get(index)
    if (row === undefined) return
    this.kept.delete(index)
    this.switchedFrom.delete(row)
  }

  /** Near a notable request or the first one, or a lone request between two such. */
  private showable(index: number): boolean {
    return (
      this.covered(index) ||
      (index > 0 && this.covered(index - 1) && index + 1 < this.size && this.covered(index + 1))
    )
  }

  private covered(index: number): boolean {
    if (index <= WINDOW_CONTEXT) return true
    for (let near = index - WINDOW_CONTEXT; near <= index + WINDOW_CONTEXT; near += 1)
      if (near < this.size && this.keeps(near)) return true
    return false
  }

  private grow(): void {
    this.capacity *= 2
    const numbers = new Float64Array(this.capacity * NUMBERS)
    numbers.set(this.numbers)
    this.numbers = numbers
    const labels = new Int32Array(this.capacity * 3)
    labels.set(this.labels)
    this.labels = labels
    const flags = new Uint8Array(this.capacity)
    flags.set(this.flags)
    this.flags = flags
    const models = new Uint32Array(this.capacity)
    models.set(this.modelIndex)
    this.modelIndex = models
  }
}

/** A run's rows by session, in first-seen order, built one row at a time. */
export class RunRows {
  private readonly sessions = new Map<string, SessionRows>()
  private total = 0
  private readonly standInTally = new StandInTally()
  private readonly options: { wholeUpTo?: number }

  constructor(options: { wholeUpTo?: number } = {}) {
    this.options = options
  }

  /** Rows given in run order. */
  static of(rows: readonly StepRow[], options: { wholeUpTo?: number } = {}): RunRows {
    const run = new RunRows(options)
    for (const row of rows) run.add(row)
    return run
  }

  add(row: StepRow): void {
    const key = sessionKeyString(row)
    const session = this.sessions.get(key)
    if (session === undefined) this.sessions.set(key, SessionRows.of([row], this.options))
    else session.add(row)
    this.total += 1
    this.standInTally.add(row)
  }

  /** The models priced as a stand-in, with the dollars on each, and the cost of every answered row. */
  standIns(): { uses: StandInUse[]; totalUsd: number } {
    return { uses: this.standInTally.result(), totalUsd: this.standInTally.totalUsd() }
  }

  /** Every request of the run. */
  get count(): number {
    return this.total
  }

  /** The sessions by key string (sessionKeyString), in first-seen order. */
  bySession(): ReadonlyMap<string, SessionRows> {
    return this.sessions
  }
}
