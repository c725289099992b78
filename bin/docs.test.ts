// The README and docs/ kept true. Every command in README.md's shell blocks is run here (in a scratch
// workspace, offline, against cachelab's own simulator) or, where it cannot be (the whole matrix, npm
// itself), accounted for by what stands behind it; what the README says a command prints is compared with
// what it printed. Every `cachelab …` line in docs/*.md is parsed with the command's own flag table. Every
// measured figure in README.md and docs/*.md is either computed here, checked by the test named beside it,
// or a rule or default listed with its source (notes/2026-12-02-readme-and-docs.md).

import { spawn } from 'node:child_process'
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { PROVIDER_IDS } from '../harness/types.ts'
import {
  DEFAULT_BREAK_THRESHOLD_TOKENS,
  DEFAULT_COST_TOLERANCE_PERCENT,
  DEFAULT_TOLERANCE_POINTS,
} from '../reports/gate.ts'
import { parseSummaryCsv } from '../reports/parse.ts'
import { SECTION_END, SECTION_START } from '../scenarios/bench-contract.ts'
import { SCENARIOS } from '../scenarios/index.ts'
import { planMatrix } from '../scenarios/run.ts'
import { checkCommandLine } from './command-line.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const BIN = join(ROOT, 'bin', 'cachelab.js')
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const README = read('README.md')
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`)

/** A fenced block of a page: its info string, its lines, and where it opens. */
interface Fence {
  info: string
  lines: string[]
  line: number
}

function fences(markdown: string): Fence[] {
  const found: Fence[] = []
  const lines = markdown.split('\n')
  for (let index = 0; index < lines.length; index += 1) {
    const opening = /^\s*(`{3,})(.*)$/.exec(lines[index] ?? '')
    if (opening === null) continue
    const start = index
    const body: string[] = []
    for (index += 1; index < lines.length && (lines[index] ?? '').trim() !== opening[1]; index += 1)
      body.push(lines[index] ?? '')
    found.push({ info: (opening[2] ?? '').trim(), lines: body, line: start + 1 })
  }
  return found
}

/** A shell block's command lines: continuations joined, comments and blank lines dropped. */
function commandLines(fence: Fence): string[] {
  const joined = fence.lines.join('\n').replace(/\\\n\s*/g, ' ')
  return joined
    .split('\n')
    .map((line) => line.replace(/(^|\s)#(\s.*)?$/, '').trim())
    .filter((line) => line !== '')
}

/** Words of a shell line, quotes removed (enough for the documented lines: no expansions are run). */
function words(text: string): string[] {
  const found: string[] = []
  for (const match of text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g))
    found.push(match[1] ?? match[2] ?? match[3] ?? '')
  return found
}

/** The cachelab invocations of a shell line: `npx cachelab …`, `cachelab …`, `node bin/cachelab.js …`. */
function cachelabInvocations(line: string): string[][] {
  return line
    .split(/&&|\|\||;|\||(?<![>&])&(?!&)/)
    .map((segment) => words(segment.trim()).filter((_word, index, all) => !isAssignment(all, index)))
    .map((segmentWords) => {
      const [first, second] = segmentWords
      const at =
        first === 'cachelab'
          ? 0
          : (first === 'npx' && second === 'cachelab') ||
              (first === 'node' && second?.endsWith('bin/cachelab.js'))
            ? 1
            : -1
      if (at === -1) return undefined
      const args = segmentWords.slice(at + 1)
      const redirect = args.findIndex((word) => word.startsWith('>') || word === '2>&1')
      return redirect === -1 ? args : args.slice(0, redirect)
    })
    .filter((args): args is string[] => args !== undefined)
}

function isAssignment(all: readonly string[], index: number): boolean {
  return all.slice(0, index + 1).every((word) => /^[A-Z_][A-Z0-9_]*=/.test(word))
}

// --- the scratch workspace and the runs in it ---------------------------------------------------------

interface Ran {
  code: number | null
  output: string
}

let workspace = ''
const ENV_DROPPED = /(_API_KEY|_BASE_URL|_AUTH_TOKEN|^AWS_|^CACHELAB_|^OTEL_|^npm_)/

function cachelab(args: readonly string[], env: Record<string, string> = {}): Promise<Ran> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !ENV_DROPPED.test(name)))
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: workspace,
      env: { ...base, NO_COLOR: '1', HOME: join(workspace, 'home'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += String(chunk)
    })
    child.stderr.on('data', (chunk) => {
      output += String(chunk)
    })
    child.on('error', fail)
    child.on('close', (code) => done({ code, output }))
  })
}

