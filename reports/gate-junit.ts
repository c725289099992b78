// The gate's verdict as JUnit XML, which every CI renders: one test suite per scenario, one test case per
// baseline session (failed with its findings and what changed at each break, skipped when outside the
// run's plan) and one per scenario claim; what belongs to no baseline session in a suite of its own.

import { type Finding, findingChange, findingKey, type GateResult, type SessionVerdict } from './gate.ts'
import { findingLines, unmatchedAdvice } from './gate-text.ts'
import { selectionText } from './plan.ts'
import { type SessionKey, sessionKeyString } from './session-key.ts'
import type { ClaimResult } from './types.ts'

/** The suite of what belongs to no baseline session: sessions the baseline lacks, rows without a session. */
const RUN_SUITE = 'cachelab check'

interface TestCase {
  name: string
  classname: string
  /** Present when the case failed: its first line, kind and every line. */
  failure?: { message: string; type: string; body: string[] }
  skipped?: string
  /** Lines shown with a passing (or failing) case: changes and notes. */
  output?: string[]
}

/** The verdict as a JUnit XML document (UTF-8, with its declaration). */
export function gateJunit(result: GateResult): string {
  const suites = new Map<string, TestCase[]>()
  const add = (suite: string, testCase: TestCase) =>
    suites.set(suite, [...(suites.get(suite) ?? []), testCase])
  const advice = new Map<string, string>()
  for (const entry of result.unmatched)
    for (const key of entry.missing) advice.set(sessionKeyString(key), unmatchedAdvice(entry))
  for (const session of result.sessions) add(session.key.scenario, sessionCase(session, result, advice))
  const flags = result.scope.plan === undefined ? '' : selectionText(result.scope.plan.selection)
  for (const key of result.scope.outside)
    add(key.scenario, {
      name: caseName(key),
      classname: `cachelab.${key.scenario}`,
      skipped: `outside the run's plan${flags === '' ? '' : ` (run ${flags})`}: not checked`,
    })
  for (const claim of result.claims) {
    const testCase = claimCase(claim)
    if (testCase !== undefined) add(claim.scenario, testCase)
  }
  const judged = new Set(result.sessions.map((session) => sessionKeyString(session.key)))
  const loose = (findings: readonly Finding[]) =>
    findings.filter((finding) => {
      if (finding.kind === 'claim') return false
      const key = findingKey(finding)
      return key === undefined || !judged.has(sessionKeyString(key))
    })
  const looseFailures = loose(result.failures)
  const newSessions = loose(result.changes)
  if (looseFailures.length > 0 || newSessions.length > 0) {
    const strictFails = result.options.strict && newSessions.length > 0
    const failing = [...looseFailures, ...(strictFails ? newSessions : [])]
    add(RUN_SUITE, {
      name: 'the run beyond the baseline',
      classname: 'cachelab',
      ...(failing.length > 0 ? { failure: failureOf(failing) } : {}),
      ...(!strictFails && newSessions.length > 0 ? { output: newSessions.flatMap(findingLines) } : {}),
    })
  }
  const all = [...suites.values()].flat()
  const count = (cases: readonly TestCase[]) => ({
    tests: cases.length,
    failures: cases.filter((testCase) => testCase.failure !== undefined).length,
    skipped: cases.filter((testCase) => testCase.skipped !== undefined).length,
  })
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="cachelab check"${attributes(count(all))}>`,
  ]
  for (const [name, cases] of suites) {
    lines.push(`  <testsuite name="${xml(name)}"${attributes(count(cases))}>`)
    for (const testCase of cases) lines.push(...caseXml(testCase))
    lines.push('  </testsuite>')
  }
  lines.push('</testsuites>')
  return `${lines.join('\n')}\n`
}

/** A case's name within its scenario's suite: `in-history · anthropic` (and the loop, when not the model's). */
function caseName(key: SessionKey): string {
  const loop = key.loop === undefined || key.loop === 'model' ? '' : ` · ${key.loop} loop`
  return `${key.variant} · ${key.provider}${loop}`
}

function sessionCase(
  session: SessionVerdict,
  result: GateResult,
  advice: ReadonlyMap<string, string>,
): TestCase {
  const failing = [...session.failures, ...(result.options.strict ? session.changes : [])]
  const hint = advice.get(sessionKeyString(session.key))
  const output = [
    ...(result.options.strict ? [] : session.changes.flatMap(findingLines)),
    ...session.notes.flatMap(findingLines),
  ]
  return {
    name: caseName(session.key),
    classname: `cachelab.${session.key.scenario}`,
    ...(session.status === 'fails' ? { failure: failureOf(failing, hint === undefined ? [] : [hint]) } : {}),
    ...(output.length > 0 ? { output } : {}),
  }
}

/** A claim's case, failed or passed; a claim that did not run is no case. */
function claimCase(claim: ClaimResult): TestCase | undefined {
  if (claim.status === 'not-run') return undefined
  const testCase: TestCase = {
    name: `claim ${claim.claim} · ${claim.provider}`,
    classname: `cachelab.${claim.scenario}`,
  }
  if (claim.status === 'fails')
    testCase.failure = {
      message: `${claim.text} Observed: ${claim.observed}`,
      type: 'claim',
      body: [`${claim.text}`, `Observed: ${claim.observed}`],
    }
  return testCase
}

function failureOf(
  findings: readonly Finding[],
  extra: readonly string[] = [],
): NonNullable<TestCase['failure']> {
  // A break whose change is known leads: its first line is the message a CI shows of the case.
  const ordered = [
    ...findings.filter((finding) => findingChange(finding) !== undefined),
    ...findings.filter((finding) => findingChange(finding) === undefined),
  ]
  const [first] = ordered
  return {
    message: first === undefined ? 'failed' : (findingLines(first)[0] ?? 'failed'),
    type: first?.kind ?? 'failure',
    body: [...ordered.flatMap(findingLines), ...extra],
  }
}

function caseXml(testCase: TestCase): string[] {
  const open = `    <testcase name="${xml(testCase.name)}" classname="${xml(testCase.classname)}"`
  const inner: string[] = []
  if (testCase.failure !== undefined)
    inner.push(
      `      <failure message="${xml(testCase.failure.message)}" type="${xml(testCase.failure.type)}">${xml(testCase.failure.body.join('\n'))}</failure>`,
    )
  if (testCase.skipped !== undefined) inner.push(`      <skipped message="${xml(testCase.skipped)}"/>`)
  if (testCase.output !== undefined)
    inner.push(`      <system-out>${xml(testCase.output.join('\n'))}</system-out>`)
  return inner.length === 0 ? [`${open}/>`] : [`${open}>`, ...inner, '    </testcase>']
}

function attributes(counts: { tests: number; failures: number; skipped: number }): string {
  return ` tests="${counts.tests}" failures="${counts.failures}" errors="0" skipped="${counts.skipped}"`
}

/**
 * Text as XML character data or an attribute value: the five markup characters escaped, and characters
 * XML 1.0 cannot carry at all (control characters but tab and line breaks, lone surrogates) written as
 * their `\uXXXX` escape, so a reader sees what was there.
 */
function xml(text: string): string {
  return text
    .replace(
      /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu,
      (character) => `\\u${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`,
    )
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
}
