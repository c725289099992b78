// `cachelab import --policy consolidate|keep-live`: the DSH sessions whose log rebuilds their requests,
// re-derived under a series-start policy (reports/observed/transcripts/dsh-policy.ts). The recorded bodies and
// the re-derived ones are replayed through the simulator on accounts of their own; each side's usage
// becomes rows through the row core, per step and summed per session beside what the log recorded.

import type { SeriesStartPolicy } from '../harness/policies.ts'
import type { Usage } from '../harness/types.ts'
import { parseDeepSeekUsage } from '../providers/deepseek.ts'
import { wireUsage } from '../providers/mock/usage.ts'
import type { SimCounts } from '../providers/sim/types.ts'
import { replayObserved } from './observed/transcripts/replay.ts'
import type { ObservedRequest, RecordedSeriesStart } from './observed/transcripts/types.ts'
import { type ObservedRow, ObservedRowBuilder } from './observed-rows.ts'
import type { StepRow } from './types.ts'

export { SERIES_START_POLICIES } from '../harness/policies.ts'

/** One side of a step or session: its input buckets and cost, as the row core computes them. */
export interface PolicyTotals {
  input: number
  read: number
  write: number
  uncached: number
  costUsd: number
}

/** One re-derived request: what the log recorded, the replay of its recorded body, the replay re-derived. */
export interface PolicyStep {
  session: string
  /** `file:line` of the request. */
  source: string
  turn: number
  step: number
  /** The request starts a series on an in-history route. */
  seriesStart: boolean
  /** At a series start, which policy the recorded system commits follow. */
  recordedAs?: RecordedSeriesStart
  /** The first message index where the re-derived body differs from the recorded one. */
  firstDifference?: number
  recorded: PolicyTotals
  replayed: PolicyTotals
  rederived: PolicyTotals
}

/**
 * The policy a session's log was recorded under, from its series starts: one where the policies would
 * commit differently shows it; `indistinguishable` when no series start tells them apart, `unknown` when
 * the commits follow neither rule, `not-applicable` when no request was re-derived.
 */
export type RecordedPolicy = SeriesStartPolicy | 'mixed' | 'indistinguishable' | 'unknown' | 'not-applicable'

/** One session re-derived: summed over its re-derived requests, with what was left out and why. */
export interface PolicySession {
  format: string
  session: string
  recordedPolicy: RecordedPolicy
  /** Requests re-derived and replayed on both sides. */
  requests: number
  /** Requests left out, with `file:line` and why (no body, another route, the prompt in the header). */
  notApplicable: Array<{ source: string; reason: string }>
  /** Requests the simulator refused on either side (left out of every total). */
  rejected: number
  /** The first request whose re-derived body differs, and the first differing node. */
  firstDifference?: { source: string; turn: number; step: number; node: string }
  recorded: PolicyTotals
  replayed: PolicyTotals
  rederived: PolicyTotals
}

const emptyTotals = (): PolicyTotals => ({ input: 0, read: 0, write: 0, uncached: 0, costUsd: 0 })

const totalsOf = (row: StepRow): PolicyTotals => ({
  input: row.inputTokens,
  read: row.cacheReadTokens,
  write: row.cacheWriteTokens,
  uncached: row.uncachedTokens,
  costUsd: row.costUsd,
})

function addTo(sums: PolicyTotals, totals: PolicyTotals): void {
  sums.input += totals.input
  sums.read += totals.read
  sums.write += totals.write
  sums.uncached += totals.uncached
  sums.costUsd += totals.costUsd
}

/** Why a request is left out of the re-derivation, or undefined when it was re-derived. */
function notApplicable(request: ObservedRequest): string | undefined {
  if (request.format !== 'dsh') return `a ${request.format} transcript holds no DSH surface to re-derive`
  const rederived = request.rederived
  if (rederived === undefined) return 'read without a series-start policy'
  if (rederived.kind === 'not-applicable') return rederived.reason
  if (request.request === undefined) return 'the log holds no request body'
  return undefined
}

/** Simulated counts as the usage DSH's DeepSeek client would have normalized from the wire. */
function replayedUsage(counts: SimCounts): Usage {
  return parseDeepSeekUsage(wireUsage('deepseek-chat', counts, false))
}

