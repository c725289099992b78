// report.html: one self-contained page per run (inline CSS and SVG, no scripts, nothing fetched) that
// scales to hundreds of sessions: an index by scenario and provider, a breaks-only filter (a checkbox and
// CSS), the costliest breaks, the summary and the sessions worst first by lost dollars, quiet sessions
// collapsed and off-screen ones left unrendered by the browser (content-visibility), long sessions
// windowed around their breaks, a captured agent's conversations under their session. Same rows in, same
// bytes out.

import type { AgentRow } from './agents.ts'
import { agentsSection } from './agents-html.ts'
import { type BreakEvent, breakEventIndex } from './break-events.ts'
import { chartLegend } from './chart.ts'
import { CHANGE_STYLE, changeTargets } from './html-change.ts'
import {
  chipHint,
  groupChips,
  groupSection,
  groupsOf,
  indexChip,
  isSessionOfConversations,
} from './html-groups.ts'
import {
  breakCell,
  conversationHeading,
  dollars,
  type EventLookup,
  headRow,
  plural,
  rowLostUsd,
  type Session,
  type SessionGroup,
} from './html-parts.ts'
import { sessionSection } from './html-session.ts'
import { summarySection } from './html-summary.ts'
import { stepLabel } from './labels.ts'
import type { LibraryReport } from './libraries.ts'
import { librariesSection } from './libraries-html.ts'
import type { LoopComparison } from './loops.ts'
import { loopsSection, type SessionInexpressible } from './loops-html.ts'
import { escapeHtml } from './markup.ts'
import { type SessionKey, sessionKeyString, sessionLabel } from './session-key.ts'
import { IDLE_SECONDS, type RunRows } from './session-rows.ts'
import { countText } from './text-table.ts'
import type { ClaimResult, StepRow, SummaryRow } from './types.ts'

/** A session the run left out because its model cannot serve the variant. */
export interface LeftOut {
  scenario: string
  variant: string
  provider: string
  model: string
  reason: string
}

/** What a report shows. */
export interface ReportInput {
  /** Every request of the run, by session (`RunRows.of` a run's rows, or built as they arrive). */
  rows: RunRows
  /** The run's summary, one row per session. */
  summaries: readonly SummaryRow[]
  /** The run id, shown in the title. */
  runId: string
  /** The scenario claims evaluated on the run. */
  claims?: readonly ClaimResult[]
  /** Variants not applicable on the model they would run on (no rows, no numbers). */
  notApplicable?: readonly LeftOut[]
  /** The model loop beside DSH's loop, per session both ran. */
  comparisons?: readonly LoopComparison[]
  /** Scenario events an external loop could not express. */
  inexpressible?: readonly SessionInexpressible[]
  /** The session events the breaks name, described (`breakEventsOf`); without them a break shows its seq alone. */
  breakEvents?: readonly BreakEvent[]
  /** The client-library loops side by side. */
  libraries?: LibraryReport
  /** The coding agents side by side (agents.csv's rows). */
  agents?: readonly AgentRow[]
}

/** Breaks listed in the costliest-breaks table. */
const COSTLIEST_BREAKS = 20

