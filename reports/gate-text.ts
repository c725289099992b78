// The gate's verdict for a person at a terminal: the real failures first, each on its line with what
// changed at its break beneath it, then the sessions missing from the run, the changes for a baseline
// refresh and the notes, repeated causes grouped, and a closing total that says what was judged.

import { changeLines } from './break-change.ts'
import { breakLine, breakTokens } from './breaks.ts'
import {
  type FallenStep,
  type Finding,
  findingChange,
  type GateResult,
  type ModelChange,
  type UnmatchedSessions,
} from './gate.ts'
import { stepLabel } from './labels.ts'
import { selectionText } from './plan.ts'
import { sessionLabel } from './session-key.ts'
import { countText, dollarText, percentText, pointsText } from './text-table.ts'

/** How the verdict is printed. */
export interface GateTextOptions {
  /**
   * The command that refreshes the baseline, named beside the changes: `npm run baseline` in cachelab's
   * own repository; `cachelab check … --update` when absent.
   */
  refresh?: string
}

/** Steps of a fallen hit ratio listed by name. */
const LISTED_STEPS = 5
/** Findings of one kind and cause listed one by one; beyond it, the first few and a count. */
const GROUP_AT = 5
/** Failures of one kind and cause listed one by one: a regression is each worth its line, up to a point. */
const FAILURES_GROUP_AT = 10
/** Lines a group shows before its count. */
const GROUP_SHOWS = 3

/** One finding as a line a person acts on. */
export function findingLine(finding: Finding): string {
  switch (finding.kind) {
    case 'missing-session':
      return finding.why === 'absent'
        ? `${sessionLabel(finding.key)}: missing from the run`
        : `${sessionLabel(finding.key)}: not planned by the run${finding.reason === undefined ? ' (its scenario or variant is gone, or the run left it out)' : `: ${finding.reason}`}`
    case 'new-session':
      return `${sessionLabel(finding.key)}: not in the baseline`
    case 'hit-ratio': {
      const change =
        finding.run === undefined
          ? 'no warm requests in the run'
          : `${percentText(finding.baseline)} → ${percentText(finding.run)} (${pointsText(finding.deltaPoints)} pp${modelText(finding.models)})`
      return `${sessionLabel(finding.key)}: warm hit ratio ${change}${stepsText(finding.fallenSteps)}`
    }
    case 'cost':
      return `${sessionLabel(finding.key)}: cost ${dollarText(finding.baseline)} → ${dollarText(finding.run)} (${finding.deltaPercent >= 0 ? '+' : ''}${finding.deltaPercent.toFixed(2)}%${modelText(finding.models)})`
    case 'new-break':
      return `new break: ${breakLine(finding.entry)}`
    case 'break-gone':
      return `break gone: ${breakLine(finding.entry)}`
    case 'break-changed': {
      const delta = breakTokens(finding.run) - breakTokens(finding.baseline)
      return `break changed (${delta >= 0 ? '+' : '-'}${countText(Math.abs(delta))} tokens): ${breakLine(finding.run)}; baseline: ${breakLine(finding.baseline).split(': ').slice(1).join(': ')}`
    }
    case 'claim':
      return `claim failed: ${finding.claim.scenario} on ${finding.claim.provider}: ${finding.claim.text} Observed: ${finding.claim.observed}`
    case 'row':
      return `impossible row: ${finding.problem}`
    case 'usage-not-reported': {
      const side = (counts: { unreported: number; requests: number }, name: string) =>
        counts.unreported === 0
          ? []
          : [`${countText(counts.unreported)} of ${countText(counts.requests)} requests in the ${name}`]
      const sides = [...side(finding.baseline, 'baseline'), ...side(finding.run, 'run')].join(' and ')
      const unknown =
        finding.unknown.length === 0 ? '' : `: ${finding.unknown.join(', ')} unknown, not compared`
      return `${sessionLabel(finding.key)}: usage not reported for ${sides}${unknown}`
    }
    case 'client-note':
      return `${sessionLabel(finding.key)}: ${finding.note}`
  }
}

