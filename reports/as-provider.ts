// `cachelab import --as PROVIDER`: the imported requests that carry their body, translated to another
// provider's wire and replayed through that provider's simulator, summed per session beside what the
// transcript recorded — the same conversations, as they would have cached and cost there.

import { stringify } from 'csv-stringify/sync'
import type { BuiltInProviderId } from '../harness/types.ts'
import type { ModelEntry } from '../providers/catalog.ts'
import { costUsd } from './cost.ts'
import { replayObserved } from './observed/transcripts/replay.ts'
import { WireTranslator } from './observed/transcripts/translate.ts'
import type { ObservedRequest } from './observed/transcripts/types.ts'
import type { ObservedRow } from './observed-rows.ts'

/** The target of a counterfactual replay: a provider and its catalog model. */
export interface AsProviderTarget {
  provider: BuiltInProviderId
  /** The catalog entry whose name the bodies carry and whose prices cost the predictions. */
  entry: ModelEntry
}

/** Token buckets and cost summed over a session's replayed requests. */
export interface CounterfactualTotals {
  input: number
  read: number
  write: number
  costUsd: number
  /** Read / input over the requests after the session's first replayed one; undefined with none. */
  hitRatioWarm: number | undefined
}

/** One session: recorded beside predicted as the target, over the requests that could be replayed. */
export interface CounterfactualSession {
  /** The transcript format (the rows' scenario). */
  format: string
  session: string
  /** Requests translated and replayed. */
  requests: number
  /** `file:line` of the requests whose transcript holds no body (or one that cannot be translated), and why. */
  notRebuildable: Array<{ source: string; reason: string }>
  /** Requests the target's simulator refused (counted in neither side's totals). */
  rejected: number
  recorded: CounterfactualTotals
  predicted: CounterfactualTotals
}

/** A running token sum from which the totals are read. */
interface Sums {
  input: number
  read: number
  write: number
  costUsd: number
  warmInput: number
  warmRead: number
}

const emptySums = (): Sums => ({ input: 0, read: 0, write: 0, costUsd: 0, warmInput: 0, warmRead: 0 })

function totalsOf(sums: Sums): CounterfactualTotals {
  return {
    input: sums.input,
    read: sums.read,
    write: sums.write,
    costUsd: sums.costUsd,
    hitRatioWarm: sums.warmInput > 0 ? sums.warmRead / sums.warmInput : undefined,
  }
}

interface SessionSums {
  format: string
  session: string
  requests: number
  notRebuildable: Array<{ source: string; reason: string }>
  rejected: number
  recorded: Sums
  predicted: Sums
}

const NO_BODY = 'the transcript holds no request body'

/**
 * Collects the counterfactual of an import file by file: each file's requests (with their rows, in the
 * same order) translated and replayed on one simulator account, as `predictObserved` replays the
 * recorded bodies. Holds per-session sums only.
 */
export class CounterfactualTally {
  private readonly target: AsProviderTarget
  private readonly sessions = new Map<string, SessionSums>()

  constructor(target: AsProviderTarget) {
    this.target = target
  }

  /** Add one file's requests and their rows (`entries[i]` is the row of `requests[i]`). */
  add(requests: readonly ObservedRequest[], entries: readonly ObservedRow[]): void {
    const { provider, entry } = this.target
    const translator = new WireTranslator(provider, entry.model)
    const reasons = new Map<ObservedRequest, string>()
    const translated = requests.map((request): ObservedRequest => {
      const { request: recorded, ...rest } = request
      if (recorded === undefined) {
        reasons.set(request, NO_BODY)
        return rest
      }
      const translation = translator.translate(recorded, request.session)
      if (translation.kind === 'untranslatable') {
        reasons.set(request, translation.reason)
        return rest
      }
      const { api, body, estimated } = translation.translated
      // Only DeepSeek renders the answer's reasoning into the next request; the other wires drop it.
      const answer =
        request.answer === undefined || provider === 'deepseek'
          ? request.answer
          : { message: request.answer.message }
      return {
        ...rest,
        provider,
        model: entry.model,
        request: { api, body, estimated: estimated.join('; ') },
        ...(answer !== undefined ? { answer } : {}),
      }
    })
    const replayed = translated.some((request) => request.request !== undefined)
      ? replayObserved(translated)
      : []
    requests.forEach((request, index) => {
      const sums = this.sessionOf(request.format, request.session)
      const reason = reasons.get(request)
      if (reason !== undefined) {
        sums.notRebuildable.push({ source: request.source, reason })
        return
      }
      const replay = replayed[index]
      const row = entries[index]?.row
      if (replay?.predicted === undefined || row === undefined) {
        sums.rejected += 1
        return
      }
      const predicted = replay.predicted
      const warm = sums.requests > 0
      sums.requests += 1
      addTo(sums.recorded, row.inputTokens, row.cacheReadTokens, row.cacheWriteTokens, row.costUsd, warm)
      addTo(
        sums.predicted,
        predicted.input,
        predicted.read,
        predicted.write,
        costUsd(
          {
            uncached: predicted.uncached,
            read: predicted.read,
            write5m: predicted.write5m,
            write1h: predicted.write1h,
            output: predicted.output,
          },
          entry.prices,
        ),
        warm,
      )
    })
  }

