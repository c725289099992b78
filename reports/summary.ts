// The summary of a run: per scenario, variant and provider, sums over rows (never averages of ratios),
// with each session's cold first request outside the warm hit ratio.

import { simulationModel, vendorOf } from '../providers/catalog.ts'
import { breakTokens } from './breaks.ts'
import { type SessionKey, sessionKeyString } from './session-key.ts'
import type { ClaimResult, StepRow, SummaryRow } from './types.ts'

const ratio = (part: number, whole: number): number | undefined => (whole === 0 ? undefined : part / whole)

/** Summarize rows, one summary per (scenario, variant, provider), in first-seen order. */
export function summarize(rows: readonly StepRow[]): SummaryRow[] {
  const tally = new SummaryTally()
  for (const row of rows) tally.add(row)
  return tally.result()
}

/** One session's running sums over its successful requests, in row order. */
interface GroupSums {
  first: StepRow
  rows: number
  ok: number
  /** Answered requests whose usage was not reported: counted in `ok`, left out of the sums. */
  unreported: number
  input: number
  read: number
  write: number
  uncached: number
  output: number
  warmInput: number
  warmRead: number
  ideal: number
  lost: number
  providerLost: number
  providerLostUsd: number
  cost: number
  idealCost: number
  /** Cost of the rows priced as a stand-in. */
  standInCost: number
  breaks: number
  /** The break that cost most (the first of equals), counting the client's change and the provider side together. */
  largest: StepRow | undefined
  /** Requests that marked nothing where the provider caches only what is marked, their cost and marked cost. */
  unmarked: number
  unmarkedCost: number
  markedCost: number
  /** Measured requests below their model's caching minimum, and the largest such minimum. */
  belowMinimum: number
  minimum: number
}

/** The summaries of rows added one at a time: what `summarize` gives for the same rows in the same order. */
export class SummaryTally {
  private readonly groups = new Map<string, GroupSums>()

  add(row: StepRow): void {
    const key = sessionKeyString(row)
    let group = this.groups.get(key)
    if (group === undefined) {
      group = {
        first: row,
        rows: 0,
        ok: 0,
        unreported: 0,
        input: 0,
        read: 0,
        write: 0,
        uncached: 0,
        output: 0,
        warmInput: 0,
        warmRead: 0,
        ideal: 0,
        lost: 0,
        providerLost: 0,
        providerLostUsd: 0,
        cost: 0,
        idealCost: 0,
        standInCost: 0,
        breaks: 0,
        largest: undefined,
        unmarked: 0,
        unmarkedCost: 0,
        markedCost: 0,
        belowMinimum: 0,
        minimum: 0,
      }
      this.groups.set(key, group)
    }
    group.rows += 1
    if (!row.ok) return
    group.ok += 1
    if (row.usageNotReported === true) {
      group.unreported += 1
      return
    }
    group.input += row.inputTokens
    group.read += row.cacheReadTokens
    group.write += row.cacheWriteTokens
    group.uncached += row.uncachedTokens
    group.output += row.outputTokens
    if (!row.cold) {
      group.warmInput += row.inputTokens
      group.warmRead += row.cacheReadTokens
    }
    group.ideal += row.idealCacheReadTokens
    group.lost += row.lostTokens
    group.providerLost += row.providerLostTokens
    group.providerLostUsd += row.providerLostUsd
    group.cost += row.costUsd
    group.idealCost += row.idealCostUsd
    if (row.simulatedAs !== undefined) group.standInCost += row.costUsd
    if (row.breakCause !== undefined || row.providerCause !== undefined) {
      group.breaks += 1
      if (group.largest === undefined || breakTokens(row) > breakTokens(group.largest)) group.largest = row
    }
    if (row.markedCostUsd !== undefined) {
      group.unmarked += 1
      group.unmarkedCost += row.costUsd
      group.markedCost += row.markedCostUsd
    }
    const minimum = cachingMinimum(row)
    if (minimum !== undefined && row.inputTokens < minimum) {
      group.belowMinimum += 1
      group.minimum = Math.max(group.minimum, minimum)
    }
  }

  /** One summary per session, in first-seen order. */
  result(): SummaryRow[] {
    return [...this.groups.values()].map(summaryOf)
  }
}

function summaryOf(group: GroupSums): SummaryRow {
  const { first, largest } = group
  return {
    runId: first.runId,
    scenario: first.scenario,
    variant: first.variant,
    provider: first.provider,
    model: first.model,
    requests: group.ok,
    failedAttempts: group.rows - group.ok,
    ...(group.unreported > 0 ? { usageNotReported: group.unreported } : {}),
    inputTokens: group.input,
    cacheReadTokens: group.read,
    cacheWriteTokens: group.write,
    uncachedTokens: group.uncached,
    outputTokens: group.output,
    hitRatioWarm: ratio(group.warmRead, group.warmInput),
    warmInputTokens: group.warmInput,
    warmCacheReadTokens: group.warmRead,
    hitRatioAll: ratio(group.read, group.input),
    writeRatio: ratio(group.write, group.input),
    idealCacheReadTokens: group.ideal,
    lostTokens: group.lost,
    providerLostTokens: group.providerLost,
    providerLostUsd: group.providerLostUsd,
    costUsd: group.cost,
    idealCostUsd: group.idealCost,
    breaks: group.breaks,
    claimsHeld: 0,
    claimsFailed: 0,
    largestBreak:
      largest === undefined
        ? undefined
        : {
            lostTokens: breakTokens(largest),
            turn: largest.turn,
            step: largest.step,
            cause: largest.breakCause ?? largest.providerCause,
          },
    ...(first.loop !== undefined ? { loop: first.loop } : {}),
    ...(first.session !== undefined ? { session: first.session } : {}),
    ...(first.conversationKind !== undefined ? { conversationKind: first.conversationKind } : {}),
    ...(first.agent !== undefined ? { agent: first.agent } : {}),
    ...(group.standInCost > 0 ? { standInCostUsd: group.standInCost } : {}),
    ...(group.unmarked > 0
      ? {
          nothingMarked: {
            requests: group.unmarked,
            costUsd: group.unmarkedCost,
            markedCostUsd: group.markedCost,
          },
        }
      : {}),
    // Only a session none of whose measured requests reached the minimum cached nothing at all: said of
    // one with a later request to read a cache (a title or a one-off side request expects none).
    ...(group.belowMinimum >= 2 &&
    group.belowMinimum === group.ok - group.unreported &&
    group.read + group.write === 0 &&
    first.conversationKind !== 'side' &&
    first.conversationKind !== 'compaction'
      ? { belowMinimum: { requests: group.belowMinimum, minTokens: group.minimum } }
      : {}),
  }
}

