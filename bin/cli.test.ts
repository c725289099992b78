import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { AGENT_DRIVERS } from '../harness/loops/agents/index.ts'
import { STEP_COLUMNS } from '../reports/types.ts'
import { COMMAND_SPECS } from './commands.ts'
import { runCli, withEnv } from './testing.ts'

describe('cachelab run', () => {
  it('runs a scenario, prints a summary and writes the CSVs and session logs', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-cli-'))
    const { code, stdout } = await runCli([
      'run',
      '--scenario',
      'append-only',
      '--provider',
      'openai-chat',
      '--out',
      out,
    ])
    expect(code).toBe(0)
    expect(stdout).toContain('append-only')
    expect(readFileSync(join(out, 'steps.csv'), 'utf8').split('\n')[0]).toBe(STEP_COLUMNS.join(','))
    expect(readFileSync(join(out, 'summary.csv'), 'utf8')).toContain('append-only,default,openai-chat')
    expect(readdirSync(join(out, 'sessions'))).toEqual(['append-only.default.openai-chat.jsonl'])
  })

  it('prints the summary as JSON with --json', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-cli-'))
    const { code, stdout } = await runCli([
      'run',
      '--scenario',
      'append-only',
      '--provider',
      'openai-chat',
      '--out',
      out,
      '--json',
    ])
    expect(code).toBe(0)
    const parsed = JSON.parse(stdout)
    expect(parsed.summary[0]).toMatchObject({ scenario: 'append-only', provider: 'openai-chat' })
  })

  it('lists the variants an explicit model cannot serve, in the terminal and in --json, with no rows for them', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-na-'))
    const argv = [
      'run',
      '--scenario',
      'prompt-change',
      '--provider',
      'anthropic',
      '--model',
      'claude-sonnet-4-6',
    ]
    const terminal = await runCli([...argv, '--out', out])
    expect(terminal.code).toBe(0)
    expect(terminal.stdout).toMatch(
      /not applicable[^\n]*\n {2}prompt-change\/in-history on anthropic \(claude-sonnet-4-6\): needs the in-history system-prompt route/,
    )
    expect(readFileSync(join(out, 'summary.csv'), 'utf8')).not.toContain('prompt-change,in-history')
    const json = await runCli([...argv, '--out', out, '--json'])
    expect(JSON.parse(json.stdout).notApplicable).toEqual([
      {
        scenario: 'prompt-change',
        variant: 'in-history',
        provider: 'anthropic',
        model: 'claude-sonnet-4-6',
        reason: expect.stringContaining('reads the system prompt only at the head'),
      },
    ])
  })

  it('runs prompt-change on Anthropic on a model that reads system messages in history when none is named', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-route-'))
    const argv = ['run', '--scenario', 'prompt-change', '--provider', 'anthropic', '--out', out, '--json']
    const { code, stdout } = await runCli(argv)
    expect(code).toBe(0)
    const parsed = JSON.parse(stdout)
    expect(parsed.notApplicable).toEqual([])
    expect(parsed.summary).toEqual([
      expect.objectContaining({ variant: 'in-history', model: 'claude-opus-4-8', failedAttempts: 0 }),
      expect.objectContaining({ variant: 'unsupported', model: 'claude-opus-4-8', failedAttempts: 0 }),
    ])
  })

  it.each([
    [
      [
        'run',
        '--scenario',
        'prompt-change',
        '--variant',
        'in-history',
        '--provider',
        'anthropic',
        '--model',
        'claude-sonnet-4-6',
      ],
      /nothing to run: prompt-change\/in-history on anthropic \(claude-sonnet-4-6\): needs the in-history/,
    ],
    [['run', '--provider', 'nope'], /unknown provider "nope"/],
    [['run', '--scenario', 'nope'], /unknown scenario "nope"/],
    [['run', '--bogus'], /unknown option '--bogus'/],
    [['run', '--provider', 'openai-chat', '--model', 'gpt-0'], /unknown openai-chat model "gpt-0"/],
    [['frobnicate'], /unknown command "frobnicate"/],
  ])('exits 2 with a one-line reason for %j', async (argv, reason) => {
    const { code, stderr } = await runCli(argv)
    expect(code).toBe(2)
    expect(stderr).toMatch(reason)
    expect(stderr.trim().split('\n')).toHaveLength(1)
  })
})

