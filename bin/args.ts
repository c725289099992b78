// Command-line parsing shared by the subcommands: flags per the CLI contract, errors as usage errors.

import { type ParseArgsConfig, parseArgs } from 'node:util'
import { CachelabError, requireKnown } from '../harness/errors.ts'
import { PROVIDER_IDS, type ProviderId } from '../harness/types.ts'
import { knownProviderIds } from '../providers/compatible.ts'

type Options = NonNullable<ParseArgsConfig['options']>

/** What `parse` returns: named because the emitted declarations cannot name Node's internal types. */
export type Parsed<T extends Options> = ReturnType<
  typeof parseArgs<{
    args: string[]
    options: T
    allowPositionals: boolean
    strict: true
    allowNegative: true
  }>
>

/**
 * Parse `argv` against `options`; unknown flags, missing values and empty ones (`--out ""`, which would
 * mean the current folder, or nothing) are usage errors.
 */
export function parse<T extends Options>(argv: string[], options: T, allowPositionals = false): Parsed<T> {
  let parsed: Parsed<T>
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals, strict: true, allowNegative: true })
  } catch (error) {
    throw new CachelabError('usage', (error as Error).message.split('\n')[0] ?? 'bad arguments')
  }
  for (const [name, value] of Object.entries(parsed.values)) {
    const values = Array.isArray(value) ? value : [value]
    if (values.some((each) => typeof each === 'string' && each.trim() === ''))
      throw new CachelabError('usage', `--${name} needs a value, not an empty string`)
  }
  return parsed
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
  requireKnown(names, known, what)
  return names as T[]
}

/**
 * `--provider`: names from the built-in and compatible providers; `all` (or none) is the built-in matrix,
 * the compatible providers run when named (notes/2026-11-30-compatible-providers.md).
 */
export function providersOption(value: string | undefined): ProviderId[] {
  if (value === undefined || value === 'all') return [...PROVIDER_IDS]
  return listOption(value, knownProviderIds(), 'provider') ?? [...PROVIDER_IDS]
}
