// DSH's published packages, loaded at run time: they are optional peers of cachelab, so `--loop dsh` works only
// where they are installed. The importer is injectable so tests can simulate their absence; a missing
// core package is a usage error naming what to install, a missing plugin (pruner, compaction, JSONL
// store) only takes away what it does, with the reason.

import * as zlib from 'node:zlib'
import { CachelabError } from '../../errors.ts'

/** The DSH release cachelab drives (its optional peers, pinned exactly as devDependencies). */
export const DSH_VERSION = '0.1.0-rc.8'

/** What a user runs to get DSH's loop. */
export const DSH_INSTALL = `npm i -D @deepseek-ai/dsh-agent-loop@${DSH_VERSION} @deepseek-ai/dsh-llm-deepseek@${DSH_VERSION}`

/** Imports one module by its specifier (the default is the runtime's own `import`). */
export type ModuleImporter = (specifier: string) => Promise<unknown>

/** The packages the adapter composes, by role. */
export const DSH_PACKAGES = {
  cordis: '@deepseek-ai/cordis',
  llm: '@deepseek-ai/dsh-llm',
  session: '@deepseek-ai/dsh-session',
  systemPrompt: '@deepseek-ai/dsh-system-prompt',
  tools: '@deepseek-ai/dsh-tools',
  agent: '@deepseek-ai/dsh-agent',
  persistence: '@deepseek-ai/dsh-session-persistence',
  agentLoop: '@deepseek-ai/dsh-agent-loop',
  deepseek: '@deepseek-ai/dsh-llm-deepseek',
} as const

export type DshRole = keyof typeof DSH_PACKAGES

/**
 * DSH's optional plugins the adapter installs when they load: the token meter both compaction plugins
 * measure with, the model-free tool-result pruner, the basic (summary) compaction engine, and the
 * published JSONL session store.
 */
export const DSH_PLUGINS = {
  tokenMeter: '@deepseek-ai/dsh-token-meter',
  pruner: '@deepseek-ai/dsh-compaction-tool-result-pruner',
  compaction: '@deepseek-ai/dsh-compaction-basic',
  jsonlStore: '@deepseek-ai/dsh-session-persistence-jsonl',
} as const

export type DshPluginRole = keyof typeof DSH_PLUGINS

/** One optional plugin: loaded, or why not (what to install, or what the runtime lacks). */
export type DshPlugin =
  | { status: 'loaded'; module: Readonly<Record<string, unknown>> }
  | { status: 'missing'; install: string }
  | { status: 'unsupported'; reason: string }

/** The loaded modules, each as its namespace object, and the optional plugins as they loaded. */
export type DshModules = Readonly<Record<DshRole, Readonly<Record<string, unknown>>>> & {
  readonly plugins: Readonly<Record<DshPluginRole, DshPlugin>>
}

/** The command that installs one optional plugin at the driven release. */
export function pluginInstall(role: DshPluginRole): string {
  return `npm i -D ${DSH_PLUGINS[role]}@${DSH_VERSION}`
}

/**
 * The published JSONL store imports Node's Zstandard API by name (`node:zlib`, Node 22.15+ and 23.8+), so
 * on older Node the import itself fails; it is not attempted there.
 */
export function jsonlStoreUnsupported(
  runtime: Readonly<Record<string, unknown>> = zlib as unknown as Record<string, unknown>,
): string | undefined {
  if (typeof runtime.zstdCompress === 'function') return undefined
  return `${DSH_PLUGINS.jsonlStore} imports Node's Zstandard API (node:zlib, Node 22.15+), which Node ${process.versions.node} lacks`
}

/**
 * Load every package the adapter composes. A package that is not installed is a usage error naming it and
 * the command that installs DSH's loop with its peers.
 */
export async function loadDshModules(
  importer: ModuleImporter = (specifier) => import(specifier),
  jsonlUnsupported: string | undefined = jsonlStoreUnsupported(),
): Promise<DshModules> {
  const loaded: Partial<Record<DshRole, Readonly<Record<string, unknown>>>> = {}
  for (const [role, specifier] of Object.entries(DSH_PACKAGES) as Array<[DshRole, string]>) {
    try {
      loaded[role] = (await importer(specifier)) as Readonly<Record<string, unknown>>
    } catch (error) {
      if (!isMissingModule(error)) throw error
      throw new CachelabError(
        'usage',
        `--loop dsh needs ${specifier}, which is not installed: ${DSH_INSTALL}`,
      )
    }
  }
  const plugins: Partial<Record<DshPluginRole, DshPlugin>> = {}
  for (const [role, specifier] of Object.entries(DSH_PLUGINS) as Array<[DshPluginRole, string]>) {
    if (role === 'jsonlStore' && jsonlUnsupported !== undefined) {
      plugins[role] = { status: 'unsupported', reason: jsonlUnsupported }
      continue
    }
    try {
      plugins[role] = {
        status: 'loaded',
        module: (await importer(specifier)) as Readonly<Record<string, unknown>>,
      }
    } catch (error) {
      if (!isMissingModule(error)) throw error
      plugins[role] = { status: 'missing', install: pluginInstall(role) }
    }
  }
  return { ...(loaded as Record<DshRole, Readonly<Record<string, unknown>>>), plugins } as DshModules
}

function isMissingModule(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND'
}

/**
 * DSH's loop calls `Promise.withResolvers` (Node 22+) when it constructs an agent; on Node 20 it is
 * missing. Installed only when absent, and only on the DSH adapter's path: the same semantics as the
 * standard method.
 */
export function ensurePromiseWithResolvers(): void {
  const promise = Promise as unknown as { withResolvers?: unknown }
  if (typeof promise.withResolvers === 'function') return
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>() {
      let resolve!: (value: T | PromiseLike<T>) => void
      let reject!: (reason?: unknown) => void
      const created = new Promise<T>((settle, fail) => {
        resolve = settle
        reject = fail
      })
      return { promise: created, resolve, reject }
    },
  })
}
