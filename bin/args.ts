// Command-line parsing shared by the subcommands: flags per the CLI contract, errors as usage errors.

import { type ParseArgsConfig, parseArgs } from 'node:util'
import { CachelabError } from '../harness/errors.ts'
import { PROVIDER_IDS, type ProviderId } from '../harness/types.ts'

type Options = NonNullable<ParseArgsConfig['options']>

/** Parse `argv` against `options`; unknown flags and missing values are usage errors. */
export function parse<T extends Options>(argv: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true, allowNegative: true })
  } catch (error) {
    throw new CachelabError('usage', (error as Error).message.split('\n')[0] ?? 'bad arguments')
  }
}

/** A comma list with `all`: every known value; unknown values are usage errors naming the known ones. */
export function listOption<T extends string>(
  value: string | undefined,
  known: readonly T[],
  what: string,
): T[] | undefined {
  if (value === undefined || value === 'all') return undefined
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  if (names.length === 0) throw new CachelabError('usage', `--${what} needs at least one name`)
  for (const name of names) {
    if (!known.includes(name as T))
      throw new CachelabError('usage', `unknown ${what} ${JSON.stringify(name)} (known: ${known.join(', ')})`)
  }
  return names as T[]
}

export function providersOption(value: string | undefined): ProviderId[] {
  return listOption(value, PROVIDER_IDS, 'provider') ?? [...PROVIDER_IDS]
}
