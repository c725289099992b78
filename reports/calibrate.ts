// Calibration: how well the simulators' rules agree with usage a provider really recorded. Per provider and
// model, every request after a session's first is predicted from its predecessor — by the simulator where
// the transcript holds the request (DSH), by the simulator's rule over the recorded usage elsewhere — and
// tallied exact / within one granularity unit / off, with the parameters that best explain the reads and
// the steps nothing explains, for a human. Pure: the command reads the files and replays them.

import type { ProviderId } from '../harness/types.ts'
import { vendorOf } from '../providers/catalog.ts'
import type { CalibrationRequests, ReplayView } from './calibrate-requests.ts'

/** How a step's predicted read was made. */
export type PredictionBasis =
  /** The DeepSeek simulator replayed the rebuilt request and chose the unit; the recorded usage placed it. */
  | 'simulator'
  /** The simulator's rule applied to the predecessor's recorded usage (the transcript holds no request). */
  | 'usage-rule'
  /**
   * The simulator's own prediction, made when the request was sent and recorded beside the provider's
   * usage (a keyed run's `predicted_cache_read_tokens`, a live capture's predicted counts).
   */
  | 'recorded-prediction'
  /** Nothing to predict with (first request of a session, a provider without a rule). */
  | 'none'

/** How a prediction compares with the recorded read. */
export type Agreement = 'exact' | 'within-unit' | 'off' | 'unmeasured'

/** Which of its predecessor's cache units a DeepSeek request reads, as the replayed simulator decides. */
export type UnitPlacement = 'output-end' | 'input-end' | 'none' | 'other'

/** One request after its session's first, predicted beside recorded. */
export interface CalibrationStep {
  provider: ProviderId
  model: string
  session: string
  /** `file:line` of the request. */
  source: string
  turn?: number
  step?: number
  /** Seconds since the session's previous request; undefined when a time is missing. */
  gapSeconds?: number
  recordedInput: number
  recordedRead: number
  recordedWrite: number
  /** The read the rule predicts; undefined when nothing predicts it. */
  predictedRead?: number
  basis: PredictionBasis
  /** The unit the simulator read (DeepSeek replays only). */
  placement?: UnitPlacement
  agreement: Agreement
  /** Why the step disagrees, or what would settle it; empty when it agrees. */
  note: string
}

/** One session's recorded totals. */
export interface SessionCalibration {
  session: string
  requests: number
  /** Recorded read over recorded input (token-weighted). */
  hitRatio: number
  /** Requests after the first reading below the previous request's input rounded down to the grid. */
  belowPreviousPrefix: number
}

/** The least-squares fit of recorded input tokens to the rebuilt requests' simulated input. */
export interface TokenFit {
  /** Recorded tokens per simulated (o200k_base × catalog scale) token. */
  tokenScale: number
  /** Recorded tokens the rebuilt requests lack at a fixed place (a placeholder system prompt and tools). */
  headTokens: number
  /** Recorded tokens per message beyond the simulated framing; undefined when not identifiable. */
  framingPerMessage?: number
  /** Requests fitted. */
  points: number
}

/** What the recorded usage shows about one provider model. */
/** How many pairs read exactly the previous read + write, and how many more or less. */
export interface PairCounts {
  total: number
  exact: number
  more: number
  less: number
}

/** Pair counts summed (several models of one provider). */
export function addPairs(counts: readonly PairCounts[]): PairCounts {
  return counts.reduce(
    (sum, entry) => ({
      total: sum.total + entry.total,
      exact: sum.exact + entry.exact,
      more: sum.more + entry.more,
      less: sum.less + entry.less,
    }),
    { total: 0, exact: 0, more: 0, less: 0 },
  )
}

export interface ModelCalibration {
  provider: ProviderId
  model: string
  requests: number
  sessions: SessionCalibration[]
  /** Recorded reads above zero, and how many are multiples of 128. */
  nonZeroReads: number
  readsOn128: number
  /** The largest power-of-two grid (16–1,024) every non-zero read sits on; 1 when none does. */
  granularity: number
  /** The grid a simulator-based prediction rounds to (the catalog's, or the best-fitting candidate). */
  predictionGrid: number
  /** Exact simulator-based predictions for each candidate grid (DeepSeek replays). */
  gridCandidates: Array<{ grid: number; exact: number }>
  /** How many reads the simulator placed at each of the predecessor's units (DeepSeek replays). */
  placements: Partial<Record<UnitPlacement, number>>
  /** Anthropic's rule over pairs within five minutes on the same model: read = previous read + write. */
  pairs?: PairCounts
  /**
   * The same rule over the main sessions only (no sidechain or subagent: a branch of a conversation
   * shares its parent's prefix, so its pairs test another thing).
   */
  mainPairs?: PairCounts
  /** Pairs more than 5 minutes (and 1 hour) apart on the same model, and how many of them still read. */
  ttl: { after5m: number; readAfter5m: number; after1h: number; readAfter1h: number }
  /** Write tokens by lifetime, where the provider splits them. */
  writes: { fiveMinute: number; oneHour: number }
  tokenFit?: TokenFit
  tally: Record<Agreement, number>
  /** Every step in request order, made from the packed requests each time it is walked. */
  steps: Iterable<CalibrationStep> & { readonly length: number }
}