describe('the cachelab executable', () => {
  it('runs the TypeScript CLI without a build step', () => {
    const result = spawnSync(process.execPath, ['bin/cachelab.js', 'list'], { encoding: 'utf8' })
    expect(result.status).toBe(0)
    expect(result.stdout).toContain('append-only')
  })

  it('lists the coding agents at their pinned versions and the agent scenarios', () => {
    const { stdout } = spawnSync(process.execPath, ['bin/cachelab.js', 'list'], { encoding: 'utf8' })
    for (const [name, driver] of Object.entries(AGENT_DRIVERS))
      expect(stdout).toContain(`${name}: ${driver.package}@${driver.version}`)
    expect(stdout).toMatch(/Agent scenarios[^\n]*\n {2}resume: /)
    expect(stdout).toContain('  model-switch: ')
  })
})

describe('cachelab run --live', () => {
  it('runs against the base URLs and keys of the environment (here a loopback server) and predicts each step', async () => {
    const { startLoopback } = await import('../providers/mock/loopback.ts')
    const server = await startLoopback({ upstream: 'sim', port: 0 })
    const out = mkdtempSync(join(tmpdir(), 'cachelab-live-'))
    const env = { DEEPSEEK_API_KEY: 'cachelab-test-live-key', DEEPSEEK_BASE_URL: server.baseURLs.deepseek }
    const argv = ['run', '--live', '--scenario', 'append-only', '--provider', 'deepseek', '--out', out]
    const { code, stdout } = await withEnv(env, () => runCli(argv)).finally(() => server.close())
    expect(code).toBe(0)
    const steps = readFileSync(join(out, 'steps.csv'), 'utf8')
    expect(steps.split('\n')[1]).toMatch(/^live-/)
    expect(steps).not.toContain('cachelab-test-live-key')
    expect(readFileSync(join(out, 'summary.csv'), 'utf8')).toContain('append-only,default,deepseek')
    expect(stdout).toContain('append-only')
  })

  it('asks Anthropic for its cache diagnostics, writes its reasons beside the causes and counts where they disagree', async () => {
    const { startLoopback } = await import('../providers/mock/loopback.ts')
    const server = await startLoopback({ upstream: 'sim', port: 0 })
    const out = mkdtempSync(join(tmpdir(), 'cachelab-live-diagnostics-'))
    const env = { ANTHROPIC_API_KEY: 'cachelab-test-live-key', ANTHROPIC_BASE_URL: server.baseURLs.anthropic }
    const argv = ['run', '--live', '--scenario', 'prompt-change', '--provider', 'anthropic', '--out', out]
    const { code, stdout } = await withEnv(env, () => runCli(argv)).finally(() => server.close())
    expect(code).toBe(0)
    expect(stdout).toMatch(
      /provider diagnostics: (\d+) requests diagnosed, \1 agree with cachelab's cause, 0 disagree/,
    )
    const steps = readFileSync(join(out, 'steps.csv'), 'utf8').trimEnd().split('\n')
    const columns = (steps[0] ?? '').split(',')
    const reasons = steps
      .slice(1)
      .map((line) => line.split(','))
      .map((cells) => [cells[columns.indexOf('break_cause')], cells[columns.indexOf('provider_diagnosis')]])
    expect(reasons).toContainEqual(['system-replace', 'system_changed'])
    expect(reasons).toContainEqual(['', 'none'])
  })

  it('exits 1 naming the provider whose every attempt failed (an unreachable base URL), and still writes the outputs', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-unreachable-'))
    const key = 'cachelab-fake-key-for-an-unreachable-host'
    // Port 9 (discard) is closed on loopback: every connection is refused at once.
    const env = { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }
    const argv = ['run', '--live', '--scenario', 'append-only', '--provider', 'anthropic', '--out', out]
    const { code, stdout, stderr } = await withEnv(env, () => runCli(argv))
    expect(code).toBe(1)
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^anthropic: (\d+) of \1 attempts failed \(network: .+\)$/),
    ])
    expect(stdout).toMatch(/0 requests, \d+ failed attempts/)
    const summary = readFileSync(join(out, 'summary.csv'), 'utf8')
    expect(summary).toContain('append-only,default,anthropic')
    const logs = readdirSync(join(out, 'sessions')).map((name) =>
      readFileSync(join(out, 'sessions', name), 'utf8'),
    )
    for (const text of [stdout, stderr, summary, readFileSync(join(out, 'steps.csv'), 'utf8'), ...logs]) {
      expect(text).not.toContain(key)
    }
  })

  it('names the missing key variable and exits 2', async () => {
    const out = mkdtempSync(join(tmpdir(), 'x-'))
    const argv = ['run', '--live', '--scenario', 'append-only', '--provider', 'anthropic', '--out', out]
    const { code, stderr } = await withEnv({ ANTHROPIC_API_KEY: undefined }, () => runCli(argv))
    expect(code).toBe(2)
    expect(stderr).toContain('ANTHROPIC_API_KEY')
  })
})
describe('cachelab run output', () => {
  it('writes a self-contained report.html beside the CSVs', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-html-'))
    const { code } = await runCli([
      'run',
      '--scenario',
      'prompt-change',
      '--provider',
      'anthropic',
      '--out',
      out,
    ])
    expect(code).toBe(0)
    const html = readFileSync(join(out, 'report.html'), 'utf8')
    expect(html).toContain('<svg')
    expect(html).toContain('prompt-change')
    expect(html).not.toMatch(/https?:\/\//)
  })
})