const STYLE = `
:root { color-scheme: light; --text: #1d1d1f; --muted: #5f6368; --rule: #dcdce2; --panel: #f6f6f8; --break: #fff1e8; --break-strong: #D55E00; --fail: #b3261e; }
* { box-sizing: border-box; }
html { scroll-padding-top: 56px; }
body { margin: 0; color: var(--text); background: #fff; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1440px; margin: 0 auto; padding: 32px 24px 64px; }
h1 { font-size: 1.65rem; margin: 0 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 1.2rem; margin: 40px 0 8px; }
h3 { font-size: 1.05rem; margin: 0; display: inline; }
p { margin: 4px 0 12px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
a { color: #0b57d0; }
.meta, .note { color: var(--muted); }
.note { font-size: 0.85rem; max-width: 90ch; }
.table-scroll, .chart-scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; font-size: 0.9rem; }
th, td { padding: 6px 8px; text-align: left; vertical-align: top; border-bottom: 1px solid var(--rule); }
thead th { font-size: 0.78rem; font-weight: 600; color: var(--muted); border-bottom: 2px solid var(--rule); vertical-align: bottom; }
thead th.num, thead th.label { white-space: normal; }
.num, .label { text-align: right; white-space: nowrap; }
.label { text-align: left; }
td.wrap { white-space: normal; min-width: 10em; max-width: 18em; }
table.steps td { text-align: right; white-space: nowrap; }
table.steps td.label { text-align: left; }
table.steps td.wrap { white-space: normal; min-width: 30ch; max-width: 60ch; }
.sub { display: block; font-size: 0.75rem; color: var(--muted); }
tbody tr:hover { background: var(--panel); }
tr.break td { background: var(--break); }
tr.failed td { color: var(--muted); font-style: italic; }
tr.elided td { color: var(--muted); background: var(--panel); font-style: italic; text-align: left; }
.fail { color: var(--fail); }
.lost { color: #8a3200; font-weight: 600; }
td.wrap { white-space: normal; min-width: 28ch; }
.tag { display: inline-block; font-size: 0.72rem; font-style: normal; padding: 0 6px; border-radius: 8px; border: 1px solid currentColor; }
.toolbar { position: sticky; top: 0; z-index: 2; display: flex; flex-wrap: wrap; align-items: center; gap: 6px 20px; margin: 12px -24px 0; padding: 8px 24px; background: rgba(255,255,255,0.96); border-bottom: 1px solid var(--rule); font-size: 0.9rem; }
.toolbar label { font-weight: 600; cursor: pointer; display: flex; align-items: center; gap: 6px; }
.toolbar input { width: 16px; height: 16px; margin: 0; accent-color: var(--break-strong); }
.toolbar nav { display: flex; gap: 14px; }
main:has(#breaks-only:checked) .quiet { display: none; }
.index td { vertical-align: top; }
.index td.scenario { font-weight: 600; white-space: nowrap; }
.chips { display: flex; flex-wrap: wrap; gap: 4px; }
.chip { display: inline-flex; gap: 4px; align-items: baseline; padding: 1px 8px; border-radius: 10px; border: 1px solid var(--rule); background: #fff; font-size: 0.8rem; text-decoration: none; color: var(--text); white-space: nowrap; }
.chip.broke { background: var(--break); border-color: #f0b48c; }
.chip.broke b { color: #8a3200; }
.chip.failing { border-color: var(--fail); box-shadow: inset 0 0 0 1px var(--fail); }
.chip b { font-weight: 600; font-size: 0.75rem; }
.session { margin-top: 16px; padding-top: 12px; border-top: 1px solid var(--rule); }
.session > summary { list-style: none; cursor: pointer; }
.session > summary::-webkit-details-marker { display: none; }
.session > summary::before { content: "▸"; display: inline-block; width: 1.1em; color: var(--muted); }
.session[open] > summary::before { content: "▾"; }
.session > summary .meta { display: block; margin: 2px 0 0 1.1em; font-weight: normal; font-size: 0.9rem; }
.session-body { content-visibility: auto; contain-intrinsic-size: auto 520px; }
figure { margin: 12px 0 8px; }
svg.chart { display: block; max-width: 100%; height: auto; font-family: inherit; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; list-style: none; margin: 6px 0 0; padding: 0; font-size: 0.82rem; color: var(--muted); }
.legend li { display: flex; align-items: center; gap: 6px; }
.legend-box { position: sticky; top: 41px; z-index: 1; background: rgba(255,255,255,0.96); padding: 4px 0 6px; border-bottom: 1px solid var(--rule); }
details { margin-top: 12px; }
summary { cursor: pointer; font-weight: 600; }
h4 { font-size: 1rem; margin: 0; display: inline; }
.kind { display: inline-block; margin-right: 6px; padding: 0 7px; border-radius: 8px; font-size: 0.75rem; font-weight: 600; font-style: normal; line-height: 1.5; vertical-align: 0.08em; color: #174ea6; background: #e8f0fe; }
.kind-subagent { color: #0d652d; background: #e6f4ea; }
.kind-side { color: #6a1b9a; background: #f3e8fd; }
.kind-compaction { color: #7a4f01; background: #fef3d0; }
.chip.agent { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.75rem; font-weight: normal; color: var(--muted); background: var(--panel); vertical-align: 0.1em; }
.chip-group { display: inline-flex; flex-wrap: wrap; gap: 4px; padding: 3px; border: 1px dashed #c4c4cc; border-radius: 13px; }
.chip.session-chip { font-weight: 600; }
.chip .kind { margin-right: 0; font-size: 0.7rem; }
.conversations { margin-top: 16px; padding-top: 12px; border-top: 1px solid var(--rule); }
.conversations-head .meta { display: block; margin: 2px 0 0; font-size: 0.9rem; }
.conversations > .session { margin: 10px 0 0 1.1em; padding: 8px 0 0 12px; border-top: none; border-left: 3px solid var(--rule); }
.conversations > .session.broke { border-left-color: #f0b48c; }
tr.session-total td { font-weight: 600; border-top: 2px solid var(--rule); }
tr.session-total td .sub { font-weight: normal; }
tr.conversation td:nth-child(2) { padding-left: 24px; }
table.summary td.label .sub { white-space: normal; }
.nowrap { white-space: nowrap; }
footer { margin-top: 48px; padding-top: 16px; border-top: 1px solid var(--rule); }
footer p { max-width: 100ch; }
${CHANGE_STYLE}`