/** One granularity unit per vendor: what "within one unit" means for its reads. */
function unitOf(provider: ProviderId, grid: number): number {
  return vendorOf(provider) === 'anthropic' || vendorOf(provider) === 'bedrock' ? 0 : Math.max(grid, 1)
}

/** `tokens` rounded down to the grid (0: unchanged). */
export function floorTo(tokens: number, grid: number): number {
  return grid > 0 ? Math.floor(tokens / grid) * grid : tokens
}

const GRIDS = [1024, 512, 256, 128, 64, 32, 16] as const
/** Candidate read grids a DeepSeek replay is scored on (0: the exact unit position, the documented mode). */
export const GRID_CANDIDATES = [0, 64, 128, 256] as const

/** The largest grid every value sits on (1 when none of them does, or there are none). */
export function commonGrid(values: readonly number[]): number {
  if (values.length === 0) return 1
  return GRIDS.find((grid) => values.every((value) => value % grid === 0)) ?? 1
}

/** Which of the predecessor's units the simulator (documented mode: exact positions) read. */
export function placementOf(current: ReplayView, previous: ReplayView): UnitPlacement {
  if (current.read === 0) return 'none'
  if (current.read === previous.carry) return 'output-end'
  if (current.read === previous.inputEnd) return 'input-end'
  return 'other'
}

/** The recorded position of a placed unit: the predecessor's prompt, or its prompt and answer. */
function placedPosition(
  placement: UnitPlacement,
  requests: CalibrationRequests,
  previous: number,
): number | undefined {
  switch (placement) {
    case 'none':
      return 0
    case 'input-end':
      return requests.input(previous)
    case 'output-end':
      return requests.input(previous) + requests.output(previous)
    case 'other':
      return undefined
    default: {
      const unreachable: never = placement
      return unreachable
    }
  }
}

/** The prediction of one step by the simulator's rule over the predecessor's recorded usage. */
function usageRule(
  provider: ProviderId,
  requests: CalibrationRequests,
  previous: number,
  gap: number | undefined,
  grid: number,
): number | undefined {
  const vendor = vendorOf(provider)
  switch (vendor) {
    case 'anthropic':
    case 'bedrock': {
      // A breakpoint at the end of each request: the next reads what the previous read and wrote, while live.
      const ttl = requests.write1h(previous) > 0 ? 3600 : 300
      if (gap !== undefined && gap >= ttl) return 0
      return requests.read(previous) + requests.write(previous)
    }
    case 'openai':
      // The previous prompt is cached in 128-token steps from 1,024; idle eviction after 5–10 minutes.
      if (gap !== undefined && gap >= 600) return 0
      return requests.input(previous) >= 1024 ? floorTo(requests.input(previous), 128) : 0
    case 'deepseek':
      return floorTo(requests.input(previous) + requests.output(previous), grid)
    default:
      return undefined
  }
}

/**
 * The prefix a request leaves cached for the next: what it read and wrote (Anthropic's breakpoints), else
 * its input on the read grid.
 */
function previousPrefix(
  provider: ProviderId,
  requests: CalibrationRequests,
  previous: number,
  grid: number,
): number {
  const vendor = vendorOf(provider)
  if (vendor === 'anthropic' || vendor === 'bedrock')
    return requests.read(previous) + requests.write(previous)
  return floorTo(requests.input(previous), Math.max(grid, 1))
}

