// The cachelab command line (ARCHITECTURE.md's contract): subcommands, exit codes 0 ok, 1 a check
// failed, 2 usage or input error with a one-line reason.

import { CachelabError } from '../harness/errors.ts'
import { listCommand } from './list-command.ts'
import { runCommand } from './run-command.ts'

const USAGE = `usage: cachelab <command> [options]

  run       [--scenario NAME[,NAME]|all] [--provider ID[,ID]|all] [--variant NAME[,NAME]|all]
            [--model MODEL] [--live] [--stream|--no-stream] [--out DIR] [--json]
  list      scenarios, their variants, providers and models

Exit codes: 0 ok, 1 a check failed, 2 usage or input error.`

/** Run the CLI; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  try {
    switch (command) {
      case 'run':
        return await runCommand(rest)
      case 'list':
        return listCommand(rest)
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`)
        return command === undefined ? 2 : 0
      default:
        throw new CachelabError('usage', `unknown command ${JSON.stringify(command)} (try cachelab help)`)
    }
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
