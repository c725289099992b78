// The requests a calibration compares, packed: per request the few numbers the fit reads (time, buckets,
// turn and step, the replay's unit positions, a recorded prediction) in one typed array, its labels as
// indexes into the names met, its `file:line` as a file index and a line. A request costs ~150 bytes here,
// not the parsed record's kilobytes, so a 1 GB transcript calibrates in bounded memory.

import type { ProviderId } from '../harness/types.ts'
import type { ReplayedRequest } from './observed/transcripts/replay.ts'
import type { ObservedRequest } from './observed/transcripts/types.ts'

// The numeric columns, in order; NaN is "not recorded".
const TIME = 0
const INPUT = 1
const OUTPUT = 2
const READ = 3
const WRITE = 4
const WRITE_5M = 5
const WRITE_1H = 6
const TURN = 7
const STEP = 8
const PREDICTION = 9
const REPLAY_READ = 10
const REPLAY_INPUT = 11
const INPUT_END = 12
const CARRY = 13
const MESSAGES = 14
const SOURCE_LINE = 15
const NUMBERS = 16

// Label columns: the session, the provider model, the previous request of the session, flags, the source file.
const SESSION = 0
const MODEL = 1
const PREVIOUS = 2
const FLAGS = 3
const SOURCE_FILE = 4
const LABELS = 5

const HAS_PARENT = 1

/** Requests per storage chunk: the columns grow a chunk at a time, never copied. */
const CHUNK = 4_096

/** What a prediction needs from the replay of a DeepSeek request and its predecessor. */
export interface ReplayView {
  read: number
  inputEnd: number | undefined
  carry: number | undefined
}

const defined = (value: number): number | undefined => (Number.isNaN(value) ? undefined : value)

/** Interned names: each string once, by index. */
class Names {
  readonly list: string[] = []
  private readonly index = new Map<string, number>()

  of(name: string): number {
    let found = this.index.get(name)
    if (found === undefined) {
      found = this.list.length
      this.list.push(name)
      this.index.set(name, found)
    }
    return found
  }
}

/** The requests of one calibration, in the order added; a request's session predecessor is found as it comes. */
export class CalibrationRequests {
  private size = 0
  private readonly numberChunks: Float64Array[] = []
  private readonly labelChunks: Int32Array[] = []
  /**
   * Each `file:line` as the file's index and the line (most sources): a long session's sources share one
   * path. A source of another shape is kept whole, by request index.
   */
  private readonly sourceFiles = new Names()
  private readonly otherSources = new Map<number, string>()
  private readonly sessionNames = new Names()
  private readonly modelNames = new Names()
  private readonly models: Array<{ provider: ProviderId; model: string }> = []
  /** The latest request index per format and session. */
  private readonly latest = new Map<string, number>()

  /** Requests given as arrays (tests, small sources): `replayed[i]` and `predictions[i]` belong to `requests[i]`. */
  static of(
    requests: readonly ObservedRequest[],
    extra: {
      replayed?: readonly (ReplayedRequest | undefined)[]
      predictions?: readonly (number | undefined)[]
    } = {},
  ): CalibrationRequests {
    const store = new CalibrationRequests()
    for (const [index, request] of requests.entries())
      store.add(request, { replayed: extra.replayed?.[index], prediction: extra.predictions?.[index] })
    return store
  }

  get count(): number {
    return this.size
  }

  /**
   * Add a request: its labels and numbers are copied, nothing of the record is kept. `replayed` is its
   * replay with exact unit positions (it may come later, `setReplay`); `prediction` the read the simulator
   * predicted when it was sent. Returns its index.
   */
  add(
    request: ObservedRequest,
    extra: { replayed?: ReplayedRequest | undefined; prediction?: number | undefined } = {},
  ): number {
    const index = this.size
    if (index % CHUNK === 0) {
      this.numberChunks.push(new Float64Array(CHUNK * NUMBERS))
      this.labelChunks.push(new Int32Array(CHUNK * LABELS))
    }
    this.size += 1
    const usage = request.usage
    this.setNumber(index, TIME, Date.parse(request.time))
    this.setNumber(index, INPUT, usage.input)
    this.setNumber(index, OUTPUT, usage.output)
    this.setNumber(index, READ, usage.cacheRead ?? 0)
    this.setNumber(index, WRITE, usage.cacheWrite ?? 0)
    this.setNumber(index, WRITE_5M, usage.cacheWrite5m ?? 0)
    this.setNumber(index, WRITE_1H, usage.cacheWrite1h ?? 0)
    this.setNumber(index, TURN, request.turn ?? Number.NaN)
    this.setNumber(index, STEP, request.step ?? Number.NaN)
    this.setNumber(index, PREDICTION, extra.prediction ?? Number.NaN)
    const body = request.request?.body
    this.setNumber(
      index,
      MESSAGES,
      body === undefined ? Number.NaN : Array.isArray(body.messages) ? body.messages.length : 0,
    )
    this.setReplay(index, extra.replayed)
    const key = `${request.format}\u0000${request.session}`
    this.setLabel(index, SESSION, this.sessionNames.of(request.session))
    const model = this.modelNames.of(`${request.provider}\u0000${request.model}`)
    if (model === this.models.length) this.models.push({ provider: request.provider, model: request.model })
    this.setLabel(index, MODEL, model)
    this.setLabel(index, PREVIOUS, this.latest.get(key) ?? -1)
    this.setLabel(index, FLAGS, request.parent !== undefined ? HAS_PARENT : 0)
    this.latest.set(key, index)
    this.setSource(index, request.source)
    return index
  }