/** Why a step disagrees with its prediction, in words a human can act on. */
function noteFor(
  provider: ProviderId,
  step: Omit<CalibrationStep, 'note' | 'agreement'>,
  agreement: Agreement,
): string {
  if (agreement === 'exact' || step.predictedRead === undefined) return ''
  const difference = step.recordedRead - step.predictedRead
  const amount = Math.abs(difference).toLocaleString('en-US')
  if (step.placement === 'other')
    return 'the simulator read a unit that is not one of the previous request’s ends (a common prefix or an earlier request); the recorded usage cannot place it'
  switch (vendorOf(provider)) {
    case 'anthropic':
    case 'bedrock':
      if (difference > 0)
        return `read ${amount} more than the previous read + write: a request the transcript does not hold wrote them (open: a side request sharing the prefix; settle with a capture of the session's traffic)`
      if (step.recordedRead === 0) return 'read nothing: the prefix was rewritten from its start, or expired'
      return `read ${amount} fewer: the prefix changed inside what the previous request cached, or its breakpoint moved`
    case 'openai':
      if (difference > 0)
        return `read ${amount} past the previous prompt: a parallel or earlier request cached more`
      return `read ${amount} below the previous prompt: routed to another machine, evicted, or the prefix changed`
    case 'deepseek':
      return difference < 0
        ? `read ${amount} below the prediction: the unit the simulator chose was not (yet) readable, or the rebuilt request differs from the sent one`
        : `read ${amount} past the prediction: a unit the simulator does not persist (an interval unit?)`
    default:
      return ''
  }
}

function agreementOf(recorded: number, predicted: number | undefined, unit: number): Agreement {
  if (predicted === undefined) return 'unmeasured'
  const difference = Math.abs(recorded - predicted)
  if (difference === 0) return 'exact'
  return difference <= unit ? 'within-unit' : 'off'
}

/** Solve a small linear system (Gaussian elimination); undefined when singular. */
function solve(matrix: number[][], vector: number[]): number[] | undefined {
  const size = vector.length
  const rows = matrix.map((row, index) => [...row, vector[index] as number])
  for (let column = 0; column < size; column += 1) {
    let pivot = column
    for (let row = column + 1; row < size; row += 1)
      if (Math.abs(rows[row]?.[column] ?? 0) > Math.abs(rows[pivot]?.[column] ?? 0)) pivot = row
    const top = rows[pivot] as number[]
    if (Math.abs(top[column] as number) < 1e-9) return undefined
    ;[rows[column], rows[pivot]] = [top, rows[column] as number[]]
    for (let row = 0; row < size; row += 1) {
      if (row === column) continue
      const current = rows[row] as number[]
      const factor = (current[column] as number) / (top[column] as number)
      for (let index = column; index <= size; index += 1)
        current[index] = (current[index] as number) - factor * (top[index] as number)
    }
  }
  return rows.map((row, index) => (row[size] as number) / (row[index] as number))
}

/** Least squares of `target` on the feature columns (normal equations). */
function leastSquares(features: number[][], target: number[]): number[] | undefined {
  const width = features[0]?.length ?? 0
  const matrix = Array.from({ length: width }, (_, row) =>
    Array.from({ length: width }, (_, column) =>
      features.reduce((sum, point) => sum + (point[row] as number) * (point[column] as number), 0),
    ),
  )
  const vector = Array.from({ length: width }, (_, row) =>
    features.reduce((sum, point, index) => sum + (point[row] as number) * (target[index] as number), 0),
  )
  return solve(matrix, vector)
}

/**
 * Recorded input as a head, a scale of the simulated input and a per-message framing. The framing is
 * reported only when it is identifiable (the three-way fit solvable and its scale positive).
 */
export function fitTokens(
  points: ReadonlyArray<{ recorded: number; simulated: number; messages: number }>,
): TokenFit | undefined {
  if (points.length < 2) return undefined
  const target = points.map((point) => point.recorded)
  const round = (value: number, places: number) => Number(value.toFixed(places))
  if (points.length >= 4) {
    const three = leastSquares(
      points.map((point) => [1, point.simulated, point.messages]),
      target,
    )
    if (three !== undefined && (three[1] as number) > 0)
      return {
        headTokens: Math.round(three[0] as number),
        tokenScale: round(three[1] as number, 3),
        framingPerMessage: round(three[2] as number, 1),
        points: points.length,
      }
  }
  const two = leastSquares(
    points.map((point) => [1, point.simulated]),
    target,
  )
  if (two === undefined) return undefined
  return {
    headTokens: Math.round(two[0] as number),
    tokenScale: round(two[1] as number, 3),
    points: points.length,
  }
}

/** The calibration inputs: the requests compared, and the read grid the catalog gives each model. */
export interface CalibrationInput {
  /** Every request, its replay where the transcript held its body, its prediction where recorded. */
  requests: CalibrationRequests
  /** The read grid the catalog gives a model (DeepSeek V4: 128); the best candidate when absent. */
  catalogGrid: (provider: ProviderId, model: string) => number | undefined
}