/** The finding's line and, under a break's, what changed there: the lines a reporter shows of it. */
export function findingLines(finding: Finding): string[] {
  const change = findingChange(finding)
  return [findingLine(finding), ...(change === undefined ? [] : changeLines(change))]
}

/**
 * Why a capture's sessions did not match the baseline's, and how to make them match: one sentence for
 * the way the run named them.
 */
export function unmatchedAdvice(entry: UnmatchedSessions): string {
  const instead = `the run has ${entry.unmatched.map((key) => key.variant).join(', ')} instead, which the baseline lacks`
  switch (entry.naming) {
    case 'first-message':
      return `${instead}: a request with no x-cachelab-session header and no session id of its agent is named by a hash of its conversation's first message (c-…), so a first message that changes between runs (a date, a PID, a path) names a new session each run. Send the header x-cachelab-session: NAME with the agent's requests (or let the agent send its own session id), then record the baseline again.`
    case 'agent-session':
      return `${instead}: these sessions are named by the agent's own session id, which is new each run. Send the header x-cachelab-session: NAME with the agent's requests (it names the session before the agent's id does), then record the baseline again; or gate the agent per scenario with cachelab run --agent.`
    case 'named':
      return `${instead}: the run named its sessions (x-cachelab-session header or conversation key) otherwise than the baseline did; give them the same names in both.`
  }
}

/** A group's label: the finding's kind and, for breaks, the cause. */
function groupOf(finding: Finding): string {
  switch (finding.kind) {
    case 'new-break':
    case 'break-gone':
      return `${GROUP_NAMES[finding.kind]} (${finding.entry.cause ?? finding.entry.providerCause ?? 'no cause'})`
    case 'break-changed':
      return `${GROUP_NAMES[finding.kind]} (${finding.run.cause ?? finding.run.providerCause ?? 'no cause'})`
    case 'missing-session':
      return finding.why === 'absent'
        ? 'baseline sessions missing from the run'
        : `baseline sessions not planned by the run${finding.reason === undefined ? '' : ` (${finding.reason})`}`
    default:
      return GROUP_NAMES[finding.kind]
  }
}

const GROUP_NAMES: Record<Finding['kind'], string> = {
  'missing-session': 'baseline sessions missing from the run',
  'new-session': 'sessions not in the baseline',
  'hit-ratio': 'warm hit ratios changed',
  cost: 'costs changed',
  'new-break': 'new breaks',
  'break-gone': 'breaks gone',
  'break-changed': 'breaks changed',
  claim: 'claims failed',
  row: 'impossible rows',
  'usage-not-reported': 'sessions with usage not reported',
  'client-note': 'sessions whose client did not ask for caching, or could not have it',
}

/**
 * The findings as lines under `prefix`, those of one kind and cause together in first-seen order; a group
 * larger than `groupAt` shows its first lines and a count of the rest. A break's change sits beneath its
 * line, indented.
 */
function groupedLines(findings: readonly Finding[], prefix: string, groupAt: number): string[] {
  const groups = new Map<string, Finding[]>()
  for (const finding of findings)
    groups.set(groupOf(finding), [...(groups.get(groupOf(finding)) ?? []), finding])
  const lines: string[] = []
  for (const [name, group] of groups) {
    const grouped = group.length > groupAt
    // A group's members sit under its count, indented where the prefix stood.
    const lead = grouped ? ' '.repeat(prefix.length + 2) : prefix
    if (grouped) lines.push(`${prefix}${group.length} ${name}:`)
    for (const finding of grouped ? group.slice(0, GROUP_SHOWS) : group) {
      const [line, ...change] = findingLines(finding)
      lines.push(`${lead}${line}`)
      for (const each of change) lines.push(`${' '.repeat(lead.length + 2)}${each}`)
    }
    if (grouped)
      lines.push(`${lead}… and ${group.length - GROUP_SHOWS} more (every one: check --reporter json)`)
  }
  return lines
}