/** The report page. */
export function renderReport(input: ReportInput): string {
  return [...reportPieces(input)].join('\n')
}

/**
 * The report page written a piece at a time through `write` (the same text as `renderReport`): a run of
 * thousands of sessions makes a page of tens of megabytes, which need not be held as one string.
 */
export function writeReport(input: ReportInput, write: (text: string) => void): void {
  let first = true
  for (const piece of reportPieces(input)) {
    write(first ? piece : `\n${piece}`)
    first = false
  }
}

/** The pieces of the page, to be joined by newlines. */
function* reportPieces(input: ReportInput): Generator<string> {
  const sessions = sessionsOf(input)
  const groups = groupsOf(sessions)
  // A capture of agents counts conversations where a run counts sessions: each is its own line of requests.
  const grouped = groups.some(isSessionOfConversations)
  const unit = grouped ? 'conversation' : 'session'
  const hasLibraries = (input.libraries?.comparisons.length ?? 0) + (input.libraries?.absent.length ?? 0) > 0
  const eventOf = breakEventIndex(input.breakEvents ?? [])
  const worstFirst = [...groups].sort(worseFirst)
  const requests = input.rows.count
  const broken = sessions.filter((session) => session.breaks > 0).length
  const cost = sessions.reduce((total, session) => total + (session.summary?.costUsd ?? 0), 0)
  const lost = sessions.reduce((total, session) => total + session.lostUsd, 0)
  const title = `cachelab report: ${input.runId}`
  const counted = grouped
    ? `${groups.length} ${plural(groups.length, 'session')} of ${sessions.length} conversations`
    : `${sessions.length} ${plural(sessions.length, 'session')}`
  yield* [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    '<main>',
    '<header>',
    `<h1>cachelab report <code>${escapeHtml(input.runId)}</code></h1>`,
    `<p class="meta">${counted}, ${countText(requests)} ${plural(requests, 'request')}, ${dollars(cost, 4)} in all; ${broken} ${plural(broken, unit)} with breaks lost <span class="lost">${dollars(lost, 4)}</span>.</p>`,
    standInNotice(input.rows),
    '</header>',
    '<div class="toolbar">',
    `<label for="breaks-only"><input type="checkbox" id="breaks-only">Only ${unit}s with breaks (${broken} of ${sessions.length})</label>`,
    `<nav><a href="#index">Index</a><a href="#costliest">Costliest breaks</a><a href="#summary">Summary</a>${hasLibraries ? '<a href="#libraries">Libraries</a>' : ''}${(input.agents?.length ?? 0) > 0 ? '<a href="#agents">Agents</a>' : ''}<a href="#sessions">Sessions</a></nav>`,
    '</div>',
    indexSection(groups),
    costliestSection(sessions, groups, eventOf),
    summarySection(worstFirst),
    claimsSection(input.claims ?? []),
    notApplicableSection(input.notApplicable ?? []),
    librariesSection(input.libraries),
    agentsSection(input.agents),
    loopsSection(input.comparisons ?? [], input.inexpressible ?? []),
    '<section id="sessions">',
    '<h2>Sessions</h2>',
    `<p class="note">Worst first by the dollars their breaks lost. Sessions with breaks are open; the others open on a click. A session longer than the chart’s 200 columns draws the requests near its breaks one by one and its quiet stretches as lighter bars of their mean; its step table lists the requests near breaks and sums the rest (every request is in steps.csv).${grouped ? ' A captured agent’s session of several conversations is headed by their sums, its conversations under it: main, subagents, side requests, compactions.' : ''}</p>`,
    `<div class="legend-box">${chartLegend()}</div>`,
  ]
  // Each session's section is made as the page reaches it.
  for (const group of worstFirst) {
    const [only] = group.conversations
    yield only !== undefined && !isSessionOfConversations(group)
      ? sessionSection(only, eventOf)
      : groupSection(group, eventOf)
  }
  yield* [
    '</section>',
    '<footer>',
    '<p class="note">Input tokens are split into disjoint buckets: input = cache-read + cache-write + uncached. ',
    'Hit ratios are token-weighted (sums of cache-read tokens over sums of input tokens, never averages of per-request ratios) over successful requests; ',
    '“warm” leaves out each session’s first request, which starts cold. ',
    'Ideal read is what the provider’s own rules would have read had the request extended the previous one unchanged, from the same cache at the same time; lost = ideal read − read, what the client’s change cost. ',
    'Provider lost is what a warm cache would have read on top of that (nothing expired, no lookback window, the same machine): what an idle gap or the provider’s reach cost. ',
    'Ideal cost prices the lost tokens as cache reads; lost dollars are cost − ideal cost plus what the provider side cost. ',
    `Idle gaps of ${IDLE_SECONDS} seconds or more of virtual time are marked on the request axis.</p>`,
    '</footer>',
    '</main>',
    '</body>',
    '</html>',
    '',
  ]
}

