// A documented command line checked against the flags its command parses with, without running it: for
// the docs' tests. It imports every command's module for its flag table, so the CLI itself (bin/cli.ts,
// which loads one command's modules only) never imports this file.

import { CachelabError } from '../harness/errors.ts'
import { parse } from './args.ts'
import { CALIBRATE_FLAGS } from './calibrate-command.ts'
import { CHECK_FLAGS } from './check-command.ts'
import { GATEWAY_FLAGS } from './gateway-command.ts'
import { IMPORT_FLAGS } from './import-command.ts'
import { LIST_FLAGS } from './list-command.ts'
import { MERGE_FLAGS } from './merge-command.ts'
import { RECORD_FLAGS } from './record-command.ts'
import { REPORT_FLAGS } from './report-command.ts'
import { RUN_FLAGS } from './run-command.ts'
import { SERVE_FLAGS } from './serve-command.ts'
import { SIMULATE_FLAGS } from './simulate-command.ts'

/**
 * Each command's flags, and whether it takes positional arguments: the tables the commands parse with,
 * gathered so a documented command line can be checked without running it.
 */
const COMMAND_FLAGS = {
  run: { options: RUN_FLAGS, positionals: false },
  simulate: { options: SIMULATE_FLAGS, positionals: true },
  serve: { options: SERVE_FLAGS, positionals: false },
  check: { options: CHECK_FLAGS, positionals: false },
  compare: { options: {}, positionals: true },
  list: { options: LIST_FLAGS, positionals: false },
  import: { options: IMPORT_FLAGS, positionals: true },
  calibrate: { options: CALIBRATE_FLAGS, positionals: true },
  report: { options: REPORT_FLAGS, positionals: true },
  record: { options: RECORD_FLAGS, positionals: true },
  gateway: { options: GATEWAY_FLAGS, positionals: true },
  validate: { options: {}, positionals: true },
  'merge-reports': { options: MERGE_FLAGS, positionals: true },
} as const

/**
 * Check a command line's subcommand and flags with the parser the command uses, without running it or
 * reading any file: an unknown command or flag, or a missing value, throws the usage error the command
 * would exit 2 with. `--catalog FILE` (any command) and what follows record's `--` are not checked.
 */
export function checkCommandLine(argv: readonly string[]): void {
  const [command, ...given] = argv
  if (command === undefined || !Object.hasOwn(COMMAND_FLAGS, command))
    throw new CachelabError('usage', `unknown command ${JSON.stringify(command)} (try cachelab help)`)
  const flags = COMMAND_FLAGS[command as keyof typeof COMMAND_FLAGS]
  const split = given.indexOf('--')
  const ours = (split === -1 ? given : given.slice(0, split)).filter(
    (argument, index, all) => !argument.startsWith('--catalog') && all[index - 1] !== '--catalog',
  )
  parse(ours, flags.options, flags.positionals)
}