/** The stand-in for "your agent": three questions of one conversation on ANTHROPIC_BASE_URL. */
function agent(changed: boolean): string {
  return `// The docs test's stand-in for your agent.
const SYSTEM = 'You are a careful coding agent. Answer in one short paragraph. '.repeat(120)
async function main() {
  const messages = []
  for (let turn = 1; turn <= 3; turn += 1) {
    const system = ${changed} && turn >= 3 ? 'Today is 2026-12-02. ' + SYSTEM : SYSTEM
    messages.push({ role: 'user', content: 'Question ' + turn + ': what should I look at next?' })
    const response = await fetch(process.env.ANTHROPIC_BASE_URL + '/v1/messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': process.env.ANTHROPIC_API_KEY, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 64, system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }], messages }),
    })
    if (!response.ok) throw new Error('HTTP ' + response.status + ': ' + (await response.text()))
    messages.push({ role: 'assistant', content: (await response.json()).content })
  }
}
main()
`
}

/**
 * How each command line of README.md runs here. `run` executes it in the workspace as written (a `cachelab`
 * line through bin/cachelab.js, as npx would); `scoped` executes it with a subset of scenarios appended to
 * each cachelab command (the whole matrix is CI's gate job and `npm run baseline`); `accounted` runs
 * nothing and checks what stands behind the line instead. A README line missing here fails the test.
 */
const README_LINES: Record<string, { how: 'run' | 'scoped' | 'accounted'; before?: () => void }> = {
  'npm ci && npx cachelab run': { how: 'accounted' },
  'npm test': { how: 'accounted' },
  'npx cachelab run --out reports/out/ci && npx cachelab check --baseline reports/baselines --out reports/out/ci':
    { how: 'scoped' },
  'npm run baseline': { how: 'accounted' },
  'npx cachelab record --out reports/agent -- node my-agent.js': {
    how: 'run',
    before: () => writeFileSync(join(workspace, 'my-agent.js'), agent(false)),
  },
  'npx cachelab record --baseline reports/agent --out reports/agent-now -- node my-agent.js': {
    how: 'run',
    // "Say the change puts today's date at the top of the system prompt from the third request on."
    before: () => writeFileSync(join(workspace, 'my-agent.js'), agent(true)),
  },
  'npx cachelab run --loop ai-sdk --scenario prompt-change --provider anthropic --out reports/out/ai-sdk': {
    how: 'run',
  },
  'npx cachelab run --scenario append-only --provider anthropic --out reports/out/sonnet': { how: 'run' },
  'npx cachelab run --scenario append-only --provider anthropic --model claude-haiku-4-5 --out reports/out/haiku':
    { how: 'run' },
  'npx cachelab compare reports/out/sonnet reports/out/haiku': { how: 'run' },
  'npx cachelab validate reports/out/sonnet/sessions': { how: 'run' },
  'npx cachelab import --since 2026-01-01': { how: 'run' },
  // Real agents take minutes: the agents project runs it (scenarios/agents/run.agents.test.ts).
  'npx cachelab run --agent claude-code,codex,opencode,qwen-code,kilo --scenario memory-edit,mcp-add,model-switch,compaction,resume':
    { how: 'accounted' },
}

/** The subset a `scoped` line runs: the first scenario the quick start's table shows. */
const SCOPE = ['--scenario', 'append-only']

/** A scoped run's counts: the whole matrix's "N of N sessions" said of the subset that ran. */
function scopedCounts(line: string): string {
  const all = planMatrix(SCENARIOS, PROVIDER_IDS).plans.length
  const scoped = planMatrix(
    SCENARIOS.filter((scenario) => scenario.name === SCOPE[1]),
    PROVIDER_IDS,
  ).plans.length
  return line.replace(`${all} of ${all} baseline sessions`, `${scoped} of ${scoped} baseline sessions`)
}