/** The verdict for a person: what fails, what changed, what was not known, and one closing line. */
export function gateReport(result: GateResult, options: GateTextOptions = {}): string {
  const { options: gate } = result
  const tolerances = `hit ratio ${gate.tolerancePoints} pp, cost ${gate.costTolerancePercent}%, breaks ${countText(gate.breakThresholdTokens)} tokens`
  const lines: string[] = []
  // The regressions first; the sessions the run lacks after them, with why a capture's did not match.
  const missing = result.failures.filter((finding) => finding.kind === 'missing-session')
  lines.push(
    ...groupedLines(
      result.failures.filter((finding) => finding.kind !== 'missing-session'),
      'FAIL  ',
      FAILURES_GROUP_AT,
    ),
  )
  lines.push(...groupedLines(missing, 'FAIL  ', GROUP_AT))
  for (const entry of result.unmatched)
    lines.push(`      ${entry.scenario} on ${entry.provider}: ${unmatchedAdvice(entry)}`)
  if (result.changes.length > 0) {
    if (lines.length > 0) lines.push('')
    lines.push(
      `changed${gate.strict ? ' (fails with --strict)' : ''} — refresh the baseline if intended (${options.refresh ?? 'cachelab check --baseline DIR --out RUN --update'}):`,
    )
    lines.push(...groupedLines(result.changes, '  ', GROUP_AT))
  }
  const unknown = result.notes.filter((finding) => finding.kind !== 'client-note')
  if (unknown.length > 0) {
    if (lines.length > 0) lines.push('')
    lines.push('not known, so not compared (neither a regression nor an improvement):')
    lines.push(...groupedLines(unknown, '  ', GROUP_AT))
  }
  const asked = result.notes.filter((finding) => finding.kind === 'client-note')
  if (asked.length > 0) {
    if (lines.length > 0) lines.push('')
    lines.push('notes (what the clients did not ask for: warnings, not failures):')
    lines.push(...groupedLines(asked, '  ', GROUP_AT))
  }
  if (lines.length > 0) lines.push('')
  const outside = outsideText(result)
  if (result.passed) {
    lines.push(
      `OK: ${result.checked} of ${result.checked} baseline sessions hold (tolerances: ${tolerances}), no claim fails${outside}`,
    )
  } else {
    const changed = gate.strict && result.changes.length > 0 ? ` and ${result.changes.length} changes` : ''
    const failing = result.sessions.filter((session) => session.status === 'fails').length
    lines.push(
      `check failed: ${result.failures.length} failures${changed} over ${result.checked} baseline sessions (${failing} failing; tolerances: ${tolerances})${outside}.`,
    )
  }
  lines.push(
    "hit ratios are token-weighted: cache-read tokens / input tokens of the successful requests after each session's first; break tokens are lost plus provider-side.",
  )
  return lines.join('\n')
}

/** The baseline sessions outside the run's plan, as a clause of the closing line; empty when none. */
function outsideText(result: GateResult): string {
  const { outside, plan } = result.scope
  if (outside.length === 0 || plan === undefined) return ''
  const flags = selectionText(plan.selection)
  return `; ${outside.length} more baseline ${outside.length === 1 ? 'session is' : 'sessions are'} outside the run's plan${flags === '' ? '' : ` (run ${flags})`}, not checked`
}

/** A model change beside a finding: `, model claude-sonnet-4-6 → gpt-4.1`, or nothing. */
function modelText(models: ModelChange | undefined): string {
  return models === undefined ? '' : `, model ${models.baseline} → ${models.run}`
}

function stepsText(steps: readonly FallenStep[] | undefined): string {
  if (steps === undefined || steps.length === 0) return ''
  const listed = steps.slice(0, LISTED_STEPS).map((step) => {
    const cause = step.breakCause === undefined ? '' : ` ${step.breakCause}`
    return `${stepLabel(step)} ${pointsText(step.deltaPoints)}pp${cause}`
  })
  const more = steps.length - listed.length
  return `; steps that fell: ${listed.join(', ')}${more > 0 ? ` (+${more} more)` : ''}`
}
