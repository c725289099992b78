// Calibration: how well the simulators' rules agree with usage a provider really recorded. Per provider and
// model, every request after a session's first is predicted from its predecessor — by the simulator where
// the transcript holds the request (DSH), by the simulator's rule over the recorded usage elsewhere — and
// tallied exact / within one granularity unit / off, with the parameters that best explain the reads and
// the steps nothing explains, for a human. Pure: the command reads the files and replays them.

import type { ProviderId, Usage } from '../harness/types.ts'
import { vendorOf } from '../providers/catalog.ts'
import type { ReplayedRequest } from '../providers/transcripts/replay.ts'
import type { ObservedRequest } from '../providers/transcripts/types.ts'

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
  steps: CalibrationStep[]
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

/** What a prediction needs from the replay of a DeepSeek request and its predecessor. */
interface ReplayView {
  read: number
  inputEnd: number | undefined
  carry: number | undefined
}

function replayView(replayed: ReplayedRequest | undefined): ReplayView | undefined {
  if (replayed?.predicted === undefined) return undefined
  return { read: replayed.predicted.read, inputEnd: replayed.inputEnd, carry: replayed.carry }
}

/** Which of the predecessor's units the simulator (documented mode: exact positions) read. */
export function placementOf(current: ReplayView, previous: ReplayView): UnitPlacement {
  if (current.read === 0) return 'none'
  if (current.read === previous.carry) return 'output-end'
  if (current.read === previous.inputEnd) return 'input-end'
  return 'other'
}

