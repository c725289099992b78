// Scenario claims: each scenario's `demonstrates` sentence as checks on the step rows of a run, per
// provider, and the small vocabulary the scenarios write them in.

import type { ProviderId } from '../harness/types.ts'
import { stepLabel } from '../reports/labels.ts'
import { summarize } from '../reports/summary.ts'
import { countText, percentText } from '../reports/text-table.ts'
import type { BreakCause, ClaimResult, StepRow } from '../reports/types.ts'
import type { Scenario } from './types.ts'

/**
 * Every claim of the scenarios on every provider the rows cover: `not-run` when a variant the claim reads
 * has no rows there (filtered out, or not applicable on the model).
 */
export function evaluateClaims(scenarios: readonly Scenario[], rows: readonly StepRow[]): ClaimResult[] {
  const bySession = new Map<string, StepRow[]>()
  const providers = new Map<string, Set<ProviderId>>()
  for (const row of rows) {
    // Claims state what the model's variants (its policies) demonstrate: they read the model loop's rows.
    if ((row.loop ?? 'model') !== 'model') continue
    const key = `${row.scenario}\u0000${row.variant}\u0000${row.provider}`
    const list = bySession.get(key)
    if (list === undefined) bySession.set(key, [row])
    else list.push(row)
    const seen = providers.get(row.scenario) ?? new Set<ProviderId>()
    seen.add(row.provider)
    providers.set(row.scenario, seen)
  }
  const results: ClaimResult[] = []
  for (const scenario of scenarios) {
    for (const provider of providers.get(scenario.name) ?? []) {
      for (const claim of scenario.claims) {
        if (claim.providers !== undefined && !claim.providers.includes(provider)) continue
        const rowsOf = (variant: string) => bySession.get(`${scenario.name}\u0000${variant}\u0000${provider}`)
        const base = {
          scenario: scenario.name,
          provider,
          claim: claim.id,
          text: claim.text,
          variants: claim.variants,
        }
        if (claim.variants.some((variant) => rowsOf(variant) === undefined)) {
          results.push({ ...base, status: 'not-run', observed: '' })
          continue
        }
        const verdict = claim.check((variant) => rowsOf(variant) ?? [])
        results.push({ ...base, status: verdict.holds ? 'holds' : 'fails', observed: verdict.observed })
      }
    }
  }
  return results
}

/** Token-weighted warm hit ratio of a session's rows (0 when it has no warm request). */
export function warmRatio(rows: readonly StepRow[]): number {
  return summarize(rows)[0]?.hitRatioWarm ?? 0
}

/** The warm hit ratio as people read it. */
export function warmText(rows: readonly StepRow[]): string {
  return `warm ${percentText(warmRatio(rows))}`
}

/** Tokens the client's changes cost over a session. */
export function lostTokens(rows: readonly StepRow[]): number {
  return rows.reduce((sum, row) => sum + row.lostTokens, 0)
}

/** Tokens the provider side cost over a session. */
export function providerLostTokens(rows: readonly StepRow[]): number {
  return rows.reduce((sum, row) => sum + row.providerLostTokens, 0)
}

/** Successful rows whose client-side or provider-side cause is `cause`. */
export function breaksWith(rows: readonly StepRow[], cause: BreakCause): StepRow[] {
  return rows.filter((row) => row.ok && (row.breakCause === cause || row.providerCause === cause))
}

/** Successful rows with any cause. */
export function breaks(rows: readonly StepRow[]): StepRow[] {
  return rows.filter((row) => row.ok && (row.breakCause !== undefined || row.providerCause !== undefined))
}

/** Breaks as `cause@turn.step`, at most a few, for an observation. */
export function breaksText(rows: readonly StepRow[]): string {
  const found = breaks(rows)
  if (found.length === 0) return 'no breaks'
  const listed = found
    .slice(0, 3)
    .map((row) => `${row.breakCause ?? row.providerCause}@${stepLabel(row)}`)
    .join(', ')
  return found.length > 3 ? `${listed} (+${found.length - 3})` : listed
}

/** A token count as people read it. */
export function tokensText(count: number): string {
  return `${countText(count)} tokens`
}
