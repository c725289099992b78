// The option values shared by the subcommands (lists, providers, dates, numbers, `--as`), checked, errors
// as usage errors; the flags themselves parse in flags.ts.

import { CachelabError, requireKnown } from '../harness/errors.ts'
import { type BuiltInProviderId, PROVIDER_IDS, type ProviderId } from '../harness/types.ts'
import { resolveModel } from '../providers/catalog.ts'
import { knownProviderIds } from '../providers/compatible.ts'
import type { AsProviderTarget } from '../reports/as-provider.ts'

export { type Parsed, parse } from './flags.ts'

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
