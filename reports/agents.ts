// Coding agents side by side: per agent and scenario what its requests did to the cache and the bill
// (warm hit ratio with its denominator, tokens and dollars lost against the ideal, side conversations and
// their cost), its first break in the main conversation (node, cause, the scenario event behind it) and
// its cost against the cheapest agent on the same scenario. Written as agents.csv (agent-steps.csv is the
// capture's rows), summed up in at most 100 columns, and gated against a baseline.

import { stringify } from 'csv-stringify/sync'
import { parseCsv } from './parse.ts'
import { alignedTable, countText, dollarText, percentText, signedDollarText } from './text-table.ts'
import type { StepRow } from './types.ts'

/** One agent session of a scenario, as the run hands it over. */
export interface AgentSessionRecord {
  /** The driver's name (`opencode`). */
  agent: string
  /** The version that ran. */
  version: string
  /** Where the agent came from: the one on PATH or the cache folder (pinned, or the version asked for). */
  source: 'path' | 'cache'
  scenario: string
  /** `n/a`: the agent cannot do one of the scenario's events headless (`note` says which and why). */
  status: 'ok' | 'n/a' | 'failed'
  /** The captured rows, in capture order. */
  rows: readonly StepRow[]
  /** The scenario turn (from 1) each row was sent during; `turnOf[i]` belongs to `rows[i]`. */
  turnOf: readonly number[]
  /** The events before each scenario turn (index 0 is turn 1). */
  events: ReadonlyArray<readonly string[]>
  /** Why the API refused requests of the session, in order. */
  refusals: readonly string[]
  /** The n/a reason, or how the agent failed. */
  note?: string
}

/** The first break of a session's main conversation. */
export interface AgentBreak {
  /** The scenario turn it happened in. */
  turn: number
  node: string | undefined
  cause: string
  /** The events before that turn (`memory-edit`), `resume` for a continued turn without one, `start`. */
  event: string
  /** Tokens it lost (client side and provider side) and what they cost. */
  lostTokens: number
  lostUsd: number
}

/** One line of agents.csv. */
export interface AgentRow {
  agent: string
  version: string
  source: string
  scenario: string
  status: 'ok' | 'n/a' | 'failed'
  requests: number
  /** cache read / input over successful requests that are not their conversation's first. */
  warmHitRatio: number | undefined
  /** The denominator: the input tokens of those requests. */
  warmInputTokens: number
  /** Tokens the ideal would have read and the session did not (client and provider side). */
  lostTokens: number
  lostUsd: number
  costUsd: number
  /** Conversations beside the main one (subagents, side requests, compactions), and what they cost. */
  sideConversations: number
  sideCostUsd: number
  firstBreak: AgentBreak | undefined
  /** Cost minus the cheapest ok agent's on the same scenario; undefined unless ok. */
  vsBestUsd: number | undefined
  refused: number
  note: string
}

const isMain = (row: StepRow) => (row.conversationKind ?? 'main') === 'main'

/** The scenario event behind a break in `turn`. */
export function eventOf(record: Pick<AgentSessionRecord, 'events'>, turn: number): string {
  const events = record.events[turn - 1] ?? []
  if (events.length > 0) return events.join('+')
  return turn > 1 ? 'resume' : 'start'
}

/** One session's line, before the comparison with the other agents. */
export function agentRow(record: AgentSessionRecord): AgentRow {
  const ok = record.rows.filter((row) => row.ok)
  const warm = ok.filter((row) => !row.cold)
  const warmInputTokens = warm.reduce((sum, row) => sum + row.inputTokens, 0)
  const warmRead = warm.reduce((sum, row) => sum + row.cacheReadTokens, 0)
  const lost = (row: StepRow) => row.lostTokens + row.providerLostTokens
  const lostUsd = (row: StepRow) => row.costUsd - row.idealCostUsd + row.providerLostUsd
  const side = ok.filter((row) => !isMain(row))
  let firstBreak: AgentBreak | undefined
  for (const [index, row] of record.rows.entries()) {
    if (!row.ok || !isMain(row)) continue
    const cause = row.breakCause ?? (row.providerLostTokens > 0 ? row.providerCause : undefined) ?? undefined
    if (cause === undefined) continue
    const turn = record.turnOf[index] ?? 0
    firstBreak = {
      turn,
      node: row.breakNode,
      cause,
      event: eventOf(record, turn),
      lostTokens: lost(row),
      lostUsd: lostUsd(row),
    }
    break
  }
  return {
    agent: record.agent,
    version: record.version,
    source: record.source,
    scenario: record.scenario,
    status: record.status,
    requests: record.rows.length,
    warmHitRatio: warmInputTokens > 0 ? warmRead / warmInputTokens : undefined,
    warmInputTokens,
    lostTokens: ok.reduce((sum, row) => sum + lost(row), 0),
    lostUsd: ok.reduce((sum, row) => sum + lostUsd(row), 0),
    costUsd: ok.reduce((sum, row) => sum + row.costUsd, 0),
    sideConversations: new Set(side.map((row) => row.variant)).size,
    sideCostUsd: side.reduce((sum, row) => sum + row.costUsd, 0),
    firstBreak,
    vsBestUsd: undefined,
    refused: record.refusals.length,
    // The API's refusal first: an agent that fails after one usually fails because of it.
    note: [
      ...(record.refusals.length > 0 ? [`refused: ${record.refusals[0]}`] : []),
      ...(record.note !== undefined ? [record.note] : []),
    ].join('; '),
  }
}