describe('the conventions of the command line', () => {
  const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }

  it.each([['--help'], ['-h'], ['help']])('%s prints every command in a line and exits 0', async (flag) => {
    const { code, stdout } = await runCli([flag])
    expect(code).toBe(0)
    for (const name of Object.keys(COMMAND_SPECS)) expect(stdout).toMatch(new RegExp(`^ {2}${name} `, 'm'))
    expect(stdout).toContain('Exit codes: 0 ok, 1 a check failed, 2 usage or input error.')
  })

  it('prints the overview with exit 2 when given no command', async () => {
    const { code, stdout } = await runCli([])
    expect(code).toBe(2)
    expect(stdout).toContain('Usage: cachelab <command> [options]')
  })

  it.each([[['run', '--help']], [['run', '--scenario', 'nope', '-h']], [['help', 'run']]])(
    '%j prints run’s flags and exits 0, running nothing',
    async (argv) => {
      const { code, stdout, stderr } = await runCli(argv)
      expect(code).toBe(0)
      expect(stdout).toMatch(/^Usage: cachelab run \[options\]/)
      expect(stdout).toContain('--scenario <NAME[,NAME]|all>')
      expect(stderr).toBe('')
    },
  )

  it.each([['--version'], ['-V']])('%s prints the package version', async (flag) => {
    const { code, stdout } = await runCli([flag])
    expect(code).toBe(0)
    expect(stdout).toBe(`${version}\n`)
  })

  it.each([
    [['rn'], 'unknown command "rn" (did you mean run? cachelab --help lists the commands)'],
    [['help', 'chek'], 'unknown command "chek" (did you mean check? cachelab --help lists the commands)'],
    [['run', '--scenaro', 'append-only'], "unknown option '--scenaro' (did you mean --scenario?)"],
    [
      ['check', '--baseline', 'reports/baselines', '--tolerance', '-3'],
      '--tolerance takes percentage points, such as 0.5 (a number >= 0); got "-3"',
    ],
    [['run', '--jobs', 'abc'], '--jobs takes a whole number of worker threads from 1 to 256, got "abc"'],
    [
      ['run', '--jobs', '99999999999999999999'],
      '--jobs takes a whole number of worker threads from 1 to 256, got "99999999999999999999"',
    ],
    [
      ['compare'],
      'compare needs two files or more, got 0: cachelab compare A.csv B.csv [C.csv …] (cachelab compare --help: what it does and its flags)',
    ],
    [
      ['check'],
      'check needs --baseline DIR (a run directory or reports/baselines); usage: cachelab check [options] (cachelab check --help: what it does and its flags)',
    ],
  ])('%j exits 2 with: %s', async (argv, reason) => {
    const { code, stderr } = await runCli(argv)
    expect(code).toBe(2)
    expect(stderr).toBe(`cachelab: ${reason}\n`)
  })

  it.each([
    [
      ['serve', '--replies', 'nope.json'],
      /^cannot read --replies nope\.json: no such file \(from .+\): check the path, or write the replies file/,
    ],
    [
      ['serve', '--faults', 'nope.json'],
      /^cannot read --faults nope\.json: no such file \(from .+\): check the path, or write the schedule/,
    ],
    [
      ['list', '--catalog', 'nope.json'],
      /^cannot read the catalog nope\.json: no such file \(from .+\): check the path of --catalog/,
    ],
    [
      ['simulate', '--provider', 'anthropic', 'nope.jsonl'],
      /^cannot read nope\.jsonl: no such file \(from .+\): check the path, or pipe/,
    ],
    [
      ['check', '--baseline', 'nope'],
      /^baseline directory nope does not exist \(from .+\): name a run folder or a baseline such as reports\/baselines, or make one from a run with cachelab check --baseline nope --update$/,
    ],
  ])('%j names the file and what to do', async (argv, reason) => {
    const { code, stderr } = await runCli(argv)
    expect(code).toBe(2)
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr.trim().replace(/^cachelab: /, '')).toMatch(reason)
  })
})