/** What rests on a stand-in's prices (models the catalog lacks), model by model; nothing when none does. */
function standInNotice(rows: RunRows): string {
  const { uses, totalUsd } = rows.standIns()
  if (uses.length === 0) return ''
  const onStandIns = uses.reduce((sum, use) => sum + use.costUsd, 0)
  const each = uses.map(
    (use) =>
      `<code>${escapeHtml(use.model)}</code> priced as <code>${escapeHtml(use.standIn)}</code>: ${dollars(use.costUsd, 4)} (${countText(use.requests)} ${plural(use.requests, 'request')})`,
  )
  return `<p class="meta stand-in"><strong>${dollars(onStandIns, 4)} of ${dollars(totalUsd, 4)} rests on stand-in prices</strong>, models the catalog lacks: ${each.join('; ')}.</p>`
}

/** Sessions in summary order, then any that only have rows, each with its rows, summary and losses. */
function sessionsOf(input: ReportInput): Session[] {
  const rowsByKey = input.rows.bySession()
  const keys = new Map<
    string,
    { key: SessionKey; labels: Pick<StepRow, 'session' | 'conversationKind' | 'agent'> }
  >()
  const labelled = (row: SummaryRow | StepRow) => {
    const key = sessionKeyString(row)
    if (!keys.has(key))
      keys.set(key, {
        key: {
          scenario: row.scenario,
          variant: row.variant,
          provider: row.provider,
          ...(row.loop !== undefined ? { loop: row.loop } : {}),
        },
        labels: row,
      })
  }
  for (const summary of input.summaries) labelled(summary)
  for (const session of rowsByKey.values()) labelled(session.first)
  const summaries = new Map(input.summaries.map((summary) => [sessionKeyString(summary), summary]))
  return [...keys.entries()].map(([keyString, { key, labels }], index) => {
    const summary = summaries.get(keyString)
    const rows = rowsByKey.get(keyString)
    return {
      key,
      ...(labels.session !== undefined ? { session: labels.session } : {}),
      kind: labels.conversationKind ?? 'main',
      ...(labels.agent !== undefined ? { agent: labels.agent } : {}),
      order: index,
      anchor: `session-${index + 1}`,
      summary,
      rows,
      lostUsd:
        summary === undefined
          ? (rows?.lostUsd ?? 0)
          : summary.costUsd - summary.idealCostUsd + summary.providerLostUsd,
      breaks: summary?.breaks ?? rows?.breakRows.length ?? 0,
      claimsFailed: summary?.claimsFailed ?? 0,
    }
  })
}

