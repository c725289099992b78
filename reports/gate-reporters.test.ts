import { DOMParser, type Element } from '@xmldom/xmldom'
import { describe, expect, it } from 'vitest'
import { breaksOf } from './breaks.ts'
import { checkBaseline, type GateResult } from './gate.ts'
import { gateGithub } from './gate-github.ts'
import { GATE_JSON_FORMAT, gateJson } from './gate-json.ts'
import { gateJunit } from './gate-junit.ts'
import { gateReport } from './gate-text.ts'
import { summarize } from './summary.ts'
import { sessionRows } from './testing.ts'
import type { BreakChange, ClaimResult, StepRow } from './types.ts'

// One verdict with every part a reporter renders: a session that fails on a new break whose change is
// known (a date put into the system prompt), one that holds, one outside the run's plan, a failed claim
// and markup characters in the texts.
const session = (scenario: string, variant: string) =>
  sessionRows({ scenario, variant }, [
    { uncached: 2000 },
    { read: 1900, uncached: 100, turn: 2 },
    { read: 1950, uncached: 50, turn: 3 },
  ])
const baseline = [
  ...session('date-prompt', 'default'),
  ...session('date-prompt', 'quiet'),
  ...session('other', 'default'),
]
const change: BreakChange = {
  node: 'system[0]',
  kind: 'inserted',
  context: 'You are a careful <coding> agent & ',
  after: 'Today is 2026-12-07. ',
}
const run: StepRow[] = baseline
  .filter((row) => row.scenario === 'date-prompt')
  .map((row) =>
    row.variant === 'default' && row.turn === 3
      ? {
          ...row,
          cacheReadTokens: 0,
          cacheWriteTokens: 1950,
          hitRatio: 0,
          idealCacheReadTokens: 1950,
          lostTokens: 1950,
          breakCause: 'system-replace' as const,
          breakNode: 'system[0]',
        }
      : row,
  )
const claim: ClaimResult = {
  scenario: 'date-prompt',
  provider: 'anthropic',
  claim: 'stays-warm',
  text: 'The prompt stays cached "across turns".',
  variants: ['default'],
  status: 'fails',
  observed: 'system-replace@3.1',
}

// The break's change as the row core will put it on the break (breaks.ts copies the step row's).
const runBreaks = breaksOf(run).map((entry) => (entry.node === 'system[0]' ? { ...entry, change } : entry))

function verdict(): GateResult {
  return checkBaseline({
    baseline: { summary: summarize(baseline), breaks: breaksOf(baseline), steps: baseline },
    run: {
      summary: summarize(run),
      breaks: runBreaks,
      steps: run,
      plan: {
        selection: { scenarios: ['date-prompt'], variants: 'all', providers: 'all', loops: ['model'] },
        sessions: [
          { scenario: 'date-prompt', variant: 'default', provider: 'anthropic' },
          { scenario: 'date-prompt', variant: 'quiet', provider: 'anthropic' },
        ],
        leftOut: [],
      },
    },
    claims: [claim, { ...claim, claim: 'holds-too', status: 'holds' }],
    rowProblems: [],
    options: { tolerancePoints: 0.5, costTolerancePercent: 1e9, breakThresholdTokens: 1024, strict: false },
  })
}

/** A parsed XML document; any warning or error of the parser fails the test. */
function parseXml(text: string) {
  return new DOMParser({
    onError: (level, message) => {
      throw new Error(`XML ${level}: ${message}`)
    },
  }).parseFromString(text, 'text/xml')
}

const elements = (parent: { getElementsByTagName(name: string): ArrayLike<Element> }, name: string) =>
  Array.from(parent.getElementsByTagName(name))

/**
 * One workflow command line as GitHub's runner reads it: `::name key=value,…::message`, properties and
 * message unescaped (%25 %0D %0A, and in properties %3A %2C).
 */
function parseCommand(line: string): { name: string; properties: Record<string, string>; message: string } {
  if (!line.startsWith('::')) throw new Error(`not a workflow command: ${line}`)
  const end = line.indexOf('::', 2)
  if (end === -1) throw new Error(`no closing :: in ${line}`)
  const head = line.slice(2, end)
  const space = head.indexOf(' ')
  const name = space === -1 ? head : head.slice(0, space)
  const unescapeData = (text: string) => text.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%25/g, '%')
  const unescapeProperty = (text: string) => unescapeData(text.replace(/%3A/g, ':').replace(/%2C/g, ','))
  const properties: Record<string, string> = {}
  if (space !== -1)
    for (const pair of head.slice(space + 1).split(',')) {
      const equals = pair.indexOf('=')
      properties[pair.slice(0, equals)] = unescapeProperty(pair.slice(equals + 1))
    }
  return { name, properties, message: unescapeData(line.slice(end + 2)) }
}