/** Calibrate every provider model the requests cover, in order of first appearance. */
export function calibrate(input: CalibrationInput): ModelCalibration[] {
  const { requests } = input
  const groups = requests.modelList().map((): number[] => [])
  for (let index = 0; index < requests.count; index += 1) groups[requests.modelOf(index)]?.push(index)
  return groups.map((indexes, model) =>
    calibrateModel(input, requests.modelList()[model] as { provider: ProviderId; model: string }, indexes),
  )
}

/** A request after its session's first, and the seconds since its predecessor. */
interface Pair {
  previous: number
  current: number
  gap: number | undefined
}

/** The steps of one model, made again from the packed requests each time they are walked. */
class ModelSteps implements Iterable<CalibrationStep> {
  constructor(
    readonly length: number,
    private readonly make: () => Iterator<CalibrationStep>,
  ) {}

  [Symbol.iterator](): Iterator<CalibrationStep> {
    return this.make()
  }
}

function calibrateModel(
  input: CalibrationInput,
  { provider, model }: { provider: ProviderId; model: string },
  indexes: readonly number[],
): ModelCalibration {
  const { requests } = input
  const reads: number[] = []
  for (const index of indexes) if (requests.read(index) > 0) reads.push(requests.read(index))
  const granularity = commonGrid(reads)
  // A pair is a request and its session's previous request on any model (a switch reads nothing cached).
  // Kept as the current request's index; the pair itself is made as it is walked.
  const paired: number[] = []
  for (const current of indexes) if (requests.previous(current) !== undefined) paired.push(current)
  const pairs = {
    length: paired.length,
    *[Symbol.iterator](): Iterator<Pair> {
      for (const current of paired) {
        const previous = requests.previous(current) as number
        yield { previous, current, gap: requests.seconds(previous, current) }
      }
    },
  }
  const sameModel = (pair: Pair) => requests.modelOf(pair.previous) === requests.modelOf(pair.current)

  // DeepSeek replays: the simulator places each read on a unit; the recorded usage gives its position.
  const placedAt = (pair: Pair) => {
    const now = requests.replay(pair.current)
    const before = requests.replay(pair.previous)
    if (now === undefined || before === undefined) return undefined
    const placement = placementOf(now, before)
    return { placement, position: placedPosition(placement, requests, pair.previous) }
  }
  const gridCandidates = GRID_CANDIDATES.map((grid) => ({ grid, exact: 0 }))
  let anyPlaced = false
  for (const pair of pairs) {
    const found = placedAt(pair)
    if (found === undefined) continue
    anyPlaced = true
    for (const candidate of gridCandidates)
      if (
        found.position !== undefined &&
        floorTo(found.position, candidate.grid) === requests.read(pair.current)
      )
        candidate.exact += 1
  }
  const best = gridCandidates.reduce((left, right) => (right.exact > left.exact ? right : left))
  const predictionGrid = input.catalogGrid(provider, model) ?? (granularity > 1 ? granularity : best.grid)
  const unit = unitOf(provider, predictionGrid)

  const stepOf = (pair: Pair, found: ReturnType<typeof placedAt>): CalibrationStep => {
    const { previous, current, gap } = pair
    const switched = !sameModel(pair)
    let predictedRead: number | undefined
    let basis: PredictionBasis = 'none'
    const recordedPrediction = requests.prediction(current)
    if (recordedPrediction !== undefined) {
      basis = 'recorded-prediction'
      predictedRead = recordedPrediction
    } else if (found !== undefined) {
      basis = 'simulator'
      predictedRead = found.position === undefined ? undefined : floorTo(found.position, predictionGrid)
    } else {
      // A cached prefix belongs to one model: a switch reads nothing.
      predictedRead = switched ? 0 : usageRule(provider, requests, previous, gap, predictionGrid)
      if (predictedRead !== undefined) basis = 'usage-rule'
    }
    const recordedRead = requests.read(current)
    const agreement = found?.placement === 'other' ? 'off' : agreementOf(recordedRead, predictedRead, unit)
    // One object per step, its optional fields set in place.
    const step: CalibrationStep = {
      provider,
      model,
      session: requests.sessionName(requests.sessionOf(current)),
      source: requests.source(current),
      recordedInput: requests.input(current),
      recordedRead,
      recordedWrite: requests.write(current),
      basis,
      agreement,
      note: '',
    }
    const turn = requests.turn(current)
    const stepNumber = requests.step(current)
    if (turn !== undefined) step.turn = turn
    if (stepNumber !== undefined) step.step = stepNumber
    if (gap !== undefined) step.gapSeconds = gap
    if (predictedRead !== undefined) step.predictedRead = predictedRead
    if (found !== undefined) step.placement = found.placement
    step.note = noteFor(provider, step, agreement)
    return step
  }
  // The first pass tallies; the steps themselves are made again as they are walked (written, listed).
  const tally: Record<Agreement, number> = { exact: 0, 'within-unit': 0, off: 0, unmeasured: 0 }
  const placements: ModelCalibration['placements'] = {}
  for (const pair of pairs) {
    const found = placedAt(pair)
    if (found !== undefined) placements[found.placement] = (placements[found.placement] ?? 0) + 1
    tally[stepOf(pair, found).agreement] += 1
  }
  const steps = new ModelSteps(pairs.length, function* () {
    for (const pair of pairs) yield stepOf(pair, placedAt(pair))
  })

  const isAnthropic = vendorOf(provider) === 'anthropic' || vendorOf(provider) === 'bedrock'
  const newPairs = (): PairCounts => ({ total: 0, exact: 0, more: 0, less: 0 })
  const pairRule = newPairs()
  const mainPairRule = newPairs()
  const count = (counts: PairCounts, { previous, current }: Pair) => {
    const read = requests.read(current)
    const expected = requests.read(previous) + requests.write(previous)
    counts.total += 1
    if (read === expected) counts.exact += 1
    else if (read > expected) counts.more += 1
    else counts.less += 1
  }
  const ttl = { after5m: 0, readAfter5m: 0, after1h: 0, readAfter1h: 0 }
  for (const pair of pairs) {
    const { gap } = pair
    if (gap === undefined || !sameModel(pair)) continue
    if (isAnthropic && gap >= 0 && gap < 300) {
      count(pairRule, pair)
      if (!requests.hasParent(pair.current)) count(mainPairRule, pair)
    }
    const read = requests.read(pair.current) > 0 ? 1 : 0
    if (gap >= 300) {
      ttl.after5m += 1
      ttl.readAfter5m += read
    }
    if (gap >= 3600) {
      ttl.after1h += 1
      ttl.readAfter1h += read
    }
  }

  // Per session, in order of first appearance: its members' sums, fit points and reads below the prefix.
  type FitPoint = { recorded: number; simulated: number; messages: number }
  const sessions = new Map<
    number,
    { requests: number; read: number; total: number; below: number; fit: FitPoint[] }
  >()
  for (const index of indexes) {
    const session = requests.sessionOf(index)
    let entry = sessions.get(session)
    if (entry === undefined) {
      entry = { requests: 0, read: 0, total: 0, below: 0, fit: [] }
      sessions.set(session, entry)
    }
    entry.requests += 1
    entry.read += requests.read(index)
    entry.total += requests.input(index)
    const point = requests.fitPoint(index)
    if (point !== undefined) entry.fit.push(point)
  }
  for (const { previous, current } of pairs) {
    if (requests.read(current) < previousPrefix(provider, requests, previous, granularity))
      (sessions.get(requests.sessionOf(current)) as { below: number }).below += 1
  }

  // Fitted per session (each rebuilt session lacks its own head); the session with the most requests speaks.
  let tokenFit: TokenFit | undefined
  for (const entry of sessions.values()) {
    const fit = fitTokens(entry.fit)
    if (fit !== undefined && (tokenFit === undefined || fit.points > tokenFit.points)) tokenFit = fit
  }
  let fiveMinute = 0
  let oneHour = 0
  for (const index of indexes) {
    fiveMinute += requests.write5m(index)
    oneHour += requests.write1h(index)
  }

  return {
    provider,
    model,
    requests: indexes.length,
    sessions: [...sessions].map(([session, entry]) => ({
      session: requests.sessionName(session),
      requests: entry.requests,
      hitRatio: entry.total > 0 ? entry.read / entry.total : 0,
      belowPreviousPrefix: entry.below,
    })),
    nonZeroReads: reads.length,
    readsOn128: reads.filter((read) => read % 128 === 0).length,
    granularity,
    predictionGrid,
    gridCandidates: anyPlaced ? gridCandidates : [],
    placements,
    ...(isAnthropic ? { pairs: pairRule, mainPairs: mainPairRule } : {}),
    ttl,
    writes: { fiveMinute, oneHour },
    ...(tokenFit !== undefined ? { tokenFit } : {}),
    tally,
    steps,
  }
}
