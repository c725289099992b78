// Breaks: the step rows that name a cause, as the compact, reviewable list a baseline keeps for every
// session (long ones included) and the gate compares step by step.

import { modelSwitchText, providerAdvice, stepLabel } from './labels.ts'
import { sessionKeyString, sessionLabel } from './session-key.ts'
import { countText, dollarText } from './text-table.ts'
import type { BreakRow, StepRow } from './types.ts'

/** The breaks among step rows, in row order: successful requests with a client-side or provider-side cause. */
export function breaksOf(rows: readonly StepRow[]): BreakRow[] {
  const list = new BreakList()
  for (const row of rows) list.add(row)
  return list.rows
}

/** The breaks of rows added one at a time, in row order; holds each session's last model, not its rows. */
export class BreakList {
  readonly rows: BreakRow[] = []
  /** The model of each session's last successful request. */
  private readonly latest = new Map<string, string>()

  add(row: StepRow): void {
    if (!row.ok) return
    const key = sessionKeyString(row)
    const previous = this.latest.get(key)
    this.latest.set(key, row.model)
    if (row.breakCause === undefined && row.providerCause === undefined) return
    this.rows.push(breakRowOf(row, previous !== undefined && previous !== row.model ? previous : undefined))
  }
}

/** A break row of a step row, with the model the session used before it when it switched. */
function breakRowOf(row: StepRow, previousModel: string | undefined): BreakRow {
  return {
    scenario: row.scenario,
    variant: row.variant,
    provider: row.provider,
    model: row.model,
    turn: row.turn,
    step: row.step,
    attempt: row.attempt,
    cause: row.breakCause,
    node: row.breakNode,
    eventSeq: row.breakEventSeq,
    lostTokens: row.lostTokens,
    lostUsd: row.costUsd - row.idealCostUsd,
    providerCause: row.providerCause,
    providerLostTokens: row.providerLostTokens,
    providerLostUsd: row.providerLostUsd,
    inputTokens: row.inputTokens,
    cacheReadTokens: row.cacheReadTokens,
    ...(row.loop !== undefined ? { loop: row.loop } : {}),
    ...(row.session !== undefined ? { session: row.session } : {}),
    ...(row.conversationKind !== undefined ? { conversationKind: row.conversationKind } : {}),
    ...optionalModel(previousModel),
  }
}

function optionalModel(previousModel: string | undefined): { previousModel?: string } {
  return previousModel === undefined ? {} : { previousModel }
}

/** Every token a break cost: the client's change and the provider side together. */
export function breakTokens(entry: Pick<BreakRow, 'lostTokens' | 'providerLostTokens'>): number {
  return entry.lostTokens + entry.providerLostTokens
}

/**
 * A break as one line: session (and the conversation's kind, where not main), turn.step, cause, node (and
 * the two models of a switch), event, tokens and dollars on each side.
 */
export function breakLine(entry: BreakRow): string {
  const parts: string[] = []
  if (entry.cause !== undefined && entry.cause !== entry.providerCause) {
    const node = entry.node === undefined ? '' : ` at ${entry.node}`
    const models =
      entry.previousModel === undefined ? '' : ` ${modelSwitchText(entry.previousModel, entry.model)}`
    const event = entry.eventSeq === undefined ? '' : ` (event ${entry.eventSeq})`
    parts.push(
      `${entry.cause}${node}${models}${event}, ${countText(entry.lostTokens)} tokens lost (${dollarText(entry.lostUsd)})`,
    )
  }
  if (entry.providerCause !== undefined) {
    const advice = providerAdvice(entry)
    parts.push(
      `${entry.providerCause} on the provider side, ${countText(entry.providerLostTokens)} tokens (${dollarText(entry.providerLostUsd)})${advice === undefined ? '' : `; ${advice}`}`,
    )
  }
  const kind =
    entry.conversationKind === undefined || entry.conversationKind === 'main'
      ? ''
      : ` (${entry.conversationKind})`
  return `${sessionLabel(entry)}${kind} ${stepLabel(entry)}: ${parts.join('; ')}`
}
