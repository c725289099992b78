// The report.html section of coding agents side by side: per scenario, one table row per agent with its
// version, the warm hit ratio and its denominator, tokens and dollars lost, side conversations, cost
// against the cheapest agent, the first break (turn, node, cause, the scenario event before it) and, for
// an agent that could not run the scenario or failed, why.

import type { AgentRow } from './agents.ts'
import { escapeHtml } from './markup.ts'
import { countText, dollarText, percentText, signedDollarText } from './text-table.ts'

function agentLine(row: AgentRow): string {
  const ok = row.status === 'ok'
  const first = row.firstBreak
  const breakCell = !ok
    ? `<span class="sub">${escapeHtml(row.status)}</span>`
    : first === undefined
      ? 'none'
      : `turn ${first.turn} <code>${escapeHtml(first.node ?? '')}</code> ${escapeHtml(first.cause)} after <strong>${escapeHtml(first.event)}</strong>: ${countText(first.lostTokens)} tokens, ${dollarText(first.lostUsd)}`
  return [
    '<tr>',
    `<td class="label wrap"><strong>${escapeHtml(row.agent)}</strong><span class="sub">${escapeHtml(row.version)} (${escapeHtml(row.source)})</span></td>`,
    `<td class="num">${ok ? percentText(row.warmHitRatio) : ''}<span class="sub">${ok ? `of ${countText(row.warmInputTokens)}` : ''}</span></td>`,
    `<td class="num">${ok ? countText(row.lostTokens) : ''}</td>`,
    `<td class="num">${ok ? dollarText(row.lostUsd) : ''}</td>`,
    `<td class="num">${ok ? `${row.sideConversations}: ${dollarText(row.sideCostUsd)}` : ''}</td>`,
    `<td class="num">${row.vsBestUsd === undefined ? '' : signedDollarText(row.vsBestUsd)}</td>`,
    `<td class="label wrap">${breakCell}</td>`,
    `<td class="label wrap">${escapeHtml(row.note)}</td>`,
    '</tr>',
  ].join('')
}

/** The section: empty when the run drove no agent. */
export function agentsSection(rows: readonly AgentRow[] | undefined): string {
  if (rows === undefined || rows.length === 0) return ''
  const parts = [
    '<section id="agents">',
    '<h2>Coding agents side by side</h2>',
    '<p class="note">Each agent ran the scenario headless against a loopback serve, one process per turn, in a scratch home and workspace. Warm hit: cache-read tokens / input tokens of the requests after their conversation’s first (the denominator beneath). Lost: tokens the ideal would have read, client and provider side. Side: conversations beside the main one and what they cost. vs best: cost minus the cheapest agent on the scenario, each on its own default model. First break: the main conversation’s first, with the scenario event before its turn.</p>',
  ]
  const byScenario = new Map<string, AgentRow[]>()
  for (const row of rows) byScenario.set(row.scenario, [...(byScenario.get(row.scenario) ?? []), row])
  for (const [scenario, entries] of byScenario)
    parts.push(
      `<h3>${escapeHtml(scenario)}</h3>`,
      '<div class="table-scroll"><table>',
      '<thead><tr><th>agent, version</th><th class="num">warm hit</th><th class="num">lost tokens</th><th class="num">lost $</th><th class="num">side</th><th class="num">vs best</th><th>first break</th><th>note</th></tr></thead>',
      `<tbody>${entries.map(agentLine).join('')}</tbody>`,
      '</table></div>',
    )
  parts.push('</section>')
  return parts.join('\n')
}
