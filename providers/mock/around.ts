// A user's command run around the loopback server (`cachelab record`): its environment, with every
// vendor's base-URL variable pointing at the server; its process, with SIGINT and SIGTERM passed on; its
// exit code as a shell reports it; and its command line as printed, with credentials redacted.

import { type ChildProcess, spawn } from 'node:child_process'
import { accessSync, constants as fileModes, statSync } from 'node:fs'
import { constants } from 'node:os'
import { delimiter, join } from 'node:path'
import { CachelabError } from '../../harness/errors.ts'
import { compatibleProviders } from '../compatible.ts'
import { ENV_NAMES, SIMULATED_KEY } from '../endpoints.ts'
import type { LoopbackServer } from './loopback.ts'
import { environmentSecrets, redactText } from './serve-safety.ts'

/** How the command ended: its exit code, or the signal that ended it. */
export interface CommandOutcome {
  code: number | null
  signal: NodeJS.Signals | null
}

/**
 * The command as record prints it: a key its arguments hold (`-H "x-api-key: $ANTHROPIC_API_KEY"`
 * expanded by the shell, a `--key=sk-…`, a URL's `?key=`) is redacted, the environment's keys verbatim.
 */
export function shownCommand(command: readonly string[], env: NodeJS.ProcessEnv): string {
  return redactText(command.join(' '), environmentSecrets(env))
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
 * Refuse, before anything starts, a command that cannot run: a path that is not an executable file, or a
 * name no folder of PATH holds as one. The words are those a failed start gives (runCommand).
 */
export function requireRunnable(program: string, env: NodeJS.ProcessEnv): void {
  const executable = (path: string): 'yes' | 'missing' | 'not executable' => {
    try {
      if (!statSync(path).isFile()) return 'not executable'
      accessSync(path, fileModes.X_OK)
      return 'yes'
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EACCES' ? 'not executable' : 'missing'
    }
  }
  const found = program.includes('/')
    ? executable(program)
    : (env.PATH ?? '')
        .split(delimiter)
        .filter((folder) => folder !== '')
        .map((folder) => executable(join(folder, program)))
        .reduce<'yes' | 'missing' | 'not executable'>(
          (best, each) => (best === 'yes' || each === 'yes' ? 'yes' : best === 'missing' ? each : best),
          'missing',
        )
  if (found !== 'yes')
    throw new CachelabError(
      'input',
      `cannot run ${program}: ${found === 'missing' ? 'no such command' : 'not executable'}`,
    )
}

/**
 * A process that outlives record only to end the command: record holds its stdin, so when record is killed
 * (SIGKILL, which no handler sees) the pipe closes and it sends the command SIGTERM, then SIGKILL after five
 * seconds. Once the command has exited record kills it first, so it never signals a reused pid.
 */
const WATCHDOG = `
const pid = Number(process.argv[1])
process.stdin.resume()
process.stdin.on('end', () => {
  try { process.kill(pid, 'SIGTERM') } catch { process.exit(0) }
  setTimeout(() => { try { process.kill(pid, 'SIGKILL') } catch {} process.exit(0) }, 5000).unref()
  const poll = setInterval(() => { try { process.kill(pid, 0) } catch { process.exit(0) } }, 100)
  poll.unref()
  setTimeout(() => {}, 5100)
})
`

/** Start the command's watchdog; undefined when it cannot start (the command still runs). */
function watchdogOf(child: ChildProcess): ChildProcess | undefined {
  if (child.pid === undefined) return undefined
  try {
    const watchdog = spawn(process.execPath, ['-e', WATCHDOG, String(child.pid)], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    })
    watchdog.on('error', () => {})
    watchdog.unref()
    ;(watchdog.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null)?.unref?.()
    return watchdog
  } catch {
    return undefined
  }
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
    const watchdog = watchdogOf(child)
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
      watchdog?.kill('SIGKILL')
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