/** Most lost dollars first, then most breaks, then failing claims; run order among equals. */
function worseFirst(left: SessionGroup, right: SessionGroup): number {
  return (
    right.lostUsd - left.lostUsd ||
    right.breaks - left.breaks ||
    right.claimsFailed - left.claimsFailed ||
    left.order - right.order
  )
}

/**
 * Scenarios down, providers across, each session a chip to its section, marked when it broke; a captured
 * agent's session of several conversations a group of chips: the session's totals, then each conversation
 * by its kind.
 */
function indexSection(groups: readonly SessionGroup[]): string {
  const scenarios = [...new Set(groups.map((group) => group.key.scenario))]
  const providers = [...new Set(groups.map((group) => group.key.provider))]
  const grouped = groups.some(isSessionOfConversations)
  const body = scenarios.map((scenario) => {
    const ofScenario = groups.filter((group) => group.key.scenario === scenario)
    const cells = providers.map((provider) => {
      const chips = ofScenario
        .filter((group) => group.key.provider === provider)
        .map((group) => {
          const [only] = group.conversations
          if (only === undefined || isSessionOfConversations(group)) return groupChips(group)
          // A loop other than the model's is named on its chip: the variants of several loops look alike.
          const loop = only.key.loop === undefined || only.key.loop === 'model' ? '' : ` · ${only.key.loop}`
          return indexChip(
            only,
            escapeHtml(`${only.key.variant}${loop}`),
            chipHint(sessionLabel(only.key), only),
          )
        })
      return `<td>${chips.length === 0 ? '<span class="meta">–</span>' : `<div class="chips">${chips.join('')}</div>`}</td>`
    })
    const quiet = ofScenario.every((group) => group.breaks === 0) ? ' class="quiet"' : ''
    return `<tr${quiet}><td class="scenario">${escapeHtml(scenario)}</td>${cells.join('')}</tr>`
  })
  return [
    '<section id="index">',
    '<h2>Index</h2>',
    `<p class="note">Each chip is a variant’s session on that provider, with its breaks and the dollars they lost; orange when it broke, outlined red when a claim that reads it fails.${grouped ? ' A dashed group is a captured agent’s session: its own chip with the sums, then one chip per conversation, labelled by kind (main, subagent, side, compaction).' : ''}</p>`,
    '<div class="table-scroll"><table class="index">',
    headRow([
      { title: 'scenario', numeric: false },
      ...providers.map((provider) => ({ title: provider, numeric: false })),
    ]),
    `<tbody>${body.join('\n')}</tbody>`,
    '</table></div>',
    '</section>',
  ].join('\n')
}