/** Every session's line, each ok one with its cost against the cheapest ok agent on its scenario. */
export function compareAgents(records: readonly AgentSessionRecord[]): AgentRow[] {
  const rows = records.map(agentRow)
  const best = new Map<string, number>()
  for (const row of rows)
    if (row.status === 'ok')
      best.set(row.scenario, Math.min(best.get(row.scenario) ?? Number.POSITIVE_INFINITY, row.costUsd))
  return rows.map((row) =>
    row.status === 'ok' ? { ...row, vsBestUsd: row.costUsd - (best.get(row.scenario) ?? row.costUsd) } : row,
  )
}

/** The agents.csv columns, in order. */
export const AGENT_COLUMNS = [
  'agent',
  'version',
  'source',
  'scenario',
  'status',
  'requests',
  'warm_hit_ratio',
  'warm_input_tokens',
  'lost_tokens',
  'lost_usd',
  'cost_usd',
  'side_conversations',
  'side_cost_usd',
  'break_turn',
  'break_node',
  'break_cause',
  'break_event',
  'break_lost_tokens',
  'break_lost_usd',
  'vs_best_usd',
  'refused',
  'note',
] as const

const fixed = (value: number | undefined, digits: number) =>
  value === undefined ? '' : value.toFixed(digits)

/** agents.csv: one line per agent and scenario, in the order given. */
export function agentsCsv(rows: readonly AgentRow[]): string {
  return stringify([
    [...AGENT_COLUMNS],
    ...rows.map((row) => [
      row.agent,
      row.version,
      row.source,
      row.scenario,
      row.status,
      String(row.requests),
      fixed(row.warmHitRatio, 6),
      String(row.warmInputTokens),
      String(row.lostTokens),
      fixed(row.lostUsd, 8),
      fixed(row.costUsd, 8),
      String(row.sideConversations),
      fixed(row.sideCostUsd, 8),
      row.firstBreak === undefined ? '' : String(row.firstBreak.turn),
      row.firstBreak?.node ?? '',
      row.firstBreak?.cause ?? '',
      row.firstBreak?.event ?? '',
      row.firstBreak === undefined ? '' : String(row.firstBreak.lostTokens),
      fixed(row.firstBreak?.lostUsd, 8),
      fixed(row.vsBestUsd, 8),
      String(row.refused),
      row.note,
    ]),
  ])
}

/** agents.csv read back; a file without its columns is an error naming it. */
export function parseAgentsCsv(text: string, file: string): AgentRow[] {
  const records = parseCsv(text)
  const head = text.split('\n', 1)[0] ?? ''
  for (const column of ['agent', 'scenario', 'status', 'lost_tokens', 'break_cause'])
    if (!head.split(',').includes(column))
      throw new Error(`${file} is not an agents.csv: no ${column} column`)
  const number = (value: string | undefined) =>
    value === undefined || value === '' ? undefined : Number(value)
  return records.map((record) => {
    const cause = record.break_cause ?? ''
    return {
      agent: record.agent ?? '',
      version: record.version ?? '',
      source: record.source ?? '',
      scenario: record.scenario ?? '',
      status: (record.status ?? 'ok') as AgentRow['status'],
      requests: number(record.requests) ?? 0,
      warmHitRatio: number(record.warm_hit_ratio),
      warmInputTokens: number(record.warm_input_tokens) ?? 0,
      lostTokens: number(record.lost_tokens) ?? 0,
      lostUsd: number(record.lost_usd) ?? 0,
      costUsd: number(record.cost_usd) ?? 0,
      sideConversations: number(record.side_conversations) ?? 0,
      sideCostUsd: number(record.side_cost_usd) ?? 0,
      firstBreak:
        cause === ''
          ? undefined
          : {
              turn: number(record.break_turn) ?? 0,
              node: record.break_node === '' ? undefined : record.break_node,
              cause,
              event: record.break_event ?? '',
              lostTokens: number(record.break_lost_tokens) ?? 0,
              lostUsd: number(record.break_lost_usd) ?? 0,
            },
      vsBestUsd: number(record.vs_best_usd),
      refused: number(record.refused) ?? 0,
      note: record.note ?? '',
    }
  })
}

const clip = (text: string, width: number) => (text.length <= width ? text : `${text.slice(0, width - 1)}…`)

/** The first break in a few words: `system-replace at system[0] (memory-edit)`. */
export function breakText(found: AgentBreak | undefined): string {
  if (found === undefined) return 'none'
  return `${found.cause}${found.node !== undefined ? ` at ${found.node}` : ''} (${found.event})`
}