/** The recorded position of a placed unit: the predecessor's prompt, or its prompt and answer. */
function placedPosition(placement: UnitPlacement, previous: ObservedRequest): number | undefined {
  switch (placement) {
    case 'none':
      return 0
    case 'input-end':
      return previous.usage.input
    case 'output-end':
      return previous.usage.input + previous.usage.output
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
  previous: ObservedRequest,
  gap: number | undefined,
  grid: number,
): number | undefined {
  const vendor = vendorOf(provider)
  switch (vendor) {
    case 'anthropic':
    case 'bedrock': {
      // A breakpoint at the end of each request: the next reads what the previous read and wrote, while live.
      const ttl = (previous.usage.cacheWrite1h ?? 0) > 0 ? 3600 : 300
      if (gap !== undefined && gap >= ttl) return 0
      return (previous.usage.cacheRead ?? 0) + (previous.usage.cacheWrite ?? 0)
    }
    case 'openai':
      // The previous prompt is cached in 128-token steps from 1,024; idle eviction after 5–10 minutes.
      if (gap !== undefined && gap >= 600) return 0
      return previous.usage.input >= 1024 ? floorTo(previous.usage.input, 128) : 0
    case 'deepseek':
      return floorTo(previous.usage.input + previous.usage.output, grid)
    default:
      return undefined
  }
}

/**
 * The prefix a request leaves cached for the next: what it read and wrote (Anthropic's breakpoints), else
 * its input on the read grid.
 */
function previousPrefix(provider: ProviderId, previous: Usage, grid: number): number {
  const vendor = vendorOf(provider)
  if (vendor === 'anthropic' || vendor === 'bedrock')
    return (previous.cacheRead ?? 0) + (previous.cacheWrite ?? 0)
  return floorTo(previous.input, Math.max(grid, 1))
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

/** The calibration inputs: every imported request, and its replay where the transcript held its body. */
export interface CalibrationInput {
  requests: readonly ObservedRequest[]
  /** `replayed[i]` is `requests[i]` replayed with exact unit positions (the documented mode). */
  replayed: readonly (ReplayedRequest | undefined)[]
  /** The read grid the catalog gives a model (DeepSeek V4: 128); the best candidate when absent. */
  catalogGrid: (provider: ProviderId, model: string) => number | undefined
  /**
   * `predictions[i]`: the read the simulator predicted for `requests[i]` when it was sent, where the
   * record holds one (keyed runs, live captures); it is the step's prediction, as made then.
   */
  predictions?: readonly (number | undefined)[]
}

/** Calibrate every provider model the requests cover, in order of first appearance. */
export function calibrate(input: CalibrationInput): ModelCalibration[] {
  const groups = new Map<string, number[]>()
  for (const [index, request] of input.requests.entries()) {
    const key = `${request.provider}\u0000${request.model}`
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [index])
    else group.push(index)
  }
  const latest = new Map<string, number>()
  const previousInSession = input.requests.map((request, index) => {
    const key = `${request.format}\u0000${request.session}`
    const previous = latest.get(key)
    latest.set(key, index)
    return previous
  })
  return [...groups.values()].map((indexes) => calibrateModel(input, indexes, previousInSession))
}

function seconds(from: ObservedRequest, to: ObservedRequest): number | undefined {
  const gap = (Date.parse(to.time) - Date.parse(from.time)) / 1000
  return Number.isFinite(gap) ? gap : undefined
}

function calibrateModel(
  input: CalibrationInput,
  indexes: readonly number[],
  previousInSession: readonly (number | undefined)[],
): ModelCalibration {
  const first = input.requests[indexes[0] as number] as ObservedRequest
  const { provider, model } = first
  const requests = indexes.map((index) => input.requests[index] as ObservedRequest)
  const reads = requests.map((request) => request.usage.cacheRead ?? 0).filter((read) => read > 0)
  const granularity = commonGrid(reads)
  // A pair is a request and its session's previous request on any model (a switch reads nothing cached).
  const sessions = new Map<string, number[]>()
  for (const index of indexes) {
    const session = (input.requests[index] as ObservedRequest).session
    const indexes = sessions.get(session)
    if (indexes === undefined) sessions.set(session, [index])
    else indexes.push(index)
  }
  const pairs = indexes.flatMap((current) => {
    const previous = previousInSession[current]
    if (previous === undefined) return []
    const gap = seconds(
      input.requests[previous] as ObservedRequest,
      input.requests[current] as ObservedRequest,
    )
    return [{ previous, current, gap }]
  })
  const sameModel = (previous: number, current: number) =>
    (input.requests[previous] as ObservedRequest).model === (input.requests[current] as ObservedRequest).model

  // DeepSeek replays: the simulator places each read on a unit; the recorded usage gives its position.
  const placed = pairs.map(({ previous, current }) => {
    const now = replayView(input.replayed[current])
    const before = replayView(input.replayed[previous])
    if (now === undefined || before === undefined) return undefined
    const placement = placementOf(now, before)
    return { placement, position: placedPosition(placement, input.requests[previous] as ObservedRequest) }
  })
  const gridCandidates = GRID_CANDIDATES.map((grid) => ({
    grid,
    exact: pairs.filter(({ current }, index) => {
      const position = placed[index]?.position
      return (
        position !== undefined &&
        floorTo(position, grid) === ((input.requests[current] as ObservedRequest).usage.cacheRead ?? 0)
      )
    }).length,
  }))
  const best = gridCandidates.reduce((left, right) => (right.exact > left.exact ? right : left))
  const predictionGrid = input.catalogGrid(provider, model) ?? (granularity > 1 ? granularity : best.grid)
  const unit = unitOf(provider, predictionGrid)

  const tally: Record<Agreement, number> = { exact: 0, 'within-unit': 0, off: 0, unmeasured: 0 }
  const placements: ModelCalibration['placements'] = {}
  const steps = pairs.map(({ previous, current, gap }, index): CalibrationStep => {
    const before = input.requests[previous] as ObservedRequest
    const request = input.requests[current] as ObservedRequest
    const found = placed[index]
    if (found !== undefined) placements[found.placement] = (placements[found.placement] ?? 0) + 1
    const switched = before.model !== request.model
    let predictedRead: number | undefined
    let basis: PredictionBasis = 'none'
    const recordedPrediction = input.predictions?.[current]
    if (recordedPrediction !== undefined) {
      basis = 'recorded-prediction'
      predictedRead = recordedPrediction
    } else if (found !== undefined) {
      basis = 'simulator'
      predictedRead = found.position === undefined ? undefined : floorTo(found.position, predictionGrid)
    } else {
      // A cached prefix belongs to one model: a switch reads nothing.
      predictedRead = switched ? 0 : usageRule(provider, before, gap, predictionGrid)
      if (predictedRead !== undefined) basis = 'usage-rule'
    }
    const recordedRead = request.usage.cacheRead ?? 0
    const agreement = found?.placement === 'other' ? 'off' : agreementOf(recordedRead, predictedRead, unit)
    tally[agreement] += 1
    // One object per step, its optional fields set in place (a long session has as many steps as requests).
    const step: CalibrationStep = {
      provider,
      model,
      session: request.session,
      source: request.source,
      recordedInput: request.usage.input,
      recordedRead,
      recordedWrite: request.usage.cacheWrite ?? 0,
      basis,
      agreement,
      note: '',
    }
    if (request.turn !== undefined) step.turn = request.turn
    if (request.step !== undefined) step.step = request.step
    if (gap !== undefined) step.gapSeconds = gap
    if (predictedRead !== undefined) step.predictedRead = predictedRead
    if (found !== undefined) step.placement = found.placement
    step.note = noteFor(provider, step, agreement)
    return step
  })

  const isAnthropic = vendorOf(provider) === 'anthropic' || vendorOf(provider) === 'bedrock'
  const within5m = pairs.filter(
    ({ previous, current, gap }) =>
      gap !== undefined && gap >= 0 && gap < 300 && sameModel(previous, current),
  )
  const countPairs = (chosen: typeof within5m): PairCounts =>
    chosen.reduce(
      (counts, { previous, current }) => {
        const before = (input.requests[previous] as ObservedRequest).usage
        const read = (input.requests[current] as ObservedRequest).usage.cacheRead ?? 0
        const expected = (before.cacheRead ?? 0) + (before.cacheWrite ?? 0)
        counts.total += 1
        if (read === expected) counts.exact += 1
        else if (read > expected) counts.more += 1
        else counts.less += 1
        return counts
      },
      { total: 0, exact: 0, more: 0, less: 0 },
    )
  const pairRule = isAnthropic ? countPairs(within5m) : undefined
  const mainPairRule = isAnthropic
    ? countPairs(
        within5m.filter(({ current }) => (input.requests[current] as ObservedRequest).parent === undefined),
      )
    : undefined
  const readAfter = (limit: number) => {
    const late = pairs.filter(
      ({ previous, current, gap }) => gap !== undefined && gap >= limit && sameModel(previous, current),
    )
    return {
      pairs: late.length,
      read: late.filter(
        ({ current }) => ((input.requests[current] as ObservedRequest).usage.cacheRead ?? 0) > 0,
      ).length,
    }
  }
  const after5m = readAfter(300)
  const after1h = readAfter(3600)

  // Fitted per session (each rebuilt session lacks its own head); the session with the most requests speaks.
  const fits = [...sessions.values()].map((members) =>
    fitTokens(
      members.flatMap((index) => {
        const replayed = input.replayed[index]
        const body = (input.requests[index] as ObservedRequest).request?.body
        if (replayed?.predicted === undefined || body === undefined) return []
        return [
          {
            recorded: (input.requests[index] as ObservedRequest).usage.input,
            simulated: replayed.predicted.input,
            messages: Array.isArray(body.messages) ? body.messages.length : 0,
          },
        ]
      }),
    ),
  )
  const tokenFit = fits.reduce<TokenFit | undefined>(
    (best, fit) => (fit !== undefined && (best === undefined || fit.points > best.points) ? fit : best),
    undefined,
  )

  return {
    provider,
    model,
    requests: requests.length,
    sessions: [...sessions].map(([session, members]) => {
      const usages = members.map((index) => (input.requests[index] as ObservedRequest).usage)
      const read = usages.reduce((sum, usage) => sum + (usage.cacheRead ?? 0), 0)
      const total = usages.reduce((sum, usage) => sum + usage.input, 0)
      const below = pairs.filter(
        ({ previous, current }) =>
          (input.requests[current] as ObservedRequest).session === session &&
          ((input.requests[current] as ObservedRequest).usage.cacheRead ?? 0) <
            previousPrefix(provider, (input.requests[previous] as ObservedRequest).usage, granularity),
      ).length
      return {
        session,
        requests: members.length,
        hitRatio: total > 0 ? read / total : 0,
        belowPreviousPrefix: below,
      }
    }),
    nonZeroReads: reads.length,
    readsOn128: reads.filter((read) => read % 128 === 0).length,
    granularity,
    predictionGrid,
    gridCandidates: placed.some((entry) => entry !== undefined) ? gridCandidates : [],
    placements,
    ...(pairRule !== undefined ? { pairs: pairRule } : {}),
    ...(mainPairRule !== undefined ? { mainPairs: mainPairRule } : {}),
    ttl: {
      after5m: after5m.pairs,
      readAfter5m: after5m.read,
      after1h: after1h.pairs,
      readAfter1h: after1h.read,
    },
    writes: {
      fiveMinute: requests.reduce((sum, request) => sum + (request.usage.cacheWrite5m ?? 0), 0),
      oneHour: requests.reduce((sum, request) => sum + (request.usage.cacheWrite1h ?? 0), 0),
    },
    ...(tokenFit !== undefined ? { tokenFit } : {}),
    tally,
    steps,
  }
}