/** Each README shell block with what its commands printed, run in the README's order. */
interface BlockRun {
  fence: Fence
  output: string
  codes: (number | null)[]
}

const readmeRuns: BlockRun[] = []
const docsRuns = new Map<string, string>()

/** Lines a fence says a command prints, as patterns: `…` is anything, `<timestamp>` a folder name. */
function expectedPattern(line: string): RegExp {
  const escaped = squash(line)
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/<timestamp>/g, '[^/]+'))
    .join('.*')
  return new RegExp(`^${escaped}$`)
}

const squash = (line: string) => line.trim().replace(/\s+/g, ' ')

function shownIn(expected: readonly string[], output: string): string[] {
  const printed = output.split('\n').map(squash)
  return expected
    .filter((line) => line.trim() !== '…' && line.trim() !== '')
    .filter((line) => !printed.some((each) => expectedPattern(line).test(each)))
}

/** The output fence right after a shell block (no other shell block between). */
function outputAfter(all: readonly Fence[], index: number): Fence | undefined {
  const next = all[index + 1]
  return next !== undefined && next.info === '' ? next : undefined
}

const baseline = parseSummaryCsv(read('reports/baselines/summary.csv'), 'summary.csv')
const claimStatuses = read('reports/baselines/claims.csv')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => /,(holds|fails|not-run),/.exec(line)?.[1])
const matrix = planMatrix(SCENARIOS, PROVIDER_IDS)
const total = (field: 'requests' | 'failedAttempts') => baseline.reduce((sum, row) => sum + row[field], 0)

beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), 'cachelab-docs-'))
  mkdirSync(join(workspace, 'reports'))
  symlinkSync(join(ROOT, 'reports', 'baselines'), join(workspace, 'reports', 'baselines'))
  symlinkSync(join(ROOT, 'providers'), join(workspace, 'providers'))
  symlinkSync(join(ROOT, 'reports', 'observed'), join(workspace, 'reports', 'observed'))
  // "Your past sessions": a Claude Code project folder under the home import searches.
  const project = join(workspace, 'home', '.claude', 'projects', 'my-project')
  mkdirSync(project, { recursive: true })
  cpSync(
    join(ROOT, 'reports', 'observed', 'transcripts', 'testdata', 'claude-code-events.jsonl'),
    join(project, 'e7e7a0de.jsonl'),
  )
  for (const fence of fences(README)) {
    if (fence.info !== 'sh') continue
    let output = ''
    const codes: (number | null)[] = []
    for (const line of commandLines(fence)) {
      const entry = README_LINES[line]
      if (entry === undefined || entry.how === 'accounted') continue
      entry.before?.()
      for (const args of cachelabInvocations(line)) {
        const ran = await cachelab(entry.how === 'scoped' ? [...args, ...SCOPE] : args)
        output += ran.output
        codes.push(ran.code)
      }
    }
    if (codes.length > 0) readmeRuns.push({ fence, output, codes })
  }
  for (const [file, line] of DOCS_RUN) {
    const ran = await cachelab(cachelabInvocations(line)[0] ?? [])
    expect(ran.code, ran.output).toBe(0)
    docsRuns.set(`${file}: ${line}`, ran.output)
  }
}, 1_500_000)

/** docs/*.md lines that run here too, their printed lines compared with the fence after them. */
const DOCS_RUN: [string, string][] = [
  [
    'docs/import.md',
    'npx cachelab import reports/observed/transcripts/testdata/claude-code-events.jsonl --out reports/out/import-example',
  ],
  [
    'docs/import.md',
    'npx cachelab import reports/observed/transcripts/testdata/dsh-c-consolidate.jsonl --policy keep-live --out reports/out/policy',
  ],
]

