// The providers' own cache diagnostics beside cachelab's causes: which reason each provider gives for what
// cachelab names a cause at a node (the table docs/reports.md shows), whether a row's provider reason agrees,
// and a run's tally of where they disagree.

import type { ProviderId } from '../harness/types.ts'
import type { BreakCause, StepRow } from './types.ts'

/** The providers whose diagnostics cachelab reads: Anthropic's `diagnostics`, OpenAI Responses'. */
export type DiagnosisVendor = 'anthropic' | 'openai'

/** The diagnostics a provider id's rows can carry. */
export function diagnosisVendor(provider: ProviderId): DiagnosisVendor | undefined {
  if (provider === 'anthropic') return 'anthropic'
  return provider === 'openai-responses' ? 'openai' : undefined
}

/** What a provider reason says when it compared nothing: no record of the earlier request, or not yet. */
const NO_COMPARISON: ReadonlySet<string> = new Set([
  'previous_message_not_found',
  'comparison_response_not_found',
  'pending',
  'unavailable',
])

/** OpenAI's reasons for a setting that changed beside the prompt (its guide's table). */
const OPENAI_SETTINGS = [
  'prompt_cache_key_changed',
  'service_tier_changed',
  'text_format_changed',
  'reasoning_effort_changed',
  'verbosity_changed',
] as const

/** Causes that rewrite history into a summary: OpenAI names its own server-side compaction so. */
const SUMMARIES: ReadonlySet<BreakCause> = new Set(['compaction-summary', 'history-summarized'])

/** The wire part a break node names (`messages[3].1` → `messages`, `model`, `tools[2]` → `tools`). */
export function nodePart(node: string | undefined): string | undefined {
  if (node === undefined) return undefined
  return /^[a-z_]+/i.exec(node)?.[0] ?? node
}

/**
 * The reasons a provider's diagnostics give for a request where cachelab names `cause` at `node` (both
 * undefined: the request extended the previous one). The provider reports the first divergence of the
 * request against the one it was asked to compare, by the part of the request it sits in, so the node
 * decides the reason and the cause only refines it:
 *
 * - nothing diverged, or only the provider side cost the read (`ttl-expired`, `lookback-miss`,
 *   `routing-miss`, `evicted`, `below-minimum`): Anthropic `none` (diagnostics null), OpenAI `cache_hit`;
 * - the model (`config-changed` at `model`): `model_changed`;
 * - tools (`tools-changed`, or a summarizer call that sends none): `tools_changed`;
 * - the system prompt: Anthropic `system_changed`; OpenAI `input_changed` (instructions are input);
 * - a message or input item: Anthropic `messages_changed`; OpenAI `input_changed`, or `context_compacted`
 *   for a summary; where the message is the same and a setting folded into its rendering changed
 *   (`config-changed`), Anthropic `unavailable` and OpenAI the setting's own reason.
 *
 * OpenAI reports a change as a miss only where it cost reuse, so a break that lost nothing may read
 * `cache_hit` there (`lostTokens` 0).
 */
export function expectedReasons(
  vendor: DiagnosisVendor,
  cause: BreakCause | undefined,
  node: string | undefined,
  lostTokens = 1,
): string[] {
  const reasons = changeReasons(vendor, cause, nodePart(node))
  return vendor === 'openai' && lostTokens === 0 && !reasons.includes('cache_hit')
    ? [...reasons, 'cache_hit']
    : reasons
}

function changeReasons(
  vendor: DiagnosisVendor,
  cause: BreakCause | undefined,
  part: string | undefined,
): string[] {
  const anthropic = vendor === 'anthropic'
  switch (part) {
    case undefined:
      return [anthropic ? 'none' : 'cache_hit']
    case 'model':
      return ['model_changed']
    case 'tools':
    case 'response_format':
      return ['tools_changed']
    case 'system':
      return [anthropic ? 'system_changed' : 'input_changed']
    default:
      if (cause === 'config-changed') return anthropic ? ['unavailable'] : [...OPENAI_SETTINGS]
      if (anthropic) return ['messages_changed']
      return cause !== undefined && SUMMARIES.has(cause)
        ? ['input_changed', 'context_compacted']
        : ['input_changed']
  }
}

/**
 * Whether a row's provider reason agrees with cachelab's cause (`expectedReasons`): `no-comparison` when
 * the provider compared nothing (it kept no record of the earlier request, had not finished, or could not
 * tell); undefined for a row without a provider reason.
 */
export function agreementOf(row: StepRow): 'agrees' | 'disagrees' | 'no-comparison' | undefined {
  const diagnosis = row.providerDiagnosis
  const vendor = diagnosisVendor(row.provider)
  if (diagnosis === undefined || vendor === undefined) return undefined
  const expected = expectedReasons(vendor, row.breakCause, row.breakNode, row.lostTokens)
  if (expected.includes(diagnosis.reason)) return 'agrees'
  return NO_COMPARISON.has(diagnosis.reason) ? 'no-comparison' : 'disagrees'
}

/** How a run's provider reasons compare with cachelab's causes. */
export interface DiagnosisTally {
  /** Rows with a provider reason. */
  diagnosed: number
  agree: number
  /** Rows whose provider reason names another change than cachelab's cause. */
  disagreements: StepRow[]
  /** Rows where the provider compared nothing. */
  noComparison: number
}

export function tallyDiagnoses(rows: readonly StepRow[]): DiagnosisTally {
  const tally: DiagnosisTally = { diagnosed: 0, agree: 0, disagreements: [], noComparison: 0 }
  for (const row of rows) {
    const agreement = agreementOf(row)
    if (agreement === undefined) continue
    tally.diagnosed += 1
    if (agreement === 'agrees') tally.agree += 1
    else if (agreement === 'disagrees') tally.disagreements.push(row)
    else tally.noComparison += 1
  }
  return tally
}

/** One disagreement as a line: where, cachelab's cause, the provider's reason. */
export function disagreementLine(row: StepRow): string {
  const cause = row.breakCause === undefined ? 'no break' : `${row.breakCause} at ${row.breakNode ?? '?'}`
  const missed = row.providerDiagnosis?.missedTokens
  return `${row.scenario}.${row.variant} ${row.provider} ${row.turn}.${row.step}: cachelab ${cause}; provider ${row.providerDiagnosis?.reason ?? '?'}${missed !== undefined ? ` (${missed} tokens missed)` : ''}`
}

/** The run summary's lines for the provider reasons, empty when no row has one. */
export function diagnosisSummary(rows: readonly StepRow[]): string[] {
  const tally = tallyDiagnoses(rows)
  if (tally.diagnosed === 0) return []
  const head = `provider diagnostics: ${tally.diagnosed} requests diagnosed, ${tally.agree} agree with cachelab's cause, ${tally.disagreements.length} disagree${tally.noComparison > 0 ? `, ${tally.noComparison} compared nothing` : ''}`
  return [head, ...tally.disagreements.map((row) => `  DISAGREES ${disagreementLine(row)}`)]
}
