// The summary of a run: per scenario, variant and provider, sums over rows (never averages of ratios),
// with each session's cold first request outside the warm hit ratio.

import { breakTokens } from './breaks.ts'
import { type SessionKey, sessionKeyString } from './session-key.ts'
import type { ClaimResult, StepRow, SummaryRow } from './types.ts'

const ratio = (part: number, whole: number): number | undefined => (whole === 0 ? undefined : part / whole)

/** Summarize rows, one summary per (scenario, variant, provider), in first-seen order. */
export function summarize(rows: readonly StepRow[]): SummaryRow[] {
  const groups = new Map<string, StepRow[]>()
  for (const row of rows) {
    const key = sessionKeyString(row)
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [row])
    else group.push(row)
  }
  return [...groups.values()].map(summarizeGroup)
}

function summarizeGroup(rows: StepRow[]): SummaryRow {
  const first = rows[0] as StepRow
  const ok = rows.filter((row) => row.ok)
  const warm = ok.filter((row) => !row.cold)
  const sum = (list: StepRow[], pick: (row: StepRow) => number) =>
    list.reduce((total, row) => total + pick(row), 0)
  const input = sum(ok, (row) => row.inputTokens)
  const read = sum(ok, (row) => row.cacheReadTokens)
  const write = sum(ok, (row) => row.cacheWriteTokens)
  const warmInput = sum(warm, (row) => row.inputTokens)
  const warmRead = sum(warm, (row) => row.cacheReadTokens)
  const breaks = ok.filter((row) => row.breakCause !== undefined || row.providerCause !== undefined)
  // The break that cost most, counting the client's change and the provider side together.
  const largest = breaks.reduce<StepRow | undefined>(
    (best, row) => (best === undefined || breakTokens(row) > breakTokens(best) ? row : best),
    undefined,
  )
  return {
    runId: first.runId,
    scenario: first.scenario,
    variant: first.variant,
    provider: first.provider,
    model: first.model,
    requests: ok.length,
    failedAttempts: rows.length - ok.length,
    inputTokens: input,
    cacheReadTokens: read,
    cacheWriteTokens: write,
    uncachedTokens: sum(ok, (row) => row.uncachedTokens),
    outputTokens: sum(ok, (row) => row.outputTokens),
    hitRatioWarm: ratio(warmRead, warmInput),
    warmInputTokens: warmInput,
    warmCacheReadTokens: warmRead,
    hitRatioAll: ratio(read, input),
    writeRatio: ratio(write, input),
    idealCacheReadTokens: sum(ok, (row) => row.idealCacheReadTokens),
    lostTokens: sum(ok, (row) => row.lostTokens),
    providerLostTokens: sum(ok, (row) => row.providerLostTokens),
    providerLostUsd: sum(ok, (row) => row.providerLostUsd),
    costUsd: sum(ok, (row) => row.costUsd),
    idealCostUsd: sum(ok, (row) => row.idealCostUsd),
    breaks: breaks.length,
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
  }
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
  return {
    runId: first.runId,
    scenario: key.scenario,
    variant: key.variant,
    provider: key.provider,
    model: first.model,
    requests: sum((row) => row.requests),
    failedAttempts: sum((row) => row.failedAttempts),
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