interface SessionState {
  session: PolicySession
  /** What the series starts showed, in order met. */
  evidence: Set<RecordedSeriesStart>
  /** Rows of each replayed side, through the same builder the import's rows come from. */
  replayedRows: ObservedRowBuilder
  rederivedRows: ObservedRowBuilder
}

/**
 * Collects the re-derivation of an import file by file: each file's re-derived requests replayed with
 * their recorded bodies and with their re-derived bodies, each side on one simulator account in time
 * order (as `predictObserved` replays the recorded bodies). Holds per-session sums and the steps.
 */
export class PolicyTally {
  private readonly sessions = new Map<string, SessionState>()
  private readonly steps: PolicyStep[] = []

  constructor(readonly policy: SeriesStartPolicy) {}

  /** Add one file's requests and their rows (`entries[i]` is the row of `requests[i]`). */
  add(requests: readonly ObservedRequest[], entries: readonly ObservedRow[]): void {
    const reasons = new Map<ObservedRequest, string>()
    const recordedSide: ObservedRequest[] = []
    const rederivedSide: ObservedRequest[] = []
    for (const request of requests) {
      const { request: wire, ...rest } = request
      const reason = notApplicable(request)
      if (reason !== undefined || wire === undefined || request.rederived?.kind !== 'rederived') {
        reasons.set(request, reason ?? 'not re-derived')
        recordedSide.push(rest)
        rederivedSide.push(rest)
        continue
      }
      recordedSide.push(request)
      rederivedSide.push({ ...rest, request: { ...wire, body: request.rederived.body } })
    }
    const replayable = reasons.size < requests.length
    const replayed = replayable ? replayObserved(recordedSide) : []
    const rederived = replayable ? replayObserved(rederivedSide) : []
    requests.forEach((request, index) => {
      const state = this.sessionOf(request)
      const reason = reasons.get(request)
      if (reason !== undefined) {
        state.session.notApplicable.push({ source: request.source, reason })
        return
      }
      const original = replayed[index]?.predicted
      const alternative = rederived[index]?.predicted
      const row = entries[index]?.row
      const found = request.rederived
      if (
        original === undefined ||
        alternative === undefined ||
        row === undefined ||
        found?.kind !== 'rederived'
      ) {
        state.session.rejected += 1
        return
      }
      const step: PolicyStep = {
        session: request.session,
        source: request.source,
        turn: row.turn,
        step: row.step,
        seriesStart: found.seriesStart,
        ...(found.recordedAs !== undefined ? { recordedAs: found.recordedAs } : {}),
        ...(found.firstDifference !== undefined ? { firstDifference: found.firstDifference } : {}),
        recorded: totalsOf(row),
        replayed: totalsOf(state.replayedRows.add({ ...request, usage: replayedUsage(original) }).row),
        rederived: totalsOf(state.rederivedRows.add({ ...request, usage: replayedUsage(alternative) }).row),
      }
      this.steps.push(step)
      const session = state.session
      session.requests += 1
      addTo(session.recorded, step.recorded)
      addTo(session.replayed, step.replayed)
      addTo(session.rederived, step.rederived)
      if (found.recordedAs !== undefined) state.evidence.add(found.recordedAs)
      if (session.firstDifference === undefined && found.firstDifference !== undefined)
        session.firstDifference = {
          source: request.source,
          turn: step.turn,
          step: step.step,
          node: `messages[${found.firstDifference}]`,
        }
    })
  }

  /** Every session seen, in the order first seen. */
  result(): PolicySession[] {
    return [...this.sessions.values()].map((state) => ({
      ...state.session,
      recordedPolicy: state.session.requests === 0 ? 'not-applicable' : recordedPolicyOf(state.evidence),
    }))
  }

  /** Every re-derived request, in the order added. */
  stepsResult(): readonly PolicyStep[] {
    return this.steps
  }

  private sessionOf(request: ObservedRequest): SessionState {
    const key = `${request.format}\u0000${request.session}`
    let state = this.sessions.get(key)
    if (state === undefined) {
      state = {
        session: {
          format: request.format,
          session: request.session,
          recordedPolicy: 'indistinguishable',
          requests: 0,
          notApplicable: [],
          rejected: 0,
          recorded: emptyTotals(),
          replayed: emptyTotals(),
          rederived: emptyTotals(),
        },
        evidence: new Set(),
        // The rows are sums only: the import's run id labels none of them.
        replayedRows: new ObservedRowBuilder({ runId: 'policy-replayed' }),
        rederivedRows: new ObservedRowBuilder({ runId: 'policy-rederived' }),
      }
      this.sessions.set(key, state)
    }
    return state
  }
}