  /** Every session seen, in the order first seen. */
  result(): CounterfactualSession[] {
    return [...this.sessions.values()].map((sums) => ({
      format: sums.format,
      session: sums.session,
      requests: sums.requests,
      notRebuildable: sums.notRebuildable,
      rejected: sums.rejected,
      recorded: totalsOf(sums.recorded),
      predicted: totalsOf(sums.predicted),
    }))
  }

  private sessionOf(format: string, session: string): SessionSums {
    const key = `${format}\u0000${session}`
    let sums = this.sessions.get(key)
    if (sums === undefined) {
      sums = {
        format,
        session,
        requests: 0,
        notRebuildable: [],
        rejected: 0,
        recorded: emptySums(),
        predicted: emptySums(),
      }
      this.sessions.set(key, sums)
    }
    return sums
  }
}

function addTo(sums: Sums, input: number, read: number, write: number, cost: number, warm: boolean): void {
  sums.input += input
  sums.read += read
  sums.write += write
  sums.costUsd += cost
  if (warm) {
    sums.warmInput += input
    sums.warmRead += read
  }
}

/** The `counterfactual.csv` columns, in order. */
export const COUNTERFACTUAL_COLUMNS = [
  'format',
  'session',
  'requests',
  'not_rebuildable',
  'rejected',
  'recorded_input_tokens',
  'recorded_cache_read_tokens',
  'recorded_cache_write_tokens',
  'recorded_cost_usd',
  'recorded_hit_ratio_warm',
  'as_provider',
  'as_model',
  'as_input_tokens',
  'as_cache_read_tokens',
  'as_cache_write_tokens',
  'as_cost_usd',
  'as_hit_ratio_warm',
] as const

const ratioCell = (value: number | undefined) => (value === undefined ? '' : value.toFixed(6))

/** Each session as a `counterfactual.csv` record, in column order. */
export function counterfactualRecords(
  sessions: readonly CounterfactualSession[],
  target: AsProviderTarget,
): string[][] {
  return sessions.map((session) => [
    session.format,
    session.session,
    String(session.requests),
    String(session.notRebuildable.length),
    String(session.rejected),
    String(session.recorded.input),
    String(session.recorded.read),
    String(session.recorded.write),
    session.recorded.costUsd.toFixed(8),
    ratioCell(session.recorded.hitRatioWarm),
    target.provider,
    target.entry.model,
    String(session.predicted.input),
    String(session.predicted.read),
    String(session.predicted.write),
    session.predicted.costUsd.toFixed(8),
    ratioCell(session.predicted.hitRatioWarm),
  ])
}

/** `--as`'s files: counterfactual.csv (per session, recorded beside predicted) and not-rebuildable.csv. */
export function counterfactualFiles(
  sessions: readonly CounterfactualSession[],
  target: AsProviderTarget,
): Record<string, string> {
  return {
    'counterfactual.csv': stringify([
      [...COUNTERFACTUAL_COLUMNS],
      ...counterfactualRecords(sessions, target),
    ]),
    'not-rebuildable.csv': stringify([
      ['source', 'format', 'session', 'reason'],
      ...sessions.flatMap((session) =>
        session.notRebuildable.map((entry) => [entry.source, session.format, session.session, entry.reason]),
      ),
    ]),
  }
}
