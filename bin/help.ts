// The help the command line prints, written by commander from commands.ts's tables: `cachelab --help` (every
// command in a line), `cachelab COMMAND --help` (its flags), a bare command's usage line, the version, and
// an unknown command's "did you mean".

import { Command, CommanderError } from 'commander'
import { CachelabError } from '../harness/errors.ts'
import { cachelabVersion } from '../harness/version.ts'
import { COMMAND_SPECS, type CommandName, type CommandSpec } from './commands.ts'
import { flagsCommand } from './flags.ts'

const ABOUT =
  "Tells whether a change breaks an LLM provider's prompt cache: scenarios on the providers' cache simulators or the real APIs, your own client's traffic through serve, and coding agents' transcripts."

const FOOTER = `Every command takes --catalog FILE (or CACHELAB_CATALOG=FILE): OpenAI-compatible providers in JSON,
merged with the shipped catalog (xai, kimi, openrouter, mistral, qwen, glm); see docs/providers.md.

Exit codes: 0 ok, 1 a check failed, 2 usage or input error.`

/** cachelab as commander sees it: every command with its flags, for help and nothing else. */
function program(): Command {
  const root = new Command('cachelab')
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: () => {} })
    .description(ABOUT)
    .usage('<command> [options]')
    .version(cachelabVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print this help (cachelab COMMAND --help: a command)')
    .helpCommand(false)
    // The overview lists the commands by name; each command's own help shows its arguments.
    .configureHelp({ subcommandTerm: (command) => command.name() })
  for (const [name, spec] of Object.entries(COMMAND_SPECS) as [CommandName, CommandSpec][])
    root.addCommand(
      flagsCommand(name, spec.flags, spec.arguments)
        .summary(spec.summary)
        .description(spec.details)
        .usage(usageOf(spec))
        .helpOption('-h, --help', 'print this help'),
    )
  return root
}

function usageOf(spec: CommandSpec): string {
  return `[options]${spec.arguments === undefined ? '' : ` ${spec.arguments}`}`
}

/** `cachelab --help`: what cachelab is, each command in a line, the catalog and the exit codes. */
export function overviewHelp(): string {
  return `${program().helpInformation()}\n${FOOTER}\n`
}

/** `cachelab COMMAND --help`: the command's usage, what it does and its flags. */
export function commandHelp(name: CommandName): string {
  const command = program().commands.find((each) => each.name() === name)
  return command?.helpInformation() ?? overviewHelp()
}

/**
 * A bare command's usage error, made to say how the command is called: its usage line, unless the reason
 * already shows one, and where its help is.
 */
export function withUsage(name: CommandName, reason: string): string {
  const hint = `(cachelab ${name} --help: what it does and its flags)`
  if (reason.includes(`cachelab ${name} `)) return `${reason} ${hint}`
  return `${reason}; usage: cachelab ${name} ${usageOf(COMMAND_SPECS[name])} ${hint}`
}

/** `cachelab --version`. */
export function versionText(): string {
  return `${cachelabVersion()}\n`
}

/** The usage error for a command cachelab does not have, with the nearest one it does. */
export function unknownCommand(name: string | undefined): CachelabError {
  let suggestion = ''
  try {
    program().parse([name ?? ''], { from: 'user' })
  } catch (error) {
    const nearest =
      error instanceof CommanderError ? /Did you mean (.+)\?/.exec(error.message)?.[1] : undefined
    if (nearest !== undefined) suggestion = `did you mean ${nearest}? `
  }
  return new CachelabError(
    'usage',
    `unknown command ${JSON.stringify(name)} (${suggestion}cachelab --help lists the commands)`,
  )
}
