// The client-library loops by name, loaded lazily: a library that is not installed is reported with the
// command that installs it, never a crash, and the versions that ran are read off the installed packages.

import { installCommand, installedVersion, npmName } from '../../peers.ts'
import type { AiSdkMajor, AiSdkPackages } from './ai-sdk.ts'
import type { LibraryLoop, LibraryLoopModule, LibraryLoopName } from './types.ts'

/**
 * The AI SDK's packages per major, by the name each is installed under in this repository. ai 7 and its
 * providers need Node 22, so cachelab's own devDependencies pin them as npm aliases beside ai 6 (`ai-7`
 * is `npm:ai@7.0.173`); a user's project installs either major under the npm names (`aiSdkChoice`).
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

/**
 * The AI SDK major and package names a runtime runs: ai 7's aliases where they run (this repository on
 * Node 22+), else the npm names at whichever major is installed under them (a user's project), ai 6
 * when none is.
 */
export function aiSdkChoice(
  nodeVersion: string,
  versionOf: (name: string) => string | undefined,
): { major: AiSdkMajor; packages: AiSdkPackages } {
  if (aiSdkMajor(nodeVersion, (name) => versionOf(name) !== undefined) === 7)
    return { major: 7, packages: AI_SDK_PACKAGES[7] }
  const installed = versionOf(AI_SDK_PACKAGES[6].ai)
  return { major: installed?.split('.')[0] === '7' ? 7 : 6, packages: AI_SDK_PACKAGES[6] }
}

/** The AI SDK loop's module on one major, under the names its packages are installed as. */
export function aiSdkModule(
  major: AiSdkMajor,
  packages: AiSdkPackages = AI_SDK_PACKAGES[major],
): LibraryLoopModule {
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
  'ai-sdk': (() => {
    const { major, packages } = aiSdkChoice(process.versions.node, installedVersion)
    return aiSdkModule(major, packages)
  })(),
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

export { installedVersion, npmName, pinnedVersion } from '../../peers.ts'

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
  const install = installCommand(module.packages)
  if (missing.length > 0)
    return { status: 'missing', name: module.name, install, reason: `not installed: ${missing.join(', ')}` }
  try {
    return { status: 'loaded', loop: await module.load(), versions }
  } catch (error) {
    return { status: 'missing', name: module.name, install, reason: (error as Error).message }
  }
}
