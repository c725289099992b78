// Imported requests replayed through the cache simulators: every request whose transcript held its body
// runs on one account's simulators, in time order, with its session's previous replayed request (for the
// counterfactual) and its recorded answer (for the output-end cache units) — predicted beside recorded.

import type { AssistantMessage, Usage } from '../../../harness/types.ts'
import { CacheSimulators } from '../../../providers/sim/index.ts'
import {
  type Counterfactual,
  type PreviousRequest,
  type SimCounts,
  type SimulatorOptions,
  SimulatorRejection,
} from '../../../providers/sim/types.ts'
import { bodyModel } from '../../../providers/types.ts'
import { requestChange, type SentRequest } from '../../break-change.ts'
import type { BreakChange } from '../../types.ts'
import type { ObservedRequest } from './types.ts'

/** One imported request beside what the simulator predicts for it. */
export interface ReplayedRequest {
  /** The request's `file:line`. */
  source: string
  session: string
  /** The usage the transcript recorded. */
  recorded: Usage
  /** The simulator's counts; undefined when the request carries no body or the simulator refused it. */
  predicted?: SimCounts
  /** What the request would have read extending its session's previous replayed request unchanged. */
  counterfactual?: Counterfactual
  /** The refusal the provider would answer the rebuilt body with (status and message). */
  rejected?: { status: number; message: string }
  /** Seconds from the earliest replayed request to this one, the simulators' clock. */
  at?: number
  /** The tokens a next request extending this one unchanged could read (its output-end unit, say). */
  carry?: number
  /** Where the prompt's cacheable part ends (its input-end unit), before the trailing generation prompt. */
  inputEnd?: number
  /** What changed against its session's previous replayed request, for a request asked about (`changesFor`). */
  change?: BreakChange
}

/** The answer a request without a recorded one is simulated with: no text, so no output-end unit. */
const NO_ANSWER: AssistantMessage = { role: 'assistant', content: [] }

/**
 * The simulators' clock for each request, in milliseconds: its recorded time, held back to no earlier
 * than its session's previous request (logs with clocks that stepped back keep their file order).
 */
function replayTimes(requests: readonly ObservedRequest[]): number[] {
  const latest = new Map<string, number>()
  return requests.map((request) => {
    const recorded = Date.parse(request.time)
    const floor = latest.get(request.session) ?? Number.NEGATIVE_INFINITY
    const time = Math.max(Number.isNaN(recorded) ? floor : recorded, floor)
    latest.set(request.session, time)
    return time
  })
}

/**
 * Replay `requests` (one import, any number of sessions) through one `CacheSimulators`: those carrying a
 * `request` body in time order, each with its session's previous replayed request. Returns one entry per
 * request, in the order given; those in `changesFor` (the ones whose rows name a break) with what changed
 * against that previous request.
 */
export function replayObserved(
  requests: readonly ObservedRequest[],
  options: SimulatorOptions = {},
  changesFor: ReadonlySet<ObservedRequest> = new Set(),
): ReplayedRequest[] {
  const simulators = new CacheSimulators(options)
  const times = replayTimes(requests)
  const replayable = requests.flatMap((request, index) => (request.request !== undefined ? [index] : []))
  const origin = Math.min(...replayable.map((index) => times[index] as number).filter(Number.isFinite))
  // Stable: requests at the same time keep their order.
  replayable.sort((left, right) => (times[left] as number) - (times[right] as number) || left - right)
  const results: ReplayedRequest[] = requests.map((request) => ({
    source: request.source,
    session: request.session,
    recorded: request.usage,
  }))
  const previous = new Map<string, PreviousRequest>()
  // The previous replayed request of each session as sent, while a later one may ask what changed.
  const sent = new Map<string, SentRequest>()
  for (const index of replayable) {
    const request = requests[index] as ObservedRequest
    const result = results[index] as ReplayedRequest
    const wire = request.request as NonNullable<ObservedRequest['request']>
    const time = times[index] as number
    const at = Number.isFinite(time) && Number.isFinite(origin) ? (time - origin) / 1000 : 0
    const before = previous.get(request.session)
    result.at = at
    try {
      const simulation = simulators.simulate(wire.api, {
        body: wire.body,
        at,
        output: request.answer?.message ?? NO_ANSWER,
        outputTokens: request.usage.output,
        ...(request.answer?.reasoning !== undefined ? { reasoning: request.answer.reasoning } : {}),
        ...(before !== undefined ? { previous: before } : {}),
      })
      result.predicted = simulation.counts
      result.carry = simulation.trace.carry.tokens
      result.inputEnd = simulation.prompt.total - simulation.prompt.trailing
      if (simulation.trace.counterfactual !== undefined)
        result.counterfactual = simulation.trace.counterfactual
      const current = { body: wire.body, prompt: simulation.prompt }
      const last = sent.get(request.session)
      if (last !== undefined && changesFor.has(request)) {
        const change = requestChange(last, current)
        if (change !== undefined) result.change = change
      }
      if (changesFor.size > 0) sent.set(request.session, current)
      const machine = simulation.trace.machine
      const model = bodyModel(wire.body)
      previous.set(request.session, {
        prompt: simulation.prompt,
        ...(machine !== undefined ? { machine } : {}),
        ...(model !== undefined ? { model } : {}),
      })
    } catch (error) {
      if (!(error instanceof SimulatorRejection)) throw error
      result.rejected = { status: error.status, message: error.message }
    }
  }
  return results
}

