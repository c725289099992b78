// The report.html section of the side-by-side: per session both loops ran, how many requests agree and a
// table of the steps where they do not, with each side's cache read and DSH's break event; then what the
// external loop could not express.

import type { Inexpressible, LoopName } from '../harness/loops/types.ts'
import type { LoopComparison } from './loops.ts'
import { escapeHtml } from './markup.ts'
import { countText } from './text-table.ts'

/** An inexpressible scenario event with the session it belongs to. */
export interface SessionInexpressible extends Inexpressible {
  sessionId: string
  loop: LoopName
}

function comparisonBlock(comparison: LoopComparison): string {
  const same = comparison.steps.filter((step) => step.agreement === 'same').length
  const differing = comparison.steps.filter((step) => step.agreement !== 'same')
  const title = `${comparison.scenario} · ${comparison.variant} · ${comparison.provider}`
  const head = `<h3>${escapeHtml(title)}</h3><p>${same} of ${comparison.steps.length} requests agree node for node.</p>`
  if (differing.length === 0) return head
  const rows = differing.map((step) =>
    [
      '<tr>',
      `<td class="num">${step.turn}.${step.step}${step.attempt > 0 ? `#${step.attempt}` : ''}</td>`,
      `<td class="label">${escapeHtml(step.agreement)}</td>`,
      `<td class="label"><code>${escapeHtml(step.firstDifference ?? '')}</code></td>`,
      `<td class="label">${escapeHtml(step.differingSettings.join(', '))}</td>`,
      `<td class="num">${step.model === undefined ? '' : countText(step.model.cacheReadTokens)}</td>`,
      `<td class="num">${step.dsh === undefined ? '' : countText(step.dsh.cacheReadTokens)}</td>`,
      `<td class="label">${escapeHtml(step.dsh?.breakCause ?? '')}${step.dsh?.breakEventType === undefined ? '' : ` <code>${escapeHtml(`${step.dsh.breakEventType} #${step.dsh.breakEventSeq}`)}</code>`}</td>`,
      '</tr>',
    ].join(''),
  )
  return [
    head,
    '<div class="table-scroll"><table>',
    '<thead><tr><th class="num">step</th><th>agreement</th><th>first differing node</th><th>differing settings</th><th class="num">model read</th><th class="num">DSH read</th><th>DSH break (event)</th></tr></thead>',
    `<tbody>${rows.join('')}</tbody>`,
    '</table></div>',
  ].join('\n')
}

/** The section: empty when the run compared no loops and nothing was inexpressible. */
export function loopsSection(
  comparisons: readonly LoopComparison[],
  inexpressible: readonly SessionInexpressible[],
): string {
  if (comparisons.length === 0 && inexpressible.length === 0) return ''
  const parts = ['<section>', '<h2>Model loop beside DSH’s loop</h2>']
  if (comparisons.length > 0) {
    parts.push(
      '<p class="note">Each request of cachelab’s model loop against the request DSH’s published loop sent at the same turn and step: the first prompt segment where they differ, and each side’s cache read.</p>',
      ...comparisons.map(comparisonBlock),
    )
  }
  if (inexpressible.length > 0) {
    const items = inexpressible.map(
      (entry) =>
        `<li><strong>${escapeHtml(`${entry.sessionId} (${entry.loop} loop)`)}</strong>: ${escapeHtml(entry.action)}${entry.turn > 0 ? ` after turn ${entry.turn}` : ''} — n/a: ${escapeHtml(entry.reason)}</li>`,
    )
    parts.push('<h3>Not expressible (n/a, never faked)</h3>', `<ul>${items.join('')}</ul>`)
  }
  parts.push('</section>')
  return parts.join('\n')
}
