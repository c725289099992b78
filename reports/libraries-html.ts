// The report.html section of the client libraries side by side: per session, one table row per loop
// (the reference first) with its warm hit ratio, lost tokens and dollars, cost against the reference,
// breakpoints sent, refusals, misread usage and the first wire node that differs from the reference;
// then the libraries that were absent, with the command that installs them.

import { REFERENCE_LOOP } from '../harness/loops/libraries/types.ts'
import type { LibraryComparison, LibraryReport } from './libraries.ts'
import { escapeHtml } from './markup.ts'
import { countText, dollarText, percentText, signedDollarText } from './text-table.ts'

function loopRow(entry: LibraryComparison): string {
  const difference =
    entry.loop === REFERENCE_LOOP
      ? 'reference'
      : entry.firstDifference === undefined
        ? `none (${entry.sameAsReference} of ${entry.requests} the same)`
        : `${entry.firstDifference.turn}.${entry.firstDifference.step} <code>${escapeHtml(entry.firstDifference.node)}</code>`
  return [
    '<tr>',
    `<td class="label wrap"><strong>${escapeHtml(entry.loop)}</strong><span class="sub">${escapeHtml(entry.versions)}</span><span class="sub">${escapeHtml(entry.caching)}</span></td>`,
    `<td class="num">${percentText(entry.warmHitRatio)}</td>`,
    `<td class="num">${countText(entry.lostTokens)}</td>`,
    `<td class="num">${dollarText(entry.lostUsd)}</td>`,
    `<td class="num">${entry.costVsReferenceUsd === undefined ? '' : signedDollarText(entry.costVsReferenceUsd)}</td>`,
    `<td class="label wrap">${breakpointsCell(entry)}</td>`,
    `<td class="label wrap">${entry.refused}${entry.firstRefusal === undefined ? '' : ` — ${escapeHtml(entry.firstRefusal)}`}</td>`,
    `<td class="label wrap">${entry.misread}${entry.firstMisread === undefined ? '' : ` — ${escapeHtml(entry.firstMisread)}`}</td>`,
    `<td class="label">${difference}</td>`,
    `<td class="label">${entry.breaks}${entry.firstBreak === undefined ? '' : ` — <code>${escapeHtml(entry.firstBreak)}</code>`}</td>`,
    '</tr>',
  ].join('')
}

/** Breakpoints sent, and where the library sent fewer than the loop asked for, how many and its warning. */
function breakpointsCell(entry: LibraryComparison): string {
  if (entry.droppedBreakpointRequests === 0) return String(entry.maxBreakpoints)
  const warning = entry.firstWarning === undefined ? '' : ` — warned: ${escapeHtml(entry.firstWarning)}`
  return `${entry.maxBreakpoints} of ${entry.maxBreakpointsRequested ?? '?'} asked; dropped on ${countText(entry.droppedBreakpointRequests)} ${entry.droppedBreakpointRequests === 1 ? 'request' : 'requests'}${warning}`
}

/** The section: empty when the run had no library loop. */
export function librariesSection(report: LibraryReport | undefined): string {
  if (report === undefined || (report.comparisons.length === 0 && report.absent.length === 0)) return ''
  const parts = [
    '<section id="libraries">',
    '<h2>Client libraries side by side</h2>',
    '<p class="note">Each library’s minimal agent loop ran the scenario script against a loopback serve, beside the official SDKs’ loop (the reference). Warm hit: cache-read tokens / input tokens of the requests after the first. Lost: tokens each request would have read had it extended the previous one. vs reference: cost minus the reference loop’s. Breakpoints: the most cache markers one request sent, and the most the loop asked for where the library dropped some. Refused: requests the real API would refuse. Misread: requests whose usage the library reported otherwise than the wire. First difference: the first request (turn.step) and wire node that differ from the reference’s request at the same position.</p>',
  ]
  const groups = new Map<string, LibraryComparison[]>()
  for (const entry of report.comparisons) {
    const key = `${entry.scenario} · ${entry.variant} · ${entry.provider}`
    groups.set(key, [...(groups.get(key) ?? []), entry])
  }
  for (const [title, entries] of groups) {
    parts.push(
      `<h3>${escapeHtml(title)}</h3>`,
      '<div class="table-scroll"><table>',
      '<thead><tr><th>loop, versions, caching</th><th class="num">warm hit</th><th class="num">lost tokens</th><th class="num">lost $</th><th class="num">vs reference</th><th class="num">breakpoints</th><th>refused</th><th>misread usage</th><th>first difference</th><th>breaks</th></tr></thead>',
      `<tbody>${entries.map(loopRow).join('')}</tbody>`,
      '</table></div>',
    )
  }
  if (report.absent.length > 0) {
    const items = report.absent.map(
      (library) =>
        `<li><strong>${escapeHtml(library.name)}</strong>: ${escapeHtml(library.reason)} — install: <code>${escapeHtml(library.install)}</code></li>`,
    )
    parts.push('<h3>Absent (skipped)</h3>', `<ul>${items.join('')}</ul>`)
  }
  parts.push('</section>')
  return parts.join('\n')
}
