// How a request and its break read in reports, tooltips and test failure messages.

import { findModel, vendorOf } from '../providers/catalog.ts'
import { countText, dollarText } from './text-table.ts'
import type { StepRow } from './types.ts'

/** A request's place in its session: `turn.step`, with `#attempt` for a retry. */
export function stepLabel(row: Pick<StepRow, 'turn' | 'step' | 'attempt'>): string {
  return `${row.turn}.${row.step}${row.attempt === 0 ? '' : `#${row.attempt}`}`
}

/** A break as a phrase: cause, divergent node, session event and the tokens it lost. */
export function breakDescription(
  row: Pick<StepRow, 'breakCause' | 'breakNode' | 'breakEventSeq' | 'lostTokens'>,
): string {
  const node = row.breakNode === undefined ? '' : ` at ${row.breakNode}`
  const event = row.breakEventSeq === undefined ? '' : ` (event ${row.breakEventSeq})`
  return `${row.breakCause ?? 'unknown cause'}${node}${event}, ${countText(row.lostTokens)} tokens lost`
}

/**
 * What a longer cache lifetime would have cost instead of an expiry: holding the lost prefix written at
 * the 1-hour price rather than the 5-minute one (Anthropic), or nothing (OpenAI's 24h retention is billed
 * like in-memory). An eviction for memory is serve's, not the provider's: a larger budget keeps it.
 * Undefined for other causes and providers without a lifetime option.
 */
export function providerAdvice(
  row: Pick<StepRow, 'provider' | 'model' | 'providerCause' | 'providerLostTokens'>,
): string | undefined {
  if (row.providerCause === 'evicted')
    return "serve's --memory-budget dropped it while live: a larger budget keeps it"
  if (row.providerCause !== 'ttl-expired') return undefined
  const vendor = vendorOf(row.provider)
  const prices = findModel(vendor, row.model)?.prices
  if (vendor === 'openai') return '24h retention would have kept it at no extra cost'
  if (prices?.cacheWrite1h === undefined || prices.cacheWrite5m === undefined) return undefined
  const premium = (row.providerLostTokens * (prices.cacheWrite1h - prices.cacheWrite5m)) / 1_000_000
  return `a 1h TTL would have cost ${dollarText(premium)} more in writes`
}

/** A request's model as reports name it, with the catalog model it was simulated and priced as, if any. */
export function modelText(row: Pick<StepRow, 'model' | 'simulatedAs'>): string {
  return row.simulatedAs === undefined ? row.model : `${row.model} (simulated as ${row.simulatedAs})`
}

/** A switch of model as a break names it: `(claude-opus-5-5 → claude-haiku-4-5)`. */
export function modelSwitchText(previous: string, model: string): string {
  return `(${previous} → ${model})`
}