/** The run's most expensive breaks across sessions, with the event behind each. */
function costliestSection(
  sessions: readonly Session[],
  groups: readonly SessionGroup[],
  eventOf: EventLookup,
): string {
  const sessionOf = new Map(
    groups.flatMap((group) =>
      isSessionOfConversations(group) ? group.conversations.map((session) => [session, group] as const) : [],
    ),
  )
  // A conversation is named by its session, its kind and name under it.
  const label = (session: Session) => {
    const group = sessionOf.get(session)
    return group === undefined
      ? `<a href="#${session.anchor}">${escapeHtml(sessionLabel(session.key))}</a>`
      : `<a href="#${session.anchor}">${escapeHtml(sessionLabel(group.key))}</a><span class="sub">${conversationHeading(session)}</span>`
  }
  const breaks = sessions.flatMap((session) =>
    (session.rows?.breakRows ?? []).map((row) => ({
      session,
      row,
      lostUsd: rowLostUsd(row) + row.providerLostUsd,
    })),
  )
  if (breaks.length === 0)
    return '<section id="costliest"><h2>Costliest breaks</h2><p class="meta">No request broke the cache.</p></section>'
  const top = breaks
    .map((entry, order) => ({ ...entry, order }))
    .sort((left, right) => right.lostUsd - left.lostUsd || left.order - right.order)
    .slice(0, COSTLIEST_BREAKS)
  // Each break links to its change where its session's section draws it.
  const targets = new Map<Session, ReadonlyMap<StepRow, string>>()
  const changeOf = (session: Session, row: StepRow) => {
    let found = targets.get(session)
    if (found === undefined) {
      found = changeTargets(session.anchor, session.rows?.breakRows ?? [])
      targets.set(session, found)
    }
    return found.get(row)
  }
  const body = top.map(
    ({ session, row, lostUsd }) =>
      `<tr><td class="num lost">${dollars(lostUsd, 4)}</td><td class="num">${countText(row.lostTokens + row.providerLostTokens)}</td><td class="label">${label(session)}</td><td class="label">${escapeHtml(stepLabel(row))}</td><td class="label wrap">${breakCell(row, session.key, eventOf, session.rows?.switched.get(row), changeOf(session, row))}</td></tr>`,
  )
  return [
    '<section id="costliest">',
    '<h2>Costliest breaks</h2>',
    `<p class="note">The ${top.length} most expensive of the run’s ${breaks.length} ${plural(breaks.length, 'break')}, in dollars lost (the client’s change and the provider side together).</p>`,
    '<div class="table-scroll"><table>',
    headRow([
      { title: 'lost', numeric: true, note: 'USD' },
      { title: 'lost tokens', numeric: true },
      { title: 'session', numeric: false },
      { title: 'turn.step', numeric: false },
      { title: 'break', numeric: false, note: 'cause, node, event: what it did' },
    ]),
    `<tbody>${body.join('\n')}</tbody>`,
    '</table></div>',
    '</section>',
  ].join('\n')
}

/** Every claim evaluated on the run, failures first. */
function claimsSection(claims: readonly ClaimResult[]): string {
  if (claims.length === 0) return ''
  const order = { fails: 0, holds: 1, 'not-run': 2 } as const
  const sorted = [...claims].sort((left, right) => order[left.status] - order[right.status])
  const held = claims.filter((claim) => claim.status === 'holds').length
  const failed = claims.filter((claim) => claim.status === 'fails').length
  const body = sorted.map((claim) => {
    const status =
      claim.status === 'fails'
        ? '<strong class="fail">fails</strong>'
        : claim.status === 'holds'
          ? 'holds'
          : '<span class="meta">not run</span>'
    return `<tr${claim.status === 'fails' ? ' class="break"' : ''}><td class="label">${status}</td><td class="label">${escapeHtml(claim.scenario)}<span class="sub">${escapeHtml(claim.variants.join(', '))}</span></td><td class="label">${escapeHtml(claim.provider)}</td><td class="label wrap">${escapeHtml(claim.text)}</td><td class="label wrap">${escapeHtml(claim.observed)}</td></tr>`
  })
  return [
    '<section>',
    '<h2>Claims</h2>',
    `<p class="meta">${held} of ${claims.length} hold${failed > 0 ? `, <strong class="fail">${failed} fail</strong>` : ''}. Each scenario’s “demonstrates” sentence, checked on this run’s rows.</p>`,
    // Open when something fails; a run where every claim holds keeps the table a click away.
    `<details${failed > 0 ? ' open' : ''}><summary>Every claim (${claims.length})</summary>`,
    '<div class="table-scroll"><table>',
    headRow([
      { title: 'status', numeric: false },
      { title: 'scenario', numeric: false, note: 'variants read' },
      { title: 'provider', numeric: false },
      { title: 'claim', numeric: false },
      { title: 'observed', numeric: false },
    ]),
    `<tbody>${body.join('\n')}</tbody>`,
    '</table></div>',
    '</details>',
    '</section>',
  ].join('\n')
}

/** Variants the run left out, with why: never a number for a request the model would refuse. */
function notApplicableSection(entries: readonly LeftOut[]): string {
  if (entries.length === 0) return ''
  const items = entries.map(
    (entry) =>
      `<li><strong>${escapeHtml(`${entry.scenario} · ${entry.variant} · ${entry.provider}`)}</strong> on ${escapeHtml(entry.model)}: ${escapeHtml(entry.reason)}</li>`,
  )
  return ['<section>', '<h2>Not applicable</h2>', `<ul>${items.join('')}</ul>`, '</section>'].join('\n')
}
