// Rows that cannot be true: numbers the provider's own rules forbid, or a successful request the real API
// would have refused. The gate fails on them, so a report can never pass with an impossible row.

import { findModel, vendorOf } from '../providers/catalog.ts'
import type { RowProblem } from './gate.ts'
import { stepLabel } from './labels.ts'
import { sessionLabel } from './session-key.ts'
import type { StepRow } from './types.ts'

/** What is wrong with each impossible row, one line per problem, in row order. */
export function rowProblems(rows: readonly StepRow[]): string[] {
  return sessionRowProblems(rows).map((problem) => problem.text)
}

/** Each impossible row's problems, one per problem in row order, with the session the row is in. */
export function sessionRowProblems(rows: readonly StepRow[]): RowProblem[] {
  const problems: RowProblem[] = []
  for (const row of rows) {
    if (!row.ok) continue
    const where = `${sessionLabel(row)} ${stepLabel(row)}`
    const key = {
      scenario: row.scenario,
      variant: row.variant,
      provider: row.provider,
      ...(row.loop !== undefined ? { loop: row.loop } : {}),
    }
    for (const problem of problemsOf(row)) problems.push({ key, text: `${where}: ${problem}` })
  }
  return problems
}

function problemsOf(row: StepRow): string[] {
  const problems: string[] = []
  const ideal = row.idealCacheReadTokens
  if (row.cacheReadTokens + row.cacheWriteTokens + row.uncachedTokens !== row.inputTokens)
    problems.push('the input buckets do not sum to input_tokens')
  if (ideal < row.cacheReadTokens) problems.push(`ideal ${ideal} is below the read ${row.cacheReadTokens}`)
  if (row.lostTokens < 0 || row.lostTokens > row.inputTokens)
    problems.push(`lost_tokens ${row.lostTokens} is outside 0..input (${row.inputTokens})`)
  if (row.providerLostTokens < 0 || row.lostTokens + row.providerLostTokens > row.inputTokens)
    problems.push(
      `provider_lost_tokens ${row.providerLostTokens} with lost ${row.lostTokens} exceeds the input`,
    )
  const entry = findModel(vendorOf(row.provider), row.model)
  if (entry === undefined) return problems
  const rules = entry.cache
  switch (rules.kind) {
    case 'openai-prefix':
      if (ideal !== 0 && (ideal < rules.minTokens || (ideal - rules.minTokens) % rules.increment !== 0))
        problems.push(
          `ideal ${ideal} is neither 0 nor ${rules.minTokens} plus whole ${rules.increment}-token steps`,
        )
      break
    case 'anthropic':
    case 'openai-breakpoint':
    case 'gemini':
      if (ideal !== 0 && ideal < rules.minTokens)
        problems.push(`ideal ${ideal} is below the model's cache minimum of ${rules.minTokens}`)
      break
    case 'deepseek':
      break
  }
  if (row.provider === 'anthropic' && row.route === 'in-history' && entry.route !== 'in-history')
    problems.push(`${row.model} does not accept system messages in history, so the API refuses this request`)
  return problems
}
