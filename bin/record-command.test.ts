// `cachelab record` around a user's own agent: a Node script that knows nothing of cachelab but the
// base-URL variable, asking three questions of a growing conversation. The baseline is a first record
// run; the same agent holds against it, a system-prompt rewrite fails naming the break, and a crash or a
// Ctrl-C leaves no process and no port behind.

import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DOMParser } from '@xmldom/xmldom'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { fillerText } from '../harness/filler.ts'
import { compatibleProviders } from '../providers/compatible.ts'
import { SIMULATED_KEY } from '../providers/endpoints.ts'
import { commandEnvironment, commandExitCode, shownCommand } from '../providers/mock/around.ts'
import { parseStepsCsv } from '../reports/parse.ts'
import { alive, eventually, listening, runCli, withEnv } from './testing.ts'

const BIN = fileURLToPath(new URL('./cachelab.js', import.meta.url))
const ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * The agent: three turns against ANTHROPIC_BASE_URL, the system prompt from AGENT_SYSTEM (from the third
 * request on AGENT_SYSTEM_LATER when set). AGENT_CRASH_AFTER=N exits 3 after N requests; AGENT_HANG_AFTER=N
 * writes its pid to AGENT_PID_FILE after N requests and waits to be killed.
 */
const AGENT = `
const base = process.env.ANTHROPIC_BASE_URL
const messages = []
for (let turn = 1; turn <= 3; turn += 1) {
  if (Number(process.env.AGENT_CRASH_AFTER) === turn - 1) process.exit(3)
  if (Number(process.env.AGENT_HANG_AFTER) === turn - 1) {
    (await import('node:fs')).writeFileSync(process.env.AGENT_PID_FILE, String(process.pid))
    setInterval(() => {}, 1000)
    await new Promise(() => {})
  }
  const system = turn >= 3 && process.env.AGENT_SYSTEM_LATER ? process.env.AGENT_SYSTEM_LATER : process.env.AGENT_SYSTEM
  messages.push({ role: 'user', content: 'Question ' + turn + ': what should I look at next?' })
  const response = await fetch(base + '/v1/messages', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': process.env.ANTHROPIC_API_KEY,
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify({
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
      messages,
    }),
  })
  if (!response.ok) {
    console.error('agent: HTTP ' + response.status + ' ' + (await response.text()))
    process.exit(9)
  }
  const reply = await response.json()
  messages.push({ role: 'assistant', content: reply.content })
}
`

const SYSTEM = fillerText(2000, 'record-agent-system')

function agentFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'cachelab-record-agent-')), 'my-agent.mjs')
  writeFileSync(file, AGENT)
  return file
}

const folder = () => mkdtempSync(join(tmpdir(), 'cachelab-record-'))

/** The port record's start line names. */
function portOf(stderr: string): number {
  const port = /cachelab record: serving on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)?.[1]
  if (port === undefined) throw new Error(`no start line in ${JSON.stringify(stderr)}`)
  return Number(port)
}

function stepsIn(dir: string) {
  return parseStepsCsv(readFileSync(join(dir, 'steps.csv'), 'utf8'), 'steps.csv')
}

/** Record the agent into `out`, with the agent's variables set. */
function record(agent: string, out: string, env: Record<string, string | undefined>, flags: string[] = []) {
  return withEnv({ AGENT_SYSTEM: SYSTEM, ...env }, () =>
    runCli(['record', '--out', out, ...flags, '--', process.execPath, agent]),
  )
}

const started: ChildProcess[] = []
const agents: number[] = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const pid of agents.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL')
})

