// A command's flags table (commands.ts) as a commander command: parsed with commander, so an unknown flag
// gets its "did you mean", a value may start with a dash (`--tolerance -3` reaches the number check) and
// help is written from the same table. Every parse error is a one-line usage error.

import { Command, CommanderError, Option } from 'commander'
import { CachelabError } from '../harness/errors.ts'
import type { FlagSpec, Flags } from './commands.ts'

/** What `parse` returns: each flag's value under its own name (`record-bodies`), and the positionals. */
export interface Parsed<T extends Flags> {
  values: { [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string }
  positionals: string[]
}

/** The commander options of one flag: `--NAME <VALUE>`, or `--NAME` and `--no-NAME` for a boolean. */
function optionsOf(name: string, flag: FlagSpec): Option[] {
  if (flag.type === 'string')
    return [new Option(`--${name} <${flag.value ?? 'VALUE'}>`, flag.description ?? '')]
  const negation = new Option(`--no-${name}`, `not --${name}`)
  return [new Option(`--${name}`, flag.description ?? ''), negation.hideHelp(flag.negatable !== true)]
}

/**
 * A commander command for a flags table, quiet (errors are thrown, nothing is printed, nothing exits);
 * `positionals`, when given, is the arguments' synopsis.
 */
export function flagsCommand(name: string, flags: Flags, positionals?: string): Command {
  const command = new Command(name)
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: () => {} })
    .helpOption(false)
    .allowExcessArguments(positionals !== undefined)
  if (positionals !== undefined) command.argument(`[${positionals}]`)
  for (const [flag, spec] of Object.entries(flags))
    for (const option of optionsOf(flag, spec)) command.addOption(option)
  return command
}

/**
 * Parse `argv` against `flags`; an unknown flag (with the nearest known one), a missing value, an empty
 * one (`--out ""`, which would mean the current folder, or nothing) and an argument where the command
 * takes none are usage errors.
 */
export function parse<T extends Flags>(
  argv: readonly string[],
  flags: T,
  allowPositionals = false,
): Parsed<T> {
  const command = flagsCommand('cachelab', flags, allowPositionals ? 'ARGUMENTS...' : undefined)
  try {
    command.parse([...argv], { from: 'user' })
  } catch (error) {
    throw usageError(error, flags, command.args)
  }
  const given = command.opts()
  const values: Record<string, string | boolean | undefined> = {}
  for (const option of command.options) {
    const name = option.long?.replace(/^--(no-)?/, '') ?? ''
    const value = given[option.attributeName()] as string | boolean | undefined
    if (value === undefined) continue
    if (typeof value === 'string' && value.trim() === '')
      throw new CachelabError('usage', `--${name} needs a value, not an empty string`)
    values[name] = value
  }
  return { values: values as Parsed<T>['values'], positionals: command.args }
}

/** Commander's error in one line, in the words cachelab's other usage errors use. */
function usageError(error: unknown, flags: Flags, given: readonly string[]): unknown {
  if (!(error instanceof CommanderError)) return error
  const missing = /option '--([\w-]+)/.exec(error.message)?.[1]
  if (error.code === 'commander.optionMissingArgument' && missing !== undefined)
    return new CachelabError(
      'usage',
      `--${missing} needs a value: --${missing} ${flags[missing]?.value ?? 'VALUE'}`,
    )
  if (error.code === 'commander.excessArguments')
    return new CachelabError(
      'usage',
      `unexpected argument ${JSON.stringify(given[0] ?? '')}: this command takes flags only (--NAME VALUE)`,
    )
  const message = error.message
    .replace(/^error: /, '')
    .replace(/\n\(Did you mean (.+)\?\)/, ' (did you mean $1?)')
    .replace(/\n/g, ' ')
  return new CachelabError('usage', message)
}
