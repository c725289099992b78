// The gate's verdict in GitHub Actions' own surfaces: workflow commands that annotate the run (`::error`
// per failure, a `::notice` per group of changes or notes) and a Markdown table for the job's step
// summary. GitHub shows only the first ten errors of a step, so beyond nine the rest are one annotation
// that counts them; the summary lists every failure.

import { type Finding, findingKey, type GateResult } from './gate.ts'
import { findingLines, unmatchedAdvice } from './gate-text.ts'
import { selectionText } from './plan.ts'
import { sessionLabel } from './session-key.ts'
import { countText } from './text-table.ts'

/** Error annotations a step shows: the last one says how many more there are. */
const ANNOTATED_ERRORS = 10

/** What the GitHub reporter writes: the workflow commands (for the log) and the step summary's Markdown. */
export interface GithubOutput {
  /** `::error title=…::…` lines, one per failure, and notices; each ends with a newline. */
  commands: string
  /** Markdown for `$GITHUB_STEP_SUMMARY`: the verdict, a table of the failures, the changes folded. */
  summary: string
}

/** The verdict as workflow commands and a step summary. */
export function gateGithub(result: GateResult, notices: readonly string[] = []): GithubOutput {
  const commands: string[] = []
  const errors = result.options.strict ? [...result.failures, ...result.changes] : result.failures
  const annotated = errors.length > ANNOTATED_ERRORS ? errors.slice(0, ANNOTATED_ERRORS - 1) : errors
  for (const finding of annotated) commands.push(command('error', titleOf(finding), findingLines(finding)))
  if (annotated.length < errors.length)
    commands.push(
      command('error', 'cachelab check', [
        `… and ${errors.length - annotated.length} more failures: every one is in the step summary`,
      ]),
    )
  for (const entry of result.unmatched)
    commands.push(
      command('error', `cachelab: ${entry.scenario} on ${entry.provider} not matched`, [
        unmatchedAdvice(entry),
      ]),
    )
  if (!result.options.strict)
    for (const [name, group] of groups(result.changes))
      commands.push(
        command('notice', `cachelab: ${group.length} ${name}`, [
          'changed — refresh the baseline if intended:',
          ...group.slice(0, 3).map((finding) => findingLines(finding)[0] ?? ''),
          ...(group.length > 3 ? [`… and ${group.length - 3} more`] : []),
        ]),
      )
  for (const [name, group] of groups(result.notes))
    commands.push(
      command(
        'notice',
        `cachelab: ${group.length} ${name}`,
        group.map((finding) => findingLines(finding)[0] ?? ''),
      ),
    )
  for (const notice of notices) commands.push(command('notice', 'cachelab check', [notice]))
  return { commands: commands.map((line) => `${line}\n`).join(''), summary: summary(result, errors) }
}

/** A workflow command: its properties and message escaped as GitHub's toolkit escapes them. */
function command(kind: 'error' | 'warning' | 'notice', title: string, lines: readonly string[]): string {
  return `::${kind} title=${escapeProperty(title)}::${escapeData(lines.join('\n'))}`
}

function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
}

function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C')
}

/** An annotation's title: what failed, and in which session. */
function titleOf(finding: Finding): string {
  const key = findingKey(finding)
  const what =
    finding.kind === 'claim'
      ? `claim ${finding.claim.claim} · ${finding.claim.scenario} · ${finding.claim.provider}`
      : finding.kind
  return `cachelab: ${key === undefined ? what : `${finding.kind} · ${sessionLabel(key)}`}`
}

/** Findings by kind, in first-seen order. */
function groups(findings: readonly Finding[]): Map<string, Finding[]> {
  const grouped = new Map<string, Finding[]>()
  for (const finding of findings) grouped.set(finding.kind, [...(grouped.get(finding.kind) ?? []), finding])
  return grouped
}

/** The step summary: a heading with the verdict, the failures as a table, the changes and notes folded. */
function summary(result: GateResult, errors: readonly Finding[]): string {
  const { outside, plan } = result.scope
  const failing = result.sessions.filter((session) => session.status === 'fails').length
  const verdict = result.passed
    ? `holds: ${result.checked} of ${result.checked} baseline sessions`
    : `fails: ${errors.length} failures in ${failing} of ${result.checked} baseline sessions`
  const flags = plan === undefined ? '' : selectionText(plan.selection)
  const lines = [`### cachelab check ${verdict}`, '']
  if (outside.length > 0)
    lines.push(
      `${countText(outside.length)} more baseline sessions are outside the run's plan${flags === '' ? '' : ` (run \`${flags}\`)`}: not checked.`,
      '',
    )
  if (errors.length > 0) {
    lines.push('| session | failure |', '| --- | --- |')
    for (const finding of errors) {
      const key = findingKey(finding)
      const label = key === undefined ? '' : sessionLabel(key)
      const [line = '', ...change] = findingLines(finding)
      // The session has its own column: a line that opens with it says the rest.
      const told = label !== '' && line.startsWith(`${label}: `) ? line.slice(label.length + 2) : line
      const cell = [cellText(told), ...change.map((each) => `<code>${cellText(each)}</code>`)].join('<br>')
      lines.push(`| ${cellText(label)} | ${cell} |`)
    }
    lines.push('')
  }
  for (const entry of result.unmatched)
    lines.push(`**${entry.scenario} on ${entry.provider}:** ${cellText(unmatchedAdvice(entry))}`, '')
  const folded = (title: string, findings: readonly Finding[]) => {
    if (findings.length === 0) return
    lines.push(`<details><summary>${title} (${findings.length})</summary>`, '')
    for (const finding of findings) lines.push(`- ${cellText(findingLines(finding)[0] ?? '')}`)
    lines.push('', '</details>', '')
  }
  if (!result.options.strict) folded('changed — refresh the baseline if intended', result.changes)
  folded('not known, so not compared', result.notes)
  return `${lines.join('\n')}\n`
}

/** Text for a Markdown table cell: HTML's markup characters and the cell separator escaped. */
function cellText(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|')
    .replace(/\n/g, ' ')
}
