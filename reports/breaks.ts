// Breaks: the step rows that name a cause, as the compact, reviewable list a baseline keeps for every
// session (long ones included) and the gate compares step by step.

import { changeLines } from './break-change.ts'
import { modelSwitchText, providerAdvice, stepLabel } from './labels.ts'
import { sessionKeyString, sessionLabel } from './session-key.ts'
import { countText, dollarText } from './text-table.ts'
import type { BreakRow, CompactionCost, StepRow } from './types.ts'

/**
 * The breaks among step rows, in row order: successful requests with a client-side or provider-side cause;
 * a `history-summarized` break carries what its compaction's summary requests cost (`compactionOf`).
 */
export function breaksOf(rows: readonly StepRow[]): BreakRow[] {
  const list = new BreakList()
  for (const row of rows) list.add(row)
  const summarized = list.rows.filter((entry) => entry.cause === 'history-summarized')
  if (summarized.length === 0) return list.rows
  return list.rows.map((entry) => {
    if (!summarized.includes(entry)) return entry
    const compaction = compactionOf(rows, entry)
    return compaction === undefined ? entry : { ...entry, compaction }
  })
}

/**
 * The compaction behind a `history-summarized` break: the requests of its session's compaction conversation
 * that came last before it (by time), whatever order the rows are in (a capture's report reads one
 * conversation's file at a time).
 */
function compactionOf(rows: readonly StepRow[], entry: BreakRow): CompactionCost | undefined {
  const broken = rows.find(
    (row) =>
      row.variant === entry.variant &&
      row.scenario === entry.scenario &&
      row.provider === entry.provider &&
      row.turn === entry.turn &&
      row.step === entry.step &&
      row.attempt === entry.attempt,
  )
  if (broken === undefined) return undefined
  const candidates = rows.filter(
    (row) =>
      row.ok &&
      row.conversationKind === 'compaction' &&
      // A session's main conversation is named as its session, and its rows name no other.
      row.session === (entry.session ?? entry.variant) &&
      row.scenario === entry.scenario &&
      row.provider === entry.provider &&
      row.virtualTimeS <= broken.virtualTimeS,
  )
  const latest = candidates.reduce<StepRow | undefined>(
    (best, row) => (best === undefined || row.virtualTimeS > best.virtualTimeS ? row : best),
    undefined,
  )
  if (latest === undefined) return undefined
  const requests = candidates.filter((row) => row.variant === latest.variant)
  return {
    requests: requests.length,
    inputTokens: requests.reduce((sum, row) => sum + row.inputTokens, 0),
    cacheReadTokens: requests.reduce((sum, row) => sum + row.cacheReadTokens, 0),
    cacheWriteTokens: requests.reduce((sum, row) => sum + row.cacheWriteTokens, 0),
    costUsd: requests.reduce((sum, row) => sum + row.costUsd, 0),
  }
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
    ...(row.breakChange !== undefined ? { change: row.breakChange } : {}),
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
  if (entry.compaction !== undefined) {
    const { requests, inputTokens, cacheReadTokens, cacheWriteTokens, costUsd } = entry.compaction
    const what = requests === 1 ? 'its summary request' : `its ${requests} summary requests`
    parts.push(
      `${what} read ${countText(cacheReadTokens)} of ${countText(inputTokens)} tokens from the cache and wrote ${countText(cacheWriteTokens)} never read (${dollarText(costUsd)})`,
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

/**
 * A break as its line (`breakLine`) and, under it, what changed there as a test runner shows it
 * (`changeLines`), each line after the first indented further; `indent` goes before every line.
 */
export function breakLines(entry: BreakRow, indent = '  '): string[] {
  const change = entry.change === undefined ? [] : changeLines(entry.change)
  return [`${indent}${breakLine(entry)}`, ...change.map((line) => `${indent}    ${line}`)]
}
