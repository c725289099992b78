// A documented command line checked against the flags its command parses with, without running it: for
// the docs' tests. The flags tables are commands.ts's, the ones the commands and their help read.

import { COMMAND_SPECS, type CommandName, type CommandSpec } from './commands.ts'
import { parse } from './flags.ts'
import { unknownCommand } from './help.ts'

/**
 * Check a command line's subcommand and flags with the parser the command uses, without running it or
 * reading any file: an unknown command or flag, or a missing value, throws the usage error the command
 * would exit 2 with. `--catalog FILE` (any command) and what follows record's `--` are not checked.
 */
export function checkCommandLine(argv: readonly string[]): void {
  const [command, ...given] = argv
  if (command === undefined || !Object.hasOwn(COMMAND_SPECS, command)) throw unknownCommand(command)
  const spec: CommandSpec = COMMAND_SPECS[command as CommandName]
  const split = given.indexOf('--')
  const ours = (split === -1 ? given : given.slice(0, split)).filter(
    (argument, index, all) => !argument.startsWith('--catalog') && all[index - 1] !== '--catalog',
  )
  parse(ours, spec.flags, spec.arguments !== undefined)
}
