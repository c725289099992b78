// Command-line parsing shared by the subcommands: flags per the CLI contract, errors as usage errors.

import { type ParseArgsConfig, parseArgs } from 'node:util'
import { CachelabError, requireKnown } from '../harness/errors.ts'
import { type BuiltInProviderId, PROVIDER_IDS, type ProviderId } from '../harness/types.ts'
import { resolveModel } from '../providers/catalog.ts'
import { knownProviderIds } from '../providers/compatible.ts'
import type { AsProviderTarget } from '../reports/as-provider.ts'

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

/** A date option (`2026-11-01`, `20261101` or an ISO time) as Unix milliseconds; `days` moves a day's start on. */
export function dateOption(flag: string, value: string | undefined, days = 0): number | undefined {
  if (value === undefined) return undefined
  const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(value)
  const text = compact === null ? value : `${compact[1]}-${compact[2]}-${compact[3]}`
  const day = /^\d{4}-\d{2}-\d{2}$/.test(text)
  const at = Date.parse(day ? `${text}T00:00:00Z` : text)
  if (!Number.isFinite(at))
    throw new CachelabError(
      'usage',
      `${flag} takes a date (2026-11-01, 20261101) or an ISO time, not ${value}`,
    )
  // `--until 2026-11-30` includes that day: it ends at the next day's start.
  return day ? at + days * 86_400_000 : at
}

/** The `--as` target: a provider id and its catalog model (the provider's default unless `--model`). */
export function asTarget(
  provider: string | undefined,
  model: string | undefined,
): AsProviderTarget | undefined {
  if (provider === undefined) {
    if (model !== undefined) throw new CachelabError('usage', '--model names the model of --as PROVIDER')
    return undefined
  }
  // A transcript translates onto the built-in wires only (notes/2026-11-30-compatible-providers.md).
  if (!PROVIDER_IDS.includes(provider as BuiltInProviderId))
    throw new CachelabError('usage', `--as must be one of ${PROVIDER_IDS.join(', ')}, not ${provider}`)
  return {
    provider: provider as BuiltInProviderId,
    entry: resolveModel(provider as BuiltInProviderId, model),
  }
}