/** The smallest prompt the row's model caches anything of, by its catalog rules; none where there is none. */
function cachingMinimum(row: StepRow): number | undefined {
  const rules = simulationModel(vendorOf(row.provider), row.simulatedAs ?? row.model).cache
  return 'minTokens' in rules ? rules.minTokens : undefined
}

/**
 * A session's line: its conversations' summaries summed, labelled as the session (`key`). Ratios come from
 * the summed tokens, never from the conversations' ratios; the warm hit ratio is undefined when a
 * conversation lacks the sums behind its own (a row read back from summary.csv).
 */
export function sessionTotal(key: SessionKey, conversations: readonly SummaryRow[]): SummaryRow {
  const first = conversations[0]
  if (first === undefined) throw new Error('a session total needs at least one conversation')
  const sum = (pick: (row: SummaryRow) => number) =>
    conversations.reduce((total, row) => total + pick(row), 0)
  const input = sum((row) => row.inputTokens)
  const read = sum((row) => row.cacheReadTokens)
  const write = sum((row) => row.cacheWriteTokens)
  const warmKnown = conversations.every(
    (row) => row.warmInputTokens !== undefined && row.warmCacheReadTokens !== undefined,
  )
  const warmInput = sum((row) => row.warmInputTokens ?? 0)
  const warmRead = sum((row) => row.warmCacheReadTokens ?? 0)
  const largest = conversations.reduce<SummaryRow['largestBreak']>(
    (best, row) =>
      row.largestBreak !== undefined && (best === undefined || row.largestBreak.lostTokens > best.lostTokens)
        ? row.largestBreak
        : best,
    undefined,
  )
  const agents = new Set(conversations.map((row) => row.agent))
  const standIn = sum((row) => row.standInCostUsd ?? 0)
  const unreported = sum((row) => row.usageNotReported ?? 0)
  const unmarked = conversations.filter((row) => row.nothingMarked !== undefined)
  return {
    runId: first.runId,
    scenario: key.scenario,
    variant: key.variant,
    provider: key.provider,
    model: first.model,
    requests: sum((row) => row.requests),
    failedAttempts: sum((row) => row.failedAttempts),
    ...(unreported > 0 ? { usageNotReported: unreported } : {}),
    inputTokens: input,
    cacheReadTokens: read,
    cacheWriteTokens: write,
    uncachedTokens: sum((row) => row.uncachedTokens),
    outputTokens: sum((row) => row.outputTokens),
    hitRatioWarm: warmKnown ? ratio(warmRead, warmInput) : undefined,
    ...(warmKnown ? { warmInputTokens: warmInput, warmCacheReadTokens: warmRead } : {}),
    hitRatioAll: ratio(read, input),
    writeRatio: ratio(write, input),
    idealCacheReadTokens: sum((row) => row.idealCacheReadTokens),
    lostTokens: sum((row) => row.lostTokens),
    providerLostTokens: sum((row) => row.providerLostTokens),
    providerLostUsd: sum((row) => row.providerLostUsd),
    costUsd: sum((row) => row.costUsd),
    idealCostUsd: sum((row) => row.idealCostUsd),
    breaks: sum((row) => row.breaks),
    claimsHeld: sum((row) => row.claimsHeld),
    claimsFailed: sum((row) => row.claimsFailed),
    largestBreak: largest,
    ...(key.loop !== undefined ? { loop: key.loop } : {}),
    ...(agents.size === 1 && first.agent !== undefined ? { agent: first.agent } : {}),
    ...(standIn > 0 ? { standInCostUsd: standIn } : {}),
    ...(unmarked.length > 0
      ? {
          nothingMarked: {
            requests: unmarked.reduce((total, row) => total + (row.nothingMarked?.requests ?? 0), 0),
            costUsd: unmarked.reduce((total, row) => total + (row.nothingMarked?.costUsd ?? 0), 0),
            markedCostUsd: unmarked.reduce(
              (total, row) => total + (row.nothingMarked?.markedCostUsd ?? 0),
              0,
            ),
          },
        }
      : {}),
  }
}

/** The summaries with the claims that read each session counted in, by outcome. */
export function withClaims(rows: readonly SummaryRow[], claims: readonly ClaimResult[]): SummaryRow[] {
  return rows.map((row) => {
    const reading = claims.filter(
      (claim) =>
        claim.scenario === row.scenario &&
        claim.provider === row.provider &&
        (row.loop ?? 'model') === 'model' &&
        claim.variants.includes(row.variant),
    )
    return {
      ...row,
      claimsHeld: reading.filter((claim) => claim.status === 'holds').length,
      claimsFailed: reading.filter((claim) => claim.status === 'fails').length,
    }
  })
}
