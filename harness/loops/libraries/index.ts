// The client-library loops by name, loaded lazily: a library that is not installed is reported with the
// command that installs it, never a crash, and the versions that ran are read off the installed packages.

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AiSdkMajor, AiSdkPackages } from './ai-sdk.ts'
import type { LibraryLoop, LibraryLoopModule, LibraryLoopName } from './types.ts'

/**
 * The AI SDK's packages per major, by the name each is installed under. ai 7 and its providers need
 * Node 22, so cachelab pins them as npm aliases beside ai 6 (`ai-7` is `npm:ai@7.0.173`); npm skips them
 * on Node 20.
 */
export const AI_SDK_PACKAGES: Readonly<Record<AiSdkMajor, AiSdkPackages>> = {
  6: { ai: 'ai', anthropic: '@ai-sdk/anthropic', openai: '@ai-sdk/openai', deepseek: '@ai-sdk/deepseek' },
  7: {
    ai: 'ai-7',
    anthropic: 'ai-sdk-anthropic-4',
    openai: 'ai-sdk-openai-4',
    deepseek: 'ai-sdk-deepseek-3',
  },
}

/** The first Node major ai 7 runs on (its `engines`). */
const AI_SDK_7_NODE = 22

/** The AI SDK major a runtime runs: ai 7 on Node 22+ when its packages are installed, else ai 6. */
export function aiSdkMajor(nodeVersion: string, installed: (name: string) => boolean): AiSdkMajor {
  const nodeMajor = Number(nodeVersion.split('.')[0])
  return nodeMajor >= AI_SDK_7_NODE && Object.values(AI_SDK_PACKAGES[7]).every(installed) ? 7 : 6
}

/** The AI SDK loop's module on one major. */
export function aiSdkModule(major: AiSdkMajor): LibraryLoopModule {
  const packages = AI_SDK_PACKAGES[major]
  return {
    name: 'ai-sdk',
    packages: [packages.ai, packages.anthropic, packages.openai, packages.deepseek],
    load: async () => {
      const { aiSdkLoop, importAiSdk } = await import('./ai-sdk.ts')
      return aiSdkLoop(await importAiSdk(major, packages))
    },
  }
}

/** Every library loop's module; each imports its library only when loaded. */
export const LIBRARY_LOOPS: Readonly<Record<LibraryLoopName, LibraryLoopModule>> = {
  sdk: {
    name: 'sdk',
    packages: ['@anthropic-ai/sdk', 'openai'],
    load: async () => (await import('./sdk.ts')).sdkLoop(),
  },
  // Picked once, by the runtime this process runs on.
  'ai-sdk': aiSdkModule(aiSdkMajor(process.versions.node, (name) => installedVersion(name) !== undefined)),
  langchain: {
    name: 'langchain',
    packages: ['@langchain/core', '@langchain/anthropic', '@langchain/openai'],
    load: async () => (await import('./langchain.ts')).langchainLoop(),
  },
  'pi-ai': {
    name: 'pi-ai',
    packages: ['@mariozechner/pi-ai'],
    load: async () => (await import('./pi-ai.ts')).piAiLoop(),
  },
  'openai-agents': {
    name: 'openai-agents',
    packages: ['@openai/agents-core', '@openai/agents-openai'],
    load: async () => (await import('./openai-agents.ts')).openAiAgentsLoop(),
  },
}

/** A library loop as loaded for a run: the loop, or why it cannot run and the command that fixes it. */
export type LoadedLibrary =
  | { status: 'loaded'; loop: LibraryLoop; versions: Record<string, string> }
  | { status: 'missing'; name: LibraryLoopName; install: string; reason: string }

/** The version pinned in cachelab's package.json for a package (its optional dependency). */
export function pinnedVersion(name: string): string | undefined {
  const manifest = manifestUpwards(dirname(fileURLToPath(import.meta.url)), 'cachelab')
  for (const field of ['optionalDependencies', 'dependencies', 'devDependencies']) {
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
export function npmName(name: string): string {
  return /^npm:(@?[^@]+)@/.exec(pinnedVersion(name) ?? '')?.[1] ?? name
}

/** The package.json of the package named `name` that holds `folder`, looking upwards. */
function manifestUpwards(folder: string, name: string): Record<string, unknown> | undefined {
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

/** Load a library loop, or say which packages are missing and the `npm i` that installs them. */
export async function loadLibrary(
  module: LibraryLoopModule,
  versionOf: (name: string) => string | undefined = installedVersion,
): Promise<LoadedLibrary> {
  const versions: Record<string, string> = {}
  const missing: string[] = []
  for (const name of module.packages) {
    const version = versionOf(name)
    if (version === undefined) missing.push(name)
    // By the name users know the package by: an alias's version is the aliased package's.
    else versions[npmName(name)] = version
  }
  const install = `npm i ${module.packages.map((name) => `${name}@${pinnedVersion(name) ?? 'latest'}`).join(' ')}`
  if (missing.length > 0)
    return { status: 'missing', name: module.name, install, reason: `not installed: ${missing.join(', ')}` }
  try {
    return { status: 'loaded', loop: await module.load(), versions }
  } catch (error) {
    return { status: 'missing', name: module.name, install, reason: (error as Error).message }
  }
}