/** How predicted counts compare with recorded ones over a replay. */
export interface ReplayAgreement {
  /** Predicted equals recorded. */
  exact: number
  /** Off by at least one token and at most one cache unit. */
  withinUnit: number
  /** Off by more than one cache unit. */
  off: number
  /** No prediction (no body, or refused), or no read recorded to compare with. */
  unmeasured: number
}

/**
 * Tally a replay's predictions against the recorded usage, `unitTokens` being one cache unit (DeepSeek
 * reads in 128-token steps). `read` compares cache reads; `uncached` compares the input past the read
 * (written or uncached), which stays comparable when the rebuilt body misses a part of its head that both sides read
 * (a snapshot's placeholder system prompt).
 */
export function replayAgreement(
  replayed: readonly ReplayedRequest[],
  options: { unitTokens?: number; measure?: 'read' | 'uncached' } = {},
): ReplayAgreement {
  const unit = options.unitTokens ?? 128
  const tally: ReplayAgreement = { exact: 0, withinUnit: 0, off: 0, unmeasured: 0 }
  for (const { predicted, recorded } of replayed) {
    if (predicted === undefined || recorded.cacheRead === undefined) {
      tally.unmeasured += 1
      continue
    }
    const difference =
      options.measure === 'uncached'
        ? predicted.input - predicted.read - (recorded.input - recorded.cacheRead)
        : predicted.read - recorded.cacheRead
    if (difference === 0) tally.exact += 1
    else if (Math.abs(difference) <= unit) tally.withinUnit += 1
    else tally.off += 1
  }
  return tally
}

/**
 * The simulator's read and write for each request that carries its whole body (DSH logs), replayed in
 * time order with each session's previous request; requests without a body, or whose body lacks the tool
 * schemas sent (Codex rollouts: `withoutTools`, their read short of the provider's by the tools), and
 * those the simulator refuses are left out.
 */
export function predictObserved(
  requests: readonly ObservedRequest[],
  breaks: ReadonlySet<ObservedRequest> = new Set(),
): Map<ObservedRequest, Prediction> {
  const predicted = new Map<ObservedRequest, Prediction>()
  const whole = requests.filter(
    (request) => request.request !== undefined && request.request.withoutTools !== true,
  )
  if (whole.length === 0) return predicted
  for (const [index, replayed] of replayObserved(whole, {}, breaks).entries()) {
    const request = whole[index]
    if (request !== undefined && replayed.predicted !== undefined)
      predicted.set(request, {
        read: replayed.predicted.read,
        write: replayed.predicted.write,
        ...(replayed.change !== undefined ? { change: replayed.change } : {}),
      })
  }
  return predicted
}

/** The simulator's read and write of an imported request, and what changed at its break where asked. */
export interface Prediction {
  read: number
  write: number
  change?: BreakChange
}
