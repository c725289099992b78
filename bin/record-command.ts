// `cachelab record [--out DIR] [--baseline DIR] -- COMMAND...`: serve around any test run. serve starts in
// process on a free loopback port recording to DIR/capture, the command runs with every vendor's base URL
// pointing at it, serve stops whatever happens to the command, and the capture becomes DIR's report,
// gated against the baseline when one is named (notes/2026-12-02-record.md).

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { constants } from 'node:os'
import { basename, isAbsolute, join, relative, resolve } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import { compatibleProviders } from '../providers/compatible.ts'
import { ENV_NAMES, SIMULATED_KEY } from '../providers/endpoints.ts'
import type { LoopbackServer } from '../providers/mock/loopback.ts'
import { environmentSecrets, redactText } from '../providers/mock/serve-safety.ts'
import { CAPTURE_SCENARIO } from '../reports/capture-rows.ts'
import { parse } from './args.ts'
import { check, readRunDirectory } from './check.ts'
import { reportCapture } from './report.ts'
import { writeRunFiles } from './run-files.ts'
import { runStamp } from './run-folder.ts'
import { serveCommand } from './serve-command.ts'

const USAGE = 'cachelab record [--out DIR] [--baseline DIR] [serve flags] -- COMMAND [ARGS...]'

/** serve's flags that mean the same around a command; the port, host and --record are record's to choose. */
const SERVE_FLAGS_AROUND = {
  upstream: { type: 'string' },
  replies: { type: 'string' },
  faults: { type: 'string' },
  lenient: { type: 'boolean' },
  'record-bodies': { type: 'boolean' },
  log: { type: 'string' },
  'memory-budget': { type: 'string' },
  'max-body': { type: 'string' },
} as const

/** record's own flags and serve's. */
export const RECORD_FLAGS = {
  out: { type: 'string' },
  baseline: { type: 'string' },
  tolerance: { type: 'string' },
  ...SERVE_FLAGS_AROUND,
} as const

/** How the command ended: its exit code, or the signal that ended it. */
export interface CommandOutcome {
  code: number | null
  signal: NodeJS.Signals | null
}

export async function recordCommand(argv: string[]): Promise<number> {
  const split = argv.indexOf('--')
  const command = split === -1 ? [] : argv.slice(split + 1)
  const { values, positionals } = parse(split === -1 ? argv : argv.slice(0, split), RECORD_FLAGS, true)
  const [program, ...args] = command
  if (program === undefined || positionals.length > 0)
    throw new CachelabError('usage', `record needs a command after --: ${USAGE}`)
  const tolerance = values.tolerance === undefined ? undefined : Number(values.tolerance)
  if (tolerance !== undefined && (!Number.isFinite(tolerance) || tolerance < 0))
    throw new CachelabError(
      'usage',
      `--tolerance takes percentage points (a number >= 0), not ${values.tolerance}`,
    )
  const outDir = resolve(values.out ?? join('reports', 'out', `record-${runStamp()}`))
  const captureDir = join(outDir, 'capture')
  // Refused before anything starts: the gate would have nothing to compare with, or nothing new to read.
  if (values.baseline !== undefined) {
    if (resolve(values.baseline) === outDir)
      throw new CachelabError(
        'usage',
        '--out and --baseline name the same folder: the report would replace its baseline',
      )
    if (readRunDirectory(values.baseline, 'baseline', {}).summary.length === 0)
      throw new CachelabError(
        'input',
        `${join(values.baseline, 'summary.csv')} has no rows: nothing to check`,
      )
  }
  if (existsSync(join(captureDir, 'capture.json')))
    throw new CachelabError(
      'usage',
      `--out ${shown(outDir)} already holds a recording (capture/capture.json): choose a new --out`,
    )

  let outcome: CommandOutcome | undefined
  await serveCommand(serveArguments(values, captureDir), undefined, {
    print: () => {},
    hold: async (server, capture) => {
      process.stderr.write(
        `cachelab record: serving on ${server.url} (${values.upstream ?? 'sim'}), recording to ${shown(captureDir)}; running ${shownCommand(command, process.env)}\n`,
      )
      try {
        outcome = await runCommand(
          program,
          args,
          commandEnvironment(server, process.env, values.upstream ?? 'sim'),
        )
      } catch (error) {
        // The command never ran: nothing was recorded, and the same --out may be tried again.
        capture?.discard()
        throw error
      }
    },
  })
  const exitCode = outcome === undefined ? 0 : commandExitCode(outcome)

  const report = reportCapture(captureDir, CAPTURE_SCENARIO)
  writeRunFiles(outDir, { runId: report.runId, rows: report.rows, scenarios: [], writer: 'record' })
  for (const where of report.torn)
    process.stderr.write(`cachelab record: ${where}: torn last line (not read)\n`)
  const requests = report.rows.filter((row) => row.ok).length
  const conversations = new Set(report.rows.map((row) => row.variant)).size
  let verdict = 'no baseline'
  let gateCode = 0
  if (values.baseline !== undefined) {
    const result = check({
      baseline: values.baseline,
      run: outDir,
      ...(tolerance !== undefined ? { tolerancePoints: tolerance } : {}),
    })
    process.stdout.write(`${result.report}\n`)
    verdict = result.passed
      ? `holds against ${values.baseline}`
      : `fails against ${values.baseline} (${result.gate.failures.length} ${result.gate.failures.length === 1 ? 'failure' : 'failures'})`
    gateCode = result.passed ? 0 : 1
  }
  const ended = outcome?.signal != null ? `was ended by ${outcome.signal}` : `exited ${outcome?.code ?? 0}`
  process.stdout.write(
    `cachelab record: ${basename(program)} ${ended}; ${requests} ${requests === 1 ? 'request' : 'requests'} captured in ${conversations} ${conversations === 1 ? 'conversation' : 'conversations'}; report ${shown(join(outDir, 'report.html'))}; gate: ${verdict}\n`,
  )
  return exitCode !== 0 ? exitCode : gateCode
}