/** A session's recorded policy from what its series starts showed. */
export function recordedPolicyOf(evidence: ReadonlySet<RecordedSeriesStart>): RecordedPolicy {
  const consolidate = evidence.has('consolidate')
  const keepLive = evidence.has('keep-live')
  if (consolidate && keepLive) return 'mixed'
  if (consolidate) return 'consolidate'
  if (keepLive) return 'keep-live'
  // Series starts whose commits follow neither rule, and none that tell the policies apart.
  return evidence.has('neither') ? 'unknown' : 'indistinguishable'
}

/** The `policy.csv` columns (one record per session), in order. */
export const POLICY_COLUMNS = [
  'format',
  'session',
  'recorded_policy',
  'policy',
  'requests',
  'not_applicable',
  'not_applicable_reason',
  'rejected',
  'first_difference_source',
  'first_difference_turn',
  'first_difference_step',
  'first_difference_node',
  'recorded_input_tokens',
  'recorded_cache_read_tokens',
  'recorded_cost_usd',
  'replayed_input_tokens',
  'replayed_cache_read_tokens',
  'replayed_cache_write_tokens',
  'replayed_uncached_tokens',
  'replayed_cost_usd',
  'policy_input_tokens',
  'policy_cache_read_tokens',
  'policy_cache_write_tokens',
  'policy_uncached_tokens',
  'policy_cost_usd',
  'difference_cache_read_tokens',
  'difference_uncached_tokens',
  'difference_cost_usd',
] as const

/** Each session as a `policy.csv` record, in column order. */
export function policyRecords(sessions: readonly PolicySession[], policy: SeriesStartPolicy): string[][] {
  return sessions.map((session) => {
    const difference = session.firstDifference
    const reasons = [...new Set(session.notApplicable.map((entry) => entry.reason))]
    return [
      session.format,
      session.session,
      session.recordedPolicy,
      policy,
      String(session.requests),
      String(session.notApplicable.length),
      reasons.join('; '),
      String(session.rejected),
      difference?.source ?? '',
      difference === undefined ? '' : String(difference.turn),
      difference === undefined ? '' : String(difference.step),
      difference?.node ?? '',
      String(session.recorded.input),
      String(session.recorded.read),
      session.recorded.costUsd.toFixed(8),
      ...sideCells(session.replayed),
      ...sideCells(session.rederived),
      String(session.rederived.read - session.replayed.read),
      String(session.rederived.uncached - session.replayed.uncached),
      (session.rederived.costUsd - session.replayed.costUsd).toFixed(8),
    ]
  })
}

const sideCells = (totals: PolicyTotals) => [
  String(totals.input),
  String(totals.read),
  String(totals.write),
  String(totals.uncached),
  totals.costUsd.toFixed(8),
]

/** The `policy-steps.csv` columns (one record per re-derived request), in order. */
export const POLICY_STEP_COLUMNS = [
  'session',
  'source',
  'turn',
  'step',
  'series_start',
  'recorded_as',
  'first_difference_node',
  'recorded_input_tokens',
  'recorded_cache_read_tokens',
  'recorded_cache_write_tokens',
  'recorded_uncached_tokens',
  'recorded_cost_usd',
  'replayed_input_tokens',
  'replayed_cache_read_tokens',
  'replayed_cache_write_tokens',
  'replayed_uncached_tokens',
  'replayed_cost_usd',
  'policy_input_tokens',
  'policy_cache_read_tokens',
  'policy_cache_write_tokens',
  'policy_uncached_tokens',
  'policy_cost_usd',
] as const

/** Each re-derived request as a `policy-steps.csv` record, in column order. */
export function policyStepRecords(steps: readonly PolicyStep[]): string[][] {
  return steps.map((step) => [
    step.session,
    step.source,
    String(step.turn),
    String(step.step),
    String(step.seriesStart),
    step.recordedAs ?? '',
    step.firstDifference === undefined ? '' : `messages[${step.firstDifference}]`,
    ...sideCells(step.recorded),
    ...sideCells(step.replayed),
    ...sideCells(step.rederived),
  ])
}
