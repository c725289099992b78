// The cachelab command line (ARCHITECTURE.md's contract): subcommands, exit codes 0 ok, 1 a check
// failed, 2 usage or input error with a one-line reason. Help and the version come from help.ts, written
// from commands.ts's tables; each command's module loads only when it runs.

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { CachelabError, unreadableFile } from '../harness/errors.ts'
import { useCatalog } from '../providers/compatible.ts'
import { parseCatalogFile } from '../providers/compatible-file.ts'
import { COMMAND_SPECS, type CommandName, type CommandSpec } from './commands.ts'

/**
 * Each command, loaded when it runs: a command's module graph (msw for serve, the simulators and agent
 * loops for run, the report writers for import) is imported only by the command that needs it, so a
 * start pays for one command, not all eleven (notes/2026-12-02-import-speed-2.md).
 */
const COMMANDS: Readonly<Record<CommandName, (rest: string[]) => Promise<number> | number>> = {
  run: async (rest) => (await import('./run-command.ts')).runCommand(rest),
  simulate: async (rest) => (await import('./simulate-command.ts')).simulateCommand(rest),
  serve: async (rest) => (await import('./serve-command.ts')).serveCommand(rest),
  check: async (rest) => (await import('./check-command.ts')).checkCommand(rest),
  compare: async (rest) => (await import('./compare-command.ts')).compareCommand(rest),
  list: async (rest) => (await import('./list-command.ts')).listCommand(rest),
  import: async (rest) => (await import('./import-command.ts')).importCommand(rest),
  calibrate: async (rest) => (await import('./calibrate-command.ts')).calibrateCommand(rest),
  report: async (rest) => (await import('./report-command.ts')).reportCommand(rest),
  gateway: async (rest) => (await import('./gateway-command.ts')).gatewayCommand(rest),
  record: async (rest) => (await import('./record-command.ts')).recordCommand(rest),
  validate: async (rest) => (await import('./validate-command.ts')).validateCommand(rest),
  'merge-reports': async (rest) => (await import('./merge-command.ts')).mergeCommand(rest),
}

function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMAND_SPECS, name)
}

/** Run the CLI; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  // The AWS SDK warns on Node 20 that its releases after January 2027 need Node 22. cachelab pins its
  // release, so the warning says nothing about this command (docs/library.md names the Node versions); a user
  // who set the variable (to anything but empty) keeps their choice.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ||= 'true'
  const [command, ...given] = argv
  try {
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      const [topic] = given
      const help = await import('./help.ts')
      if (command === 'help' && topic !== undefined && !isCommand(topic)) throw help.unknownCommand(topic)
      process.stdout.write(
        topic !== undefined && isCommand(topic) ? help.commandHelp(topic) : help.overviewHelp(),
      )
      return command === undefined ? 2 : 0
    }
    if (command === '--version' || command === '-V') {
      process.stdout.write((await import('./help.ts')).versionText())
      return 0
    }
    if (!isCommand(command)) throw (await import('./help.ts')).unknownCommand(command)
    // Help before anything is read or loaded: `cachelab run --help` loads no simulator.
    const ours = given.includes('--') ? given.slice(0, given.indexOf('--')) : given
    if (ours.includes('--help') || ours.includes('-h')) {
      process.stdout.write((await import('./help.ts')).commandHelp(command))
      return 0
    }
    const spec: CommandSpec = COMMAND_SPECS[command]
    const ran = COMMANDS[command](loadCatalog(given, process.env))
    if (given.length > 0 || spec.needsArguments !== true) return await ran
    // Given nothing, a command that needs something says what, and how it is called.
    return await Promise.resolve(ran).catch(async (error: unknown) => {
      if (!(error instanceof CachelabError) || error.kind !== 'usage') throw error
      throw new CachelabError('usage', (await import('./help.ts')).withUsage(command, error.message))
    })
  } catch (error) {
    if (
      error instanceof CachelabError &&
      (error.kind === 'usage' || error.kind === 'input' || error.kind === 'log')
    ) {
      process.stderr.write(`cachelab: ${error.message}\n`)
      return 2
    }
    process.stderr.write(`cachelab: ${error instanceof Error ? error.message : String(error)}\n`)
    return 2
  }
}

/**
 * Take `--catalog FILE` (any command; else CACHELAB_CATALOG) off the arguments and merge the file's
 * providers into the catalog. The chosen file is exported as CACHELAB_CATALOG so worker threads and
 * child processes load the same catalog. No file: the shipped catalog alone.
 */
function loadCatalog(argv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const rest: string[] = []
  let file: string | undefined
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index] as string
    // After `--` the arguments are another command's (cachelab record): none of them is ours.
    if (argument === '--') {
      rest.push(...argv.slice(index))
      break
    }
    if (argument === '--catalog' || argument.startsWith('--catalog=')) {
      if (argument === '--catalog') index += 1
      const value = argument === '--catalog' ? argv[index] : argument.slice('--catalog='.length)
      if (value === undefined || value === '') throw new CachelabError('usage', '--catalog needs a file')
      file = value
    } else rest.push(argument)
  }
  file ??= env.CACHELAB_CATALOG?.trim() || undefined
  if (file === undefined) {
    useCatalog([])
    return rest
  }
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw unreadableFile(
      `the catalog ${file}`,
      error,
      'check the path of --catalog or CACHELAB_CATALOG (docs/providers.md)',
    )
  }
  useCatalog(parseCatalogFile(text, file))
  env.CACHELAB_CATALOG = resolve(file)
  return rest
}