describe('README.md', () => {
  it('keeps the two commands it opens with', () => {
    const first = fences(README).find((fence) => fence.info === 'sh')
    expect(first === undefined ? [] : commandLines(first)).toEqual(['npm ci && npx cachelab run', 'npm test'])
  })

  it('shows no shell command this test does not account for', () => {
    const shown = fences(README)
      .filter((fence) => fence.info === 'sh')
      .flatMap(commandLines)
    expect(shown.filter((line) => README_LINES[line] === undefined)).toEqual([])
    expect(Object.keys(README_LINES).filter((line) => !shown.includes(line))).toEqual([])
  })

  it('has a table of contents naming each of its sections', () => {
    const sections = README.split('\n')
      .filter((line) => line.startsWith('## ') && line !== '## Contents')
      .map((line) => line.slice(3))
    const slug = (title: string) =>
      title
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-')
    for (const title of sections) expect(README).toContain(`- [${title}](#${slug(title)})`)
  })

  it('prints what it says each command it runs prints, and each exits as a documented job does', () => {
    const all = fences(README)
    const problems: string[] = []
    for (const run of readmeRuns) {
      const shown = outputAfter(
        all,
        all.findIndex((fence) => fence.line === run.fence.line),
      )
      const scoped = commandLines(run.fence).some((line) => README_LINES[line]?.how === 'scoped')
      const expected = scoped ? shown?.lines.map(scopedCounts) : shown?.lines
      if (shown !== undefined)
        for (const line of shownIn(expected ?? [], run.output))
          problems.push(`README.md:${shown.line}: not printed: ${line}`)
    }
    expect(problems, readmeRuns.map((run) => run.output).join('\n---\n')).toEqual([])
    // The regression job's second record fails its gate (exit 1); every other command exits 0.
    const codes = readmeRuns.flatMap((run) => run.codes)
    expect(codes.filter((code) => code === 1)).toHaveLength(1)
    expect(codes.filter((code) => code !== 0 && code !== 1)).toEqual([])
  })

  it("quotes the whole matrix's figures as planned and as the committed baseline holds them", () => {
    // The matrix itself runs in CI's gate job and in `npm run baseline`, not here: the sessions are
    // planned (no request sent) and its counts are the baseline's, which `check` holds the matrix to.
    expect(baseline.map((row) => `${row.scenario}.${row.variant}.${row.provider}`).sort()).toEqual(
      matrix.plans.map((plan) => `${plan.scenario.name}.${plan.variant.name}.${plan.provider}`).sort(),
    )
    const sessions = matrix.plans.length
    expect(README).toContain(`plays ${sessions} sessions`)
    expect(README).toContain(`OK: ${sessions} of ${sessions} baseline sessions hold`)
    const held = claimStatuses.filter((status) => status === 'holds').length
    const notRun = claimStatuses.filter((status) => status === 'not-run').length
    expect(README).toContain(
      `claims: ${held} of ${claimStatuses.length - notRun} hold (${notRun} not run: a variant they read was not in this run)`,
    )
    expect(README).toContain(
      `: ${total('requests')} requests, ${total('failedAttempts')} failed attempts; wrote`,
    )
    const reports = read('docs/reports.md')
    expect(reports).toContain(
      `${sessions} sessions and ${(total('requests') + total('failedAttempts')).toLocaleString('en-US')} requests and\nfailed attempts`,
    )
  })

  it("shows the quick start's first rows as the run prints them", () => {
    const [quick] = fences(README).filter(
      (fence) => fence.info === '' && fence.lines[0]?.startsWith('scenario'),
    )
    const gate = readmeRuns.find((run) => commandLines(run.fence)[0]?.includes('check --baseline'))
    const rows = (quick?.lines ?? []).filter((line) =>
      /^ {2}(default|variant)|^append-only|^scenario/.test(line),
    )
    expect(rows.length).toBeGreaterThan(3)
    expect(shownIn(rows, gate?.output ?? '')).toEqual([])
  })

  it("states the gate's defaults as check applies them", () => {
    const points = `${DEFAULT_TOLERANCE_POINTS} points below`
    const cost = `${DEFAULT_COST_TOLERANCE_PERCENT}% above`
    const tokens = `${DEFAULT_BREAK_THRESHOLD_TOKENS.toLocaleString('en-US')} tokens or`
    for (const text of [points, cost, tokens]) expect(squash(README)).toContain(text)
  })

  it('accounts for npm ci, npm test and npm run baseline', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> }
    // npm ci: this test runs in an installed checkout; its lockfile is what npm ci installs.
    expect(read('package-lock.json')).toContain('"lockfileVersion"')
    // npm test: the default project, whose include glob holds this file.
    expect(pkg.scripts.test).toBe('vitest run --project default')
    expect(read('vitest.config.ts')).toContain(
      "include: ['{harness,providers,scenarios,reports,bin}/**/*.test.ts']",
    )
    // npm run baseline: its cachelab commands parse.
    const script = pkg.scripts.baseline ?? ''
    const invocations = cachelabInvocations(script)
    expect(invocations.map((args) => args[0])).toEqual(['run', 'check'])
    for (const args of invocations) checkCommandLine(args)
  })

  it("shows a CI workflow whose cachelab steps parse with the commands' own flags", () => {
    const workflows = fences(README).filter((fence) => fence.info === 'yaml')
    expect(workflows).toHaveLength(1)
    const steps = (workflows[0]?.lines ?? [])
      .map((line) => /^\s*- run: (.*)$/.exec(line)?.[1])
      .filter((line): line is string => line !== undefined)
      .flatMap(cachelabInvocations)
    expect(steps.map((args) => args[0])).toEqual(['run', 'check'])
    for (const args of steps) checkCommandLine(args)
    expect(steps[1]).toContain('--reporter')
  })

  it('links only to files that exist, or to the page the install route is written into', () => {
    const missing = [...README.matchAll(/\]\(((?:docs\/)?[\w./-]+\.md)(?:#[\w-]+)?\)/g)]
      .map((match) => match[1] as string)
      .filter((path) => path !== 'docs/install.md')
      .filter((path) => {
        try {
          read(path)
          return false
        } catch {
          return true
        }
      })
    expect(missing).toEqual([])
  })
})

describe('docs/*.md', () => {
  it("parses every cachelab command line with the command's own flags", () => {
    const problems: string[] = []
    let checked = 0
    for (const file of DOCS)
      for (const fence of fences(read(file)).filter((each) => each.info === 'sh'))
        for (const line of commandLines(fence))
          for (const args of cachelabInvocations(line)) {
            checked += 1
            try {
              checkCommandLine(args)
            } catch (error) {
              problems.push(`${file}:${fence.line}: cachelab ${args.join(' ')}: ${(error as Error).message}`)
            }
          }
    expect(problems).toEqual([])
    expect(checked).toBeGreaterThan(20)
  })

  it('a renamed option fails the parse', () => {
    expect(() => checkCommandLine(['run', '--scenarioz', 'append-only'])).toThrow(/scenarioz/)
    expect(() => checkCommandLine(['serv'])).toThrow(/unknown command/)
    expect(() => checkCommandLine(['record', '--out', 'x', '--', 'node', '--anything'])).not.toThrow()
  })

  it('prints what docs/import.md says its examples print', () => {
    const problems: string[] = []
    for (const [file, line] of DOCS_RUN) {
      const all = fences(read(file))
      const index = all.findIndex((fence) => fence.info === 'sh' && commandLines(fence).includes(line))
      expect(index, line).not.toBe(-1)
      const shown = outputAfter(all, index)
      expect(shown, line).toBeDefined()
      for (const missing of shownIn(shown?.lines ?? [], docsRuns.get(`${file}: ${line}`) ?? ''))
        problems.push(`${file}: not printed: ${missing}`)
    }
    expect(problems).toEqual([])
  })

  it("quotes the validate summary of the quick start's first scenario as validate prints it", () => {
    const gate = readmeRuns.find((run) => commandLines(run.fence)[0]?.includes('check --baseline'))
    expect(gate).toBeDefined()
    const sessions = readdirSync(join(workspace, 'reports', 'out', 'ci', 'sessions')).length
    const events = readdirSync(join(workspace, 'reports', 'out', 'ci', 'sessions')).reduce(
      (sum, name) =>
        sum +
        readFileSync(join(workspace, 'reports', 'out', 'ci', 'sessions', name), 'utf8')
          .trim()
          .split('\n').length,
      0,
    )
    expect(read('docs/reports.md')).toContain(
      `validated ${sessions} session logs: ${sessions} valid, 0 invalid, ${events} events`,
    )
  })

  it("quotes the AI SDK's finding as the README's library run measured it", () => {
    const library =
      readmeRuns.find((run) => commandLines(run.fence)[0]?.includes('--loop ai-sdk'))?.output ?? ''
    const [, sdk] = /sdk +([\d.]+%)/.exec(library) ?? []
    const [, aiSdk, versus] = /ai-sdk +([\d.]+%) +[\d,]+ +\$[\d.]+ +(\+\$[\d.]+)/.exec(library) ?? []
    const [, sent, asked, requests] = /(\d+) of (\d+) cache marks sent, (\d+) requests/.exec(library) ?? []
    expect(read('docs/scenarios.md')).toContain(
      `warm hit ${aiSdk} against the reference's ${sdk}, ${versus}; ${sent} of ${asked} marks sent on ${requests} requests`,
    )
    expect(read('docs/scenarios.md')).toContain(
      `On \`append-only\` all ${baseline.find((row) => row.scenario === 'append-only')?.requests} requests agree`,
    )
  })
})

/**
 * Every measured figure in README.md and docs/*.md — a count of sessions, requests, tokens, events or
 * conversations, a percentage, a dollar amount, an "N of M" — sits on a line one of these covers: an output
 * fence this file compares with what the command printed, a passage a test here or elsewhere computes, or
 * a rule, default or input stated with its source. A new figure on an uncovered line fails until it is one
 * of these.
 */
const COVERED: { file: string; fragment: string; by: string }[] = [
  { file: 'README.md', fragment: 'plays 169 sessions', by: 'computed here (the planned matrix)' },
  {
    file: 'README.md',
    fragment: 'a new or grown break of 1,024 tokens or',
    by: "computed here (check's defaults)",
  },
  { file: 'README.md', fragment: 'cost more than 1% above it', by: "computed here (check's defaults)" },
  {
    file: 'docs/cli.md',
    fragment: '`anthropic: 12 of 12 attempts failed',
    by: 'format: the line run prints',
  },
  { file: 'docs/development.md', fragment: '1,000 turns', by: "input: the benchmark's sizes (bin/bench.ts)" },
  {
    file: 'docs/development.md',
    fragment: '20,000 sessions',
    by: "input: the benchmark's sizes (bin/bench.ts)",
  },
  {
    file: 'docs/development.md',
    fragment: '11 MB request',
    by: "input: the benchmark's sizes (bin/bench.ts)",
  },
  {
    file: 'docs/gate.md',
    fragment: 'FAIL  ',
    by: 'bin/gate-acceptance.test.ts (the same rewrite at turn 700)',
  },
  {
    file: 'docs/import.md',
    fragment: 'at least 1,024 tokens less',
    by: 'rule: notes/2026-11-30-import-classification.md',
  },
  {
    file: 'docs/import.md',
    fragment: '--policy keep-live: 1 DSH',
    by: 'computed here (the policy example, run)',
  },
  {
    file: 'docs/keyed.md',
    fragment: 'Defaults: 256 tokens and 0.1',
    by: "default: the keyed suite's tolerance",
  },
  {
    file: 'docs/library.md',
    fragment: '1,024 tokens or more',
    by: 'npm run test:pack (bin/pack-e2e.ts runs the example)',
  },
  {
    file: 'docs/library.md',
    fragment: '1,664 tokens lost',
    by: 'npm run test:pack (bin/pack-e2e.ts runs the example)',
  },
  { file: 'docs/providers.md', fragment: '32 tokens unless scripted', by: "default: the mock's reasoning" },
  { file: 'docs/providers.md', fragment: '10% of hits miss', by: 'rule: implicitMissRate in the catalog' },
  { file: 'docs/reports.md', fragment: 'reads under 1% at', by: "rule: the scenario's claim" },
  { file: 'docs/reports.md', fragment: 'above 99% warm', by: "rule: the scenario's claim" },
  { file: 'docs/reports.md', fragment: '169 sessions and 12,767 requests', by: 'computed here (baseline)' },
  {
    file: 'docs/reports.md',
    fragment: '2 sessions of 5 conversations',
    by: 'reports/table.test.ts (its fixture)',
  },
  {
    file: 'docs/reports.md',
    fragment: 'more than 200 requests',
    by: "rule: the chart's width (reports/html)",
  },
  { file: 'docs/reports.md', fragment: 'validated 6 session logs', by: 'computed here (the gate run)' },
  { file: 'docs/scenarios.md', fragment: 'warm hit ratio above 99%', by: "rule: the scenario's claim" },
  {
    file: 'docs/scenarios.md',
    fragment: '80% of the 1,000,000-token window',
    by: "rule: DSH's own threshold",
  },
  { file: 'docs/scenarios.md', fragment: 'all 13 requests agree', by: 'computed here (baseline)' },
  { file: 'docs/scenarios.md', fragment: 'warm hit 73.98%', by: 'computed here (the README library run)' },
  { file: 'docs/serve.md', fragment: 'c-b6923c1f', by: 'bin/capture.test.ts' },
  { file: 'docs/serve.md', fragment: '(3 with usage not', by: 'bin/capture.test.ts' },
  { file: 'docs/gate.md', fragment: 'c-df7d3b84', by: 'bin/capture.test.ts' },
  {
    file: 'docs/gate.md',
    fragment: "168 more baseline sessions are outside the run's plan",
    by: 'bin/api.test.ts (the same run, checked)',
  },
  { file: 'docs/gate.md', fragment: 'router-session · anthropic: cost', by: 'reports/gateway-rows.test.ts' },
  { file: 'docs/serve.md', fragment: 'cachelab record: node exited 0', by: 'bin/record-command.test.ts' },
  { file: 'docs/reports.md', fragment: 'c-cf050532', by: 'bin/record-command.test.ts' },
  { file: 'docs/serve.md', fragment: '  anthropic  ', by: 'reports/table.test.ts (its fixture)' },
  { file: 'docs/serve.md', fragment: 'An 11 MB request', by: "input: the benchmark's size" },
]

const FIGURE =
  /\d[\d,.]*\s?%|\$\d[\d,.]*|\b\d[\d,]*(?:\.\d+)?\s(?:sessions?|requests?|tokens?|events|session logs?|MB|conversations?|claims|failures|turns)\b|\b\d[\d,]* of \d[\d,]*\b/

describe('every measured figure', () => {
  it('is on a line a check covers', () => {
    const uncovered: string[] = []
    for (const file of ['README.md', ...DOCS]) {
      const lines = read(file).split('\n')
      const checkedFences = new Set<number>()
      const all = fences(read(file))
      for (const [index, fence] of all.entries()) {
        const output = outputAfter(all, index)
        const runs =
          file === 'README.md'
            ? readmeRuns.some((run) => run.fence.line === fence.line)
            : fence.info === 'sh' &&
              DOCS_RUN.some(([at, line]) => at === file && commandLines(fence).includes(line))
        const quick = file === 'README.md' && fence.line === (fences(README)[0]?.line ?? 0)
        if (output !== undefined && (runs || quick))
          for (let line = output.line; line <= output.line + output.lines.length; line += 1)
            checkedFences.add(line)
      }
      // The performance section is the bench's output; scenarios/bench-contract.test.ts checks it.
      const benchStart = lines.indexOf(SECTION_START)
      const benchEnd = lines.indexOf(SECTION_END)
      for (const [index, line] of lines.entries()) {
        if (benchStart >= 0 && index > benchStart && index < benchEnd) continue
        if (!FIGURE.test(line) || checkedFences.has(index)) continue
        if (COVERED.some((entry) => entry.file === file && line.includes(entry.fragment))) continue
        uncovered.push(`${file}:${index + 1}: ${line.trim()}`)
      }
    }
    expect(uncovered).toEqual([])
  })
})
