// `npm run bench`'s command line: `--only PART,…`, `--matrix`, `--provider ID,…`; a bad name exits 2.

import { PROVIDER_IDS, type ProviderId } from '../harness/types.ts'

/** The value of `--NAME VALUE` or `--NAME=VALUE`, when given. */
function option(name: string): string | undefined {
  const argv = process.argv
  const inline = argv.find((argument) => argument.startsWith(`--${name}=`))
  if (inline !== undefined) return inline.slice(name.length + 3)
  const index = argv.indexOf(`--${name}`)
  return index < 0 ? undefined : argv[index + 1]
}

export function fail(message: string): never {
  process.stderr.write(`cachelab bench: ${message}\n`)
  process.exit(2)
}

export function selectedParts(parts: readonly string[]): Set<string> {
  if (process.argv.includes('--matrix')) return new Set(['matrix'])
  return new Set(listOption('only', parts, 'part', 'parts') ?? parts)
}

export function selectedProviders(): readonly ProviderId[] {
  return (listOption('provider', PROVIDER_IDS, 'provider', 'providers') ?? PROVIDER_IDS) as ProviderId[]
}

/** `--NAME A,B` checked against the names allowed (exit 2 on another), when given. */
function listOption(
  name: string,
  allowed: readonly string[],
  noun: string,
  plural: string,
): string[] | undefined {
  const value = option(name)
  if (value === undefined) return undefined
  const names = value.split(',').filter((entry) => entry !== '')
  for (const entry of names)
    if (!allowed.includes(entry)) fail(`unknown ${noun} ${entry} (${plural}: ${allowed.join(', ')})`)
  return names
}
