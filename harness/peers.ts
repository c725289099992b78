// cachelab's optional peers, asked for by name: the client libraries, DSH's loop and better-sqlite3 are
// not installed with cachelab (notes/2026-12-02-optional-peers.md), so the code that drives one imports it
// when it first needs it, and a missing one is a one-line usage error naming the package and the version
// cachelab is tested with, read off cachelab's own package.json (its devDependencies pin them).

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CachelabError } from './errors.ts'

/** Imports one module by its specifier (the default is the runtime's own `import`). */
export type PeerImporter = (specifier: string) => Promise<unknown>

/** The package.json of the package named `name` that holds `folder`, looking upwards. */
export function manifestUpwards(folder: string, name: string): Record<string, unknown> | undefined {
  for (let current = folder; current !== dirname(current); current = dirname(current)) {
    try {
      const manifest = JSON.parse(readFileSync(join(current, 'package.json'), 'utf8')) as Record<
        string,
        unknown
      >
      if (manifest.name === name) return manifest
    } catch {
      // no package.json at this level
    }
  }
  return undefined
}

/** cachelab's package.json: beside the sources in the repository, two folders above dist/harness/ when installed. */
const cachelabManifest = (): Record<string, unknown> | undefined =>
  manifestUpwards(dirname(fileURLToPath(import.meta.url)), 'cachelab')

/**
 * The version cachelab pins for a package: its devDependency (where every optional peer is pinned) or
 * dependency, as written (`npm:ai@7.0.173` for an alias).
 */
export function pinnedVersion(
  name: string,
  manifest: Record<string, unknown> | undefined = cachelabManifest(),
): string | undefined {
  for (const field of ['dependencies', 'devDependencies']) {
    const pins = manifest?.[field]
    if (
      typeof pins === 'object' &&
      pins !== null &&
      typeof (pins as Record<string, unknown>)[name] === 'string'
    )
      return (pins as Record<string, string>)[name]
  }
  return undefined
}

/**
 * The npm name of a dependency pinned as an alias (`ai-7`, pinned `npm:ai@7.0.173`, is `ai`), else the
 * name itself: the name its package.json carries and the report shows.
 */
export function npmName(name: string, pin: string | undefined = pinnedVersion(name)): string {
  return /^npm:(@?[^@]+)@/.exec(pin ?? '')?.[1] ?? name
}

/**
 * What a user installs to get a package, by its npm name at the pinned version: `openai@6.49.0`, and
 * `ai@7.0.173` for the alias `ai-7` (a user's project installs ai 7 under its own name).
 */
export function peerSpec(name: string, pin: string | undefined = pinnedVersion(name)): string {
  const aliased = /^npm:(@?[^@]+)@(.+)$/.exec(pin ?? '')
  if (aliased !== null) return `${aliased[1]}@${aliased[2]}`
  return pin === undefined ? name : `${name}@${pin}`
}

/** The command that installs packages into a user's project as development dependencies. */
export function installCommand(
  names: readonly string[],
  pin: (name: string) => string | undefined = pinnedVersion,
): string {
  return `npm i -D ${names.map((name) => peerSpec(name, pin(name))).join(' ')}`
}

/** Package names in a sentence, by their npm names: `openai`, `openai and @anthropic-ai/sdk`, `a, b and c`. */
export function listNames(
  names: readonly string[],
  pin: (name: string) => string | undefined = pinnedVersion,
): string {
  const listed = names.map((name) => npmName(name, pin(name)))
  return listed.length <= 1 ? (listed[0] ?? '') : `${listed.slice(0, -1).join(', ')} and ${listed.at(-1)}`
}

/**
 * The one-line ask for missing peers: what needs them, then the command that installs them.
 * `cachelab run drives scenarios through the openai SDK` and `['openai']` give
 * `cachelab run drives scenarios through the openai SDK: npm i -D openai@6.49.0`.
 */
export function peerAsk(
  purpose: string,
  names: readonly string[],
  pin: (name: string) => string | undefined = pinnedVersion,
): string {
  return `${purpose}: ${installCommand(names, pin)}`
}

/** The usage error of `peerAsk` (exit 2 from the CLI). */
export function missingPeers(
  purpose: string,
  names: readonly string[],
  pin: (name: string) => string | undefined = pinnedVersion,
): CachelabError {
  return new CachelabError('usage', peerAsk(purpose, names, pin))
}

/**
 * Whether an import failed because the package `name` itself is not installed (not one of its own
 * dependencies, nor an error inside it).
 */
export function isMissingPackage(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false
  return typeof message !== 'string' || message.includes(`'${name}'`) || message.includes(`"${name}"`)
}

/**
 * Import an optional peer; when it is not installed, fail with `peerAsk(purpose, [name])`. Any other
 * failure (an error inside the package, a missing dependency of it) is rethrown as it is.
 */
export async function importPeer<Module>(
  name: string,
  purpose: string,
  importer: PeerImporter = (specifier) => import(specifier),
): Promise<Module> {
  try {
    return (await importer(name)) as Module
  } catch (error) {
    if (isMissingPackage(error, name)) throw missingPeers(purpose, [name])
    throw error
  }
}

/** The installed version of a package: its package.json, found upwards from its resolved entry. */
export function installedVersion(name: string): string | undefined {
  let entry: string
  try {
    entry = fileURLToPath(import.meta.resolve(name))
  } catch {
    try {
      entry = createRequire(import.meta.url).resolve(name)
    } catch {
      return undefined
    }
  }
  const version = manifestUpwards(dirname(entry), npmName(name))?.version
  return typeof version === 'string' ? version : undefined
}