describe('cachelab record --baseline B -- node my-agent.js', () => {
  it('passes on the same agent, and fails naming the break and showing the date it put in its system prompt', {
    timeout: 180_000,
  }, async () => {
    const agent = agentFile()
    const baseline = join(folder(), 'baseline')
    const first = await record(agent, baseline, {})
    expect(first.code).toBe(0)
    expect(first.stdout).toMatch(
      /^cachelab record: .*node exited 0; 3 requests captured in 1 conversation; report .*baseline\/report\.html; gate: no baseline\n$/,
    )
    for (const file of ['steps.csv', 'summary.csv', 'breaks.csv', 'report.html', 'capture/capture.json'])
      expect(existsSync(join(baseline, file))).toBe(true)
    const rows = stepsIn(baseline)
    expect(rows.map((row) => `${row.turn}.${row.step}`)).toEqual(['1.1', '2.1', '3.1'])
    expect(rows[2]?.cacheReadTokens).toBeGreaterThan(2000)
    expect(await listening(portOf(first.stderr))).toBe(false)

    const same = await record(agent, join(folder(), 'same'), {}, ['--baseline', baseline])
    expect(same.code).toBe(0)
    expect(same.stdout).toContain('OK: 1 of 1 baseline sessions hold')
    expect(same.stdout).toMatch(/gate: holds against .*baseline\n$/)

    // The agent now puts today's date at the top of its system prompt from the third request on.
    const rewritten = join(folder(), 'rewritten')
    const junit = join(folder(), 'junit.xml')
    const broken = await record(agent, rewritten, { AGENT_SYSTEM_LATER: `Today is 2026-12-07.\n${SYSTEM}` }, [
      '--baseline',
      baseline,
      '--reporter',
      `text,junit=${junit}`,
    ])
    expect(broken.code).toBe(1)
    expect(broken.stdout).toMatch(
      /new break: capture · c-[0-9a-f]{8} · anthropic 3\.1: system-replace at system\[0\], [\d,]+ tokens lost/,
    )
    // The gate's line shows what changed beneath it, as a test runner shows a difference: the date that came in.
    expect(broken.stdout).toMatch(
      /^FAIL {2}new break: capture · c-[0-9a-f]{8} · anthropic 3\.1: system-replace at system\[0\], [\d,]+ tokens lost \(\$[\d.]+\)\n {8}system\[0\]: inserted at its start\n {8}\+ "Today is 2026-12-07\.\\n"\n/m,
    )
    // The same verdict as JUnit XML, for CI's test view: the session's failure shows the date that came in.
    const suite = new DOMParser().parseFromString(readFileSync(junit, 'utf8'), 'text/xml')
    const failures = Array.from(suite.getElementsByTagName('failure'))
    expect(failures).toHaveLength(1)
    expect(failures[0]?.textContent).toContain('+ "Today is 2026-12-07.\\n"')
    // Against a baseline the gate names the breaks; record lists none of its own beside them.
    expect(broken.stdout).not.toMatch(/^breaks:/m)
    // Without one, record lists each break with its change, as report does; docs/reports.md shows them.
    const alone = await record(agent, join(folder(), 'alone'), {
      AGENT_SYSTEM_LATER: `Today is 2026-12-07.\n${SYSTEM}`,
    })
    const block = /^breaks:\n(?: {2}.*\n)+/m.exec(alone.stdout)?.[0] ?? 'no breaks printed'
    expect(block).toContain('      + "Today is 2026-12-07.\\n"')
    expect(readFileSync(new URL('../docs/reports.md', import.meta.url), 'utf8')).toContain(block)
    // report.html shows the two requests side by side at the break, the date marked as inserted.
    const page = readFileSync(join(rewritten, 'report.html'), 'utf8')
    expect(page).toMatch(/<a href="#(session-\d+-change-3-1-0)">what changed<\/a>/)
    expect(page).toMatch(
      /<div class="change" id="session-\d+-change-3-1-0">[\s\S]*<span class="sub">this request<\/span><pre><ins>Today is 2026-12-07\.↵\n<\/ins><\/pre>/,
    )
    // The capture kept those words, and no other text of the agent's requests.
    const capture = readFileSync(
      join(rewritten, 'capture', 'sessions', `${stepsIn(rewritten)[0]?.variant}.jsonl`),
      'utf8',
    )
    expect(capture).toContain('Today is 2026-12-07.')
    expect(capture).not.toContain('Question 1')
    expect(capture).not.toContain(SYSTEM.slice(0, 40))
    expect(broken.stdout).toMatch(
      /node exited 0; 3 requests captured .* gate: fails against .*baseline \(\d+ failures?\)\n$/,
    )
    expect(stepsIn(rewritten)[2]).toMatchObject({ breakNode: 'system[0]', breakCause: 'system-replace' })
    // docs/serve.md's record line is the one printed here, paths aside.
    const readme = readFileSync(new URL('../docs/serve.md', import.meta.url), 'utf8')
    const shown = /^cachelab record: .*$/m.exec(readme)?.[0] ?? ''
    const printed = /^cachelab record: .*$/m.exec(same.stdout)?.[0] ?? ''
    const shape = (line: string) => line.replace(/[^\s;]*\/[^\s;]*/g, 'PATH')
    expect(shape(printed)).toBe(shape(shown))
  })

  it('exits with the code of an agent that crashes, writes the report of what it sent, and stops serving', {
    timeout: 180_000,
  }, async () => {
    const agent = agentFile()
    const baseline = join(folder(), 'baseline')
    expect((await record(agent, baseline, {})).code).toBe(0)
    const out = join(folder(), 'crashed')
    const crashed = await record(agent, out, { AGENT_CRASH_AFTER: '2' }, ['--baseline', baseline])
    expect(crashed.code).toBe(3)
    expect(crashed.stdout).toMatch(
      /node exited 3; 2 requests captured in 1 conversation; .* gate: \w+ against/,
    )
    expect(stepsIn(out)).toHaveLength(2)
    expect(await listening(portOf(crashed.stderr))).toBe(false)
  })

  it('at SIGINT passes it to the agent, waits for it, stops serving and still writes the report', {
    timeout: 180_000,
  }, async () => {
    const agent = agentFile()
    const out = join(folder(), 'interrupted')
    const pidFile = join(folder(), 'agent.pid')
    const child = spawn(process.execPath, [BIN, 'record', '--out', out, '--', process.execPath, agent], {
      cwd: ROOT,
      env: { ...process.env, AGENT_SYSTEM: SYSTEM, AGENT_HANG_AFTER: '1', AGENT_PID_FILE: pidFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    started.push(child)
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    expect(await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 120_000)).toBe(
      true,
    )
    const pid = Number(readFileSync(pidFile, 'utf8'))
    agents.push(pid)
    const port = portOf(stderr)
    expect(await listening(port)).toBe(true)
    // Only record is signalled, as `kill -INT` would: the agent hears of it from record alone.
    child.kill('SIGINT')
    expect(await exited).toBe(130)
    expect(alive(pid)).toBe(false)
    expect(await listening(port)).toBe(false)
    expect(stdout).toMatch(/node was ended by SIGINT; 1 request captured in 1 conversation;/)
    expect(stepsIn(out)).toHaveLength(1)
  })

  it('killed with SIGKILL (no handler runs), still ends the agent it started', {
    timeout: 180_000,
  }, async () => {
    const agent = agentFile()
    const pidFile = join(folder(), 'agent.pid')
    const child = spawn(
      process.execPath,
      [BIN, 'record', '--out', join(folder(), 'killed'), '--', process.execPath, agent],
      {
        cwd: ROOT,
        env: { ...process.env, AGENT_SYSTEM: SYSTEM, AGENT_HANG_AFTER: '1', AGENT_PID_FILE: pidFile },
        stdio: ['ignore', 'ignore', 'ignore'],
      },
    )
    started.push(child)
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    expect(await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 120_000)).toBe(
      true,
    )
    const pid = Number(readFileSync(pidFile, 'utf8'))
    agents.push(pid)
    child.kill('SIGKILL')
    await exited
    // The agent would otherwise hang on, reparented to init.
    expect(await eventually(() => !alive(pid), 30_000)).toBe(true)
  })
})

describe('cachelab record input', () => {
  it('refuses a missing command, a missing baseline and --out equal to --baseline, in one line before starting', async () => {
    const noCommand = await runCli(['record', '--out', folder()])
    expect(noCommand.code).toBe(2)
    expect(noCommand.stderr).toBe(
      'cachelab: record needs a command after --: cachelab record [--out DIR] [--baseline DIR [--reporter NAME[=FILE],...]] [serve flags] -- COMMAND [ARGS...]\n',
    )
    const out = join(folder(), 'out')
    const noBaseline = await runCli(['record', '--out', out, '--baseline', join(out, 'nope'), '--', 'true'])
    expect(noBaseline.code).toBe(2)
    expect(noBaseline.stderr.trim().split('\n')).toHaveLength(1)
    expect(existsSync(out)).toBe(false)
    const same = await runCli(['record', '--out', out, '--baseline', out, '--', 'true'])
    expect(same.code).toBe(2)
    expect(same.stderr).toMatch(/--out and --baseline name the same folder/)
    // A reporter renders the gate's verdict: without a baseline there is none; on stdout it would mix with record's.
    const noGate = await runCli(['record', '--out', out, '--reporter', 'junit=x.xml', '--', 'true'])
    expect(noGate.code).toBe(2)
    expect(noGate.stderr).toMatch(/--reporter renders the gate's verdict, so it needs --baseline/)
    const mixed = await runCli([
      'record',
      '--out',
      out,
      '--baseline',
      out,
      '--reporter',
      'junit',
      '--',
      'true',
    ])
    expect(mixed.code).toBe(2)
    expect(mixed.stderr).toBe(
      'cachelab: record prints its own lines on stdout: give junit a file (--reporter junit=FILE)\n',
    )
    const typo = await runCli([
      'record',
      '--out',
      out,
      '--baseline',
      out,
      '--reporter',
      'junt=x',
      '--',
      'true',
    ])
    expect(typo.stderr).toMatch(/unknown reporter "junt"/)
    expect(existsSync(out)).toBe(false)
  })

  it('names a command that cannot start, leaves no capture, and the same --out then records', {
    timeout: 120_000,
  }, async () => {
    const out = join(folder(), 'out')
    const missing = await runCli(['record', '--out', out, '--', 'cachelab-no-such-command-26'])
    expect(missing.code).toBe(2)
    // Refused before serve starts: one line, and no folder left behind.
    expect(missing.stderr).toBe('cachelab: cannot run cachelab-no-such-command-26: no such command\n')
    expect(existsSync(out)).toBe(false)
    const path = await runCli(['record', '--out', out, '--', '/nonexistent'])
    expect(path.stderr).toBe('cachelab: cannot run /nonexistent: no such command\n')
    const script = join(folder(), 'not-executable.sh')
    writeFileSync(script, 'exit 0\n')
    const plain = await runCli(['record', '--out', out, '--', script])
    expect(plain.stderr).toBe(`cachelab: cannot run ${script}: not executable\n`)
    expect(existsSync(out)).toBe(false)
    const again = await runCli(['record', '--out', out, '--', process.execPath, '-e', ''])
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/0 requests captured in 0 conversations/)
  })

  it('passes the command its own flags untouched, --catalog included', async () => {
    const script = join(folder(), 'args.mjs')
    writeFileSync(script, "process.exit(process.argv.slice(2).join(' ') === '--catalog x --out y' ? 0 : 5)\n")
    const result = await runCli([
      'record',
      '--out',
      join(folder(), 'out'),
      '--',
      process.execPath,
      script,
      '--catalog',
      'x',
      '--out',
      'y',
    ])
    expect(result.code).toBe(0)
  })
})

describe("the command's environment", () => {
  const server = {
    baseURLs: {
      openai: 'http://127.0.0.1:9/openai/v1',
      anthropic: 'http://127.0.0.1:9/anthropic',
      deepseek: 'http://127.0.0.1:9/deepseek',
      bedrock: 'http://127.0.0.1:9/bedrock',
      gemini: 'http://127.0.0.1:9/gemini',
    },
    baseURL: (vendor: string) => `http://127.0.0.1:9/${vendor}/v1`,
  }

  it("points every vendor's base URL at the server, the caller's own included", () => {
    const env = commandEnvironment(
      server,
      { OPENAI_BASE_URL: 'https://staging.example/v1', PATH: '/bin' },
      'sim',
    )
    expect(env).toMatchObject({
      PATH: '/bin',
      OPENAI_BASE_URL: server.baseURLs.openai,
      ANTHROPIC_BASE_URL: server.baseURLs.anthropic,
      DEEPSEEK_BASE_URL: server.baseURLs.deepseek,
      GEMINI_BASE_URL: server.baseURLs.gemini,
      GOOGLE_GEMINI_BASE_URL: server.baseURLs.gemini,
      BEDROCK_BASE_URL: server.baseURLs.bedrock,
    })
    for (const provider of compatibleProviders())
      expect(env[provider.baseURLVariable]).toBe(`http://127.0.0.1:9/${provider.id}/v1`)
  })

  it('gives a placeholder only for a key left unset, and none through --upstream live', () => {
    const sim = commandEnvironment(server, { ANTHROPIC_API_KEY: 'sk-users-own', OPENAI_API_KEY: ' ' }, 'sim')
    expect(sim.ANTHROPIC_API_KEY).toBe('sk-users-own')
    expect(sim.OPENAI_API_KEY).toBe(SIMULATED_KEY)
    expect(sim.GEMINI_API_KEY).toBe(SIMULATED_KEY)
    const live = commandEnvironment(server, {}, 'live')
    expect(live.OPENAI_API_KEY).toBeUndefined()
    expect(live.ANTHROPIC_BASE_URL).toBe(server.baseURLs.anthropic)
  })

  it('is printed without the keys its arguments hold', () => {
    const env = { ANTHROPIC_API_KEY: 'plain-anthropic-key-0001', PATH: '/usr/local/bin' }
    expect(
      shownCommand(
        [
          'curl',
          '-H',
          'x-api-key: plain-anthropic-key-0001',
          'http://127.0.0.1:9/v1/models?key=query-key-0002',
        ],
        env,
      ),
    ).toBe('curl -H x-api-key: [redacted] http://127.0.0.1:9/v1/models?key=[redacted]')
    expect(shownCommand(['npx', 'vitest', 'run', '/usr/local/bin/suite'], env)).toBe(
      'npx vitest run /usr/local/bin/suite',
    )
  })

  it("gives the command's exit code, or 128 + the signal's number", () => {
    expect(commandExitCode({ code: 4, signal: null })).toBe(4)
    expect(commandExitCode({ code: null, signal: 'SIGINT' })).toBe(130)
    expect(commandExitCode({ code: null, signal: 'SIGTERM' })).toBe(143)
  })
})