/** The side by side for the terminal, every line at most 100 columns: a table per scenario, then each break. */
export function agentsSummaryLines(rows: readonly AgentRow[]): string[] {
  const columns = [
    { title: 'agent', align: 'left' },
    { title: 'warm hit', align: 'right' },
    { title: 'of tokens', align: 'right' },
    { title: 'lost tok', align: 'right' },
    { title: 'lost $', align: 'right' },
    { title: 'side $', align: 'right' },
    { title: 'vs best $', align: 'right' },
    { title: 'first break', align: 'left' },
  ] as const
  const cells = rows.map((row) =>
    row.status !== 'ok'
      ? [`  ${row.agent}`, row.status, '', '', '', '', '', '(below)']
      : [
          `  ${row.agent}`,
          percentText(row.warmHitRatio),
          countText(row.warmInputTokens),
          countText(row.lostTokens),
          dollarText(row.lostUsd),
          `${row.sideConversations}:${dollarText(row.sideCostUsd)}`,
          row.vsBestUsd === undefined ? '-' : signedDollarText(row.vsBestUsd),
          row.firstBreak?.cause ?? 'none',
        ],
  )
  const [head = '', rule = '', ...body] = alignedTable(columns, cells).split('\n')
  const lines = [clip(head, 100), clip(rule, 100)]
  for (const scenario of new Set(rows.map((row) => row.scenario))) {
    lines.push(scenario)
    for (const [index, row] of rows.entries())
      if (row.scenario === scenario) lines.push(clip(body[index] ?? '', 100))
  }
  const broken = rows.flatMap((row) => (row.firstBreak === undefined ? [] : [{ row, found: row.firstBreak }]))
  if (broken.length > 0) {
    const breakColumns = [
      { title: 'first break', align: 'left' },
      { title: 'scenario', align: 'left' },
      { title: 'turn', align: 'right' },
      { title: 'node', align: 'left' },
      { title: 'after', align: 'left' },
      { title: 'tokens', align: 'right' },
      { title: '$', align: 'right' },
    ] as const
    const table = alignedTable(
      breakColumns,
      broken.map(({ row, found }) => [
        `  ${row.agent}`,
        clip(row.scenario, 14),
        String(found.turn),
        clip(found.node ?? '-', 22),
        clip(found.event, 14),
        countText(found.lostTokens),
        dollarText(found.lostUsd),
      ]),
    )
    lines.push(...table.split('\n').map((line) => clip(line, 100)))
  }
  for (const row of rows) {
    if (row.status !== 'ok') lines.push(clip(`${row.status} ${row.agent}/${row.scenario}: ${row.note}`, 100))
    else if (row.refused > 0) lines.push(clip(`refused ${row.agent}/${row.scenario}: ${row.note}`, 100))
  }
  const versions = [...new Set(rows.map((row) => `${row.agent} ${row.version} (${row.source})`))]
  lines.push(clip(`versions: ${versions.join(', ')}`, 100))
  return lines
}

/** One way a run's agents.csv is worse than the baseline's. */
export interface AgentFinding {
  agent: string
  scenario: string
  text: string
}

/**
 * The agents gate: every (agent, scenario) of the baseline must be in the run with the same status; a
 * first break that is new, or lost tokens (its own or the session's) that grew, by at least
 * `thresholdTokens` fail it. A different version is said, not failed: gating a release is the point.
 */
export function gateAgents(
  baseline: readonly AgentRow[],
  run: readonly AgentRow[],
  thresholdTokens: number,
): { findings: AgentFinding[]; notes: string[] } {
  const findings: AgentFinding[] = []
  const notes: string[] = []
  const key = (row: AgentRow) => `${row.agent}\u0000${row.scenario}`
  const byKey = new Map(run.map((row) => [key(row), row]))
  for (const before of baseline) {
    const after = byKey.get(key(before))
    const fail = (text: string) => findings.push({ agent: before.agent, scenario: before.scenario, text })
    if (after === undefined) {
      fail('missing from the run')
      continue
    }
    if (after.version !== before.version) notes.push(`${before.agent}: ${before.version} → ${after.version}`)
    if (after.status !== before.status) {
      fail(`was ${before.status}, now ${after.status}${after.note !== '' ? `: ${after.note}` : ''}`)
      continue
    }
    if (after.status !== 'ok') continue
    const grown = (was: number, now: number) => now - was >= thresholdTokens
    if (before.firstBreak === undefined && after.firstBreak !== undefined) {
      if (after.firstBreak.lostTokens >= thresholdTokens)
        fail(
          `new break: ${breakText(after.firstBreak)}, ${countText(after.firstBreak.lostTokens)} tokens lost`,
        )
    } else if (
      before.firstBreak !== undefined &&
      after.firstBreak !== undefined &&
      grown(before.firstBreak.lostTokens, after.firstBreak.lostTokens)
    )
      fail(
        `break grew: ${breakText(after.firstBreak)} lost ${countText(after.firstBreak.lostTokens)} tokens, was ${countText(before.firstBreak.lostTokens)}`,
      )
    if (grown(before.lostTokens, after.lostTokens))
      fail(`lost ${countText(after.lostTokens)} tokens, was ${countText(before.lostTokens)}`)
  }
  return { findings, notes }
}