describe('the gate reporters', () => {
  it('print the terminal verdict with the change beneath the break, like expected and received', () => {
    const lines = gateReport(verdict()).split('\n')
    const at = lines.findIndex((line) =>
      line.startsWith('FAIL  new break: date-prompt · default · anthropic 3.3'),
    )
    expect(at).not.toBe(-1)
    expect(lines.slice(at + 1, at + 3)).toEqual([
      '        system[0]: inserted after "You are a careful <coding> agent & "',
      '        + "Today is 2026-12-07. "',
    ])
  })

  it('write JSON that parses back to every judged session with its status and findings', () => {
    const document = JSON.parse(gateJson(verdict(), { notices: ['note: a notice'] }))
    expect(document.format).toBe(GATE_JSON_FORMAT)
    expect(document.passed).toBe(false)
    expect(document.checked).toBe(2)
    expect(
      document.sessions.map((entry: { variant: string; status: string }) => [entry.variant, entry.status]),
    ).toEqual([
      ['default', 'fails'],
      ['quiet', 'holds'],
    ])
    const [failing] = document.sessions
    expect(failing.failures.map((finding: { kind: string }) => finding.kind)).toContain('new-break')
    const broke = failing.failures.find((finding: { kind: string }) => finding.kind === 'new-break')
    expect(broke.entry.change).toEqual(change)
    expect(broke.lines).toEqual([
      'system[0]: inserted after "You are a careful <coding> agent & "',
      '+ "Today is 2026-12-07. "',
    ])
    expect(document.scope.plan.flags).toBe('--scenario date-prompt')
    expect(document.scope.outside).toEqual([{ scenario: 'other', variant: 'default', provider: 'anthropic' }])
    expect(document.failures.map((finding: { kind: string }) => finding.kind)).toContain('claim')
    expect(document.notices).toEqual(['note: a notice'])
  })

  it('write JUnit XML that a real XML parser reads: a suite per scenario, a case per baseline session, the change in the failure', () => {
    const document = parseXml(gateJunit(verdict()))
    const root = document.documentElement
    expect(root?.tagName).toBe('testsuites')
    const suites = elements(document, 'testsuite')
    expect(suites.map((suite) => suite.getAttribute('name'))).toEqual(['date-prompt', 'other'])
    const [datePrompt, other] = suites
    if (datePrompt === undefined || other === undefined) throw new Error('two suites expected')
    const cases = elements(datePrompt, 'testcase')
    expect(cases.map((each) => each.getAttribute('name'))).toEqual([
      'default · anthropic',
      'quiet · anthropic',
      'claim stays-warm · anthropic',
      'claim holds-too · anthropic',
    ])
    expect(datePrompt.getAttribute('tests')).toBe('4')
    expect(datePrompt.getAttribute('failures')).toBe('2')
    const [failure] = elements(cases[0] as Element, 'failure')
    expect(failure?.getAttribute('type')).toBe('new-break')
    expect(failure?.getAttribute('message')).toMatch(
      /^new break: date-prompt · default · anthropic 3\.3: system-replace/,
    )
    expect(failure?.textContent).toContain(
      'new break: date-prompt · default · anthropic 3.3: system-replace at system[0]',
    )
    expect(failure?.textContent).toContain(
      'system[0]: inserted after "You are a careful <coding> agent & "\n+ "Today is 2026-12-07. "',
    )
    expect(elements(cases[1] as Element, 'failure')).toEqual([])
    const [claimFailure] = elements(cases[2] as Element, 'failure')
    expect(claimFailure?.getAttribute('message')).toBe(
      'The prompt stays cached "across turns". Observed: system-replace@3.1',
    )
    const [skipped] = elements(other, 'skipped')
    expect(skipped?.getAttribute('message')).toBe(
      "outside the run's plan (run --scenario date-prompt): not checked",
    )
    expect(root?.getAttribute('tests')).toBe('5')
    expect(root?.getAttribute('failures')).toBe('2')
    expect(root?.getAttribute('skipped')).toBe('1')
  })

  it('escape what XML 1.0 cannot carry, so the document still parses', () => {
    const odd = { ...claim, text: 'A bell \u0007 and a lone \uD800 surrogate]]>' }
    const result = { ...verdict(), claims: [odd], failures: [{ kind: 'claim' as const, claim: odd }] }
    const document = parseXml(gateJunit(result))
    const texts = elements(document, 'failure').map((each) => each.getAttribute('message'))
    expect(texts).toContain('A bell \\u0007 and a lone \\uD800 surrogate]]> Observed: system-replace@3.1')
  })

  it('write GitHub workflow commands that parse as the runner reads them, and a step summary table', () => {
    const { commands, summary } = gateGithub(verdict())
    const parsed = commands.trimEnd().split('\n').map(parseCommand)
    const errors = parsed.filter((command) => command.name === 'error')
    expect(errors.map((command) => command.properties.title)).toEqual([
      'cachelab: hit-ratio · date-prompt · default · anthropic',
      'cachelab: new-break · date-prompt · default · anthropic',
      'cachelab: claim stays-warm · date-prompt · anthropic',
    ])
    expect(errors[1]?.message.split('\n')).toEqual([
      expect.stringMatching(
        /^new break: date-prompt · default · anthropic 3\.3: system-replace at system\[0\], 1,950 tokens lost/,
      ),
      'system[0]: inserted after "You are a careful <coding> agent & "',
      '+ "Today is 2026-12-07. "',
    ])
    expect(summary).toMatch(/^### cachelab check fails: 3 failures in 1 of 2 baseline sessions\n/)
    expect(summary).toContain(
      "1 more baseline sessions are outside the run's plan (run `--scenario date-prompt`)",
    )
    expect(summary).toContain(
      '| date-prompt · default · anthropic | new break: date-prompt · default · anthropic 3.3: system-replace at system[0], 1,950 tokens lost',
    )
    expect(summary).toContain('<br><code>+ &quot;Today is 2026-12-07. &quot;</code>'.replace(/&quot;/g, '"'))
  })

  it('annotate at most ten errors, the tenth counting the rest', () => {
    const many = verdict()
    const failures = Array.from({ length: 25 }, (_, index) => ({
      kind: 'row' as const,
      problem: `row ${index}`,
    }))
    const { commands } = gateGithub({ ...many, failures })
    const errors = commands
      .trimEnd()
      .split('\n')
      .map(parseCommand)
      .filter((command) => command.name === 'error')
    expect(errors).toHaveLength(10)
    expect(errors[9]?.message).toBe('… and 16 more failures: every one is in the step summary')
  })
})