/**
 * The command as record prints it: a key its arguments hold (`-H "x-api-key: $ANTHROPIC_API_KEY"`
 * expanded by the shell, a `--key=sk-…`, a URL's `?key=`) is redacted, the environment's keys verbatim.
 */
export function shownCommand(command: readonly string[], env: NodeJS.ProcessEnv): string {
  return redactText(command.join(' '), environmentSecrets(env))
}

/** A path as printed: relative to the current folder when inside it, else absolute. */
function shown(path: string): string {
  const inside = relative(process.cwd(), path)
  return inside === '' ? '.' : inside.startsWith('..') || isAbsolute(inside) ? path : inside
}

/** serve's argument list: a free loopback port, recording into the capture folder, and the flags passed on. */
function serveArguments(values: Record<string, string | boolean | undefined>, captureDir: string): string[] {
  const argv = ['--port', '0', '--host', '127.0.0.1', '--record', captureDir]
  for (const [name, spec] of Object.entries(SERVE_FLAGS_AROUND)) {
    const value = values[name]
    if (value === undefined || value === false) continue
    argv.push(spec.type === 'boolean' ? `--${name}` : `--${name}=${String(value)}`)
  }
  return argv
}

/**
 * The command's environment: the caller's, with every vendor's base-URL variable pointing at the server.
 * On the simulator a key variable left unset gets a placeholder, so SDKs that refuse to start without a
 * key start; a key the caller set is kept (it reaches only this loopback server, which records no
 * headers). Through `--upstream live` the caller's keys are what the providers need, so none is invented.
 */
export function commandEnvironment(
  server: Pick<LoopbackServer, 'baseURLs' | 'baseURL'>,
  env: NodeJS.ProcessEnv,
  upstream: string,
): NodeJS.ProcessEnv {
  const urls: Record<string, string> = {
    [ENV_NAMES.openai.baseURL]: server.baseURLs.openai,
    [ENV_NAMES.anthropic.baseURL]: server.baseURLs.anthropic,
    [ENV_NAMES.deepseek.baseURL]: server.baseURLs.deepseek,
    [ENV_NAMES.gemini.baseURL]: server.baseURLs.gemini,
    // Gemini CLI's name for the same setting.
    GOOGLE_GEMINI_BASE_URL: server.baseURLs.gemini,
    [ENV_NAMES.bedrock.baseURL]: server.baseURLs.bedrock,
  }
  const keys = [
    ENV_NAMES.openai.key,
    ENV_NAMES.anthropic.key,
    ENV_NAMES.deepseek.key,
    ENV_NAMES.gemini.key,
    ENV_NAMES.bedrock.key,
  ]
  for (const provider of compatibleProviders()) {
    urls[provider.baseURLVariable] = server.baseURL(provider.id)
    keys.push(provider.keyVariable)
  }
  const placeholders =
    upstream === 'sim'
      ? Object.fromEntries(
          keys.filter((name) => (env[name] ?? '').trim() === '').map((name) => [name, SIMULATED_KEY]),
        )
      : {}
  return { ...env, ...placeholders, ...urls }
}

/**
 * Run the command with the terminal's stdio until it exits. SIGINT and SIGTERM that reach record are passed
 * on to it, and record waits for it to exit, so serve stops only after the command has. A command that
 * cannot be started is an input error.
 */
export function runCommand(
  program: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<CommandOutcome> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(program, args, { stdio: 'inherit', env })
    const forward = (signal: NodeJS.Signals) => {
      child.kill(signal)
    }
    const onInterrupt = () => forward('SIGINT')
    const onTerminate = () => forward('SIGTERM')
    process.on('SIGINT', onInterrupt)
    process.on('SIGTERM', onTerminate)
    const settle = () => {
      process.off('SIGINT', onInterrupt)
      process.off('SIGTERM', onTerminate)
    }
    child.once('error', (error: NodeJS.ErrnoException) => {
      settle()
      const reason =
        error.code === 'ENOENT'
          ? 'no such command'
          : error.code === 'EACCES'
            ? 'not executable'
            : error.message
      reject(new CachelabError('input', `cannot run ${program}: ${reason}`))
    })
    child.once('exit', (code, signal) => {
      settle()
      resolvePromise({ code, signal })
    })
  })
}

/** A command's outcome as an exit code: its own, or 128 + the signal's number as shells report it. */
export function commandExitCode(outcome: CommandOutcome): number {
  if (outcome.code !== null) return outcome.code
  const number = outcome.signal === null ? undefined : constants.signals[outcome.signal]
  return number === undefined ? 1 : 128 + number
}