  private setSource(index: number, source: string): void {
    const colon = source.lastIndexOf(':')
    const line = Number(source.slice(colon + 1))
    if (colon > 0 && Number.isSafeInteger(line) && line >= 0 && String(line) === source.slice(colon + 1)) {
      this.setLabel(index, SOURCE_FILE, this.sourceFiles.of(source.slice(0, colon)))
      this.setNumber(index, SOURCE_LINE, line)
    } else {
      this.setLabel(index, SOURCE_FILE, -1)
      this.otherSources.set(index, source)
    }
  }

  /** The replay of the request at `index` (DeepSeek placements are replayed after their file is read). */
  setReplay(index: number, replayed: ReplayedRequest | undefined): void {
    const predicted = replayed?.predicted
    this.setNumber(index, REPLAY_READ, predicted?.read ?? Number.NaN)
    this.setNumber(index, REPLAY_INPUT, predicted?.input ?? Number.NaN)
    this.setNumber(
      index,
      INPUT_END,
      predicted === undefined ? Number.NaN : (replayed?.inputEnd ?? Number.NaN),
    )
    this.setNumber(index, CARRY, predicted === undefined ? Number.NaN : (replayed?.carry ?? Number.NaN))
  }

  private setNumber(index: number, column: number, value: number): void {
    ;(this.numberChunks[Math.floor(index / CHUNK)] as Float64Array)[(index % CHUNK) * NUMBERS + column] =
      value
  }

  private setLabel(index: number, column: number, value: number): void {
    ;(this.labelChunks[Math.floor(index / CHUNK)] as Int32Array)[(index % CHUNK) * LABELS + column] = value
  }

  private number(index: number, column: number): number {
    return (this.numberChunks[Math.floor(index / CHUNK)] as Float64Array)[
      (index % CHUNK) * NUMBERS + column
    ] as number
  }

  private label(index: number, column: number): number {
    return (this.labelChunks[Math.floor(index / CHUNK)] as Int32Array)[
      (index % CHUNK) * LABELS + column
    ] as number
  }

  /** The provider models met, by index, in order of first appearance. */
  modelList(): ReadonlyArray<{ provider: ProviderId; model: string }> {
    return this.models
  }

  modelOf(index: number): number {
    return this.label(index, MODEL)
  }

  /** The model name of the request at `index`. */
  modelName(index: number): string {
    return (this.models[this.modelOf(index)] as { model: string }).model
  }

  sessionOf(index: number): number {
    return this.label(index, SESSION)
  }

  sessionName(session: number): string {
    return this.sessionNames.list[session] as string
  }

  /** The session's previous request (same format and session, any model); undefined for its first. */
  previous(index: number): number | undefined {
    const previous = this.label(index, PREVIOUS)
    return previous < 0 ? undefined : previous
  }

  /** Whether the request is a branch of another session (a sidechain, a subagent). */
  hasParent(index: number): boolean {
    return (this.label(index, FLAGS) & HAS_PARENT) !== 0
  }

  /** The request's `file:line`. */
  source(index: number): string {
    const file = this.label(index, SOURCE_FILE)
    if (file < 0) return this.otherSources.get(index) as string
    return `${this.sourceFiles.list[file]}:${this.number(index, SOURCE_LINE)}`
  }

  /** Seconds from the request at `from` to the one at `to`; undefined when a time is missing. */
  seconds(from: number, to: number): number | undefined {
    const gap = (this.number(to, TIME) - this.number(from, TIME)) / 1000
    return Number.isFinite(gap) ? gap : undefined
  }

  input(index: number): number {
    return this.number(index, INPUT)
  }

  output(index: number): number {
    return this.number(index, OUTPUT)
  }

  read(index: number): number {
    return this.number(index, READ)
  }

  write(index: number): number {
    return this.number(index, WRITE)
  }

  write5m(index: number): number {
    return this.number(index, WRITE_5M)
  }

  write1h(index: number): number {
    return this.number(index, WRITE_1H)
  }

  turn(index: number): number | undefined {
    return defined(this.number(index, TURN))
  }

  step(index: number): number | undefined {
    return defined(this.number(index, STEP))
  }

  /** The read the simulator predicted when the request was sent, where the record holds one. */
  prediction(index: number): number | undefined {
    return defined(this.number(index, PREDICTION))
  }

  /** The replay's read and unit positions; undefined when the request was not replayed (or was refused). */
  replay(index: number): ReplayView | undefined {
    const read = this.number(index, REPLAY_READ)
    if (Number.isNaN(read)) return undefined
    return {
      read,
      inputEnd: defined(this.number(index, INPUT_END)),
      carry: defined(this.number(index, CARRY)),
    }
  }

  /** A token-fit point: recorded input, the replay's simulated input, the body's message count. */
  fitPoint(index: number): { recorded: number; simulated: number; messages: number } | undefined {
    const simulated = this.number(index, REPLAY_INPUT)
    const messages = this.number(index, MESSAGES)
    if (Number.isNaN(simulated) || Number.isNaN(messages)) return undefined
    return { recorded: this.input(index), simulated, messages }
  }
}
