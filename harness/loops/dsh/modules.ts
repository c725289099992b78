// DSH's published packages, loaded at run time: they are optional dependencies, so `--loop dsh` works only
// where they are installed. The importer is injectable so tests can simulate their absence; a missing
// package is a usage error naming what to install.

import { CachelabError } from '../../errors.ts'

/** The DSH release cachelab drives (the exact optional dependencies). */
export const DSH_VERSION = '0.1.0-rc.8'

/** What a user runs to get DSH's loop. */
export const DSH_INSTALL = `npm i @deepseek-ai/dsh-agent-loop@${DSH_VERSION} @deepseek-ai/dsh-llm-deepseek@${DSH_VERSION}`

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

/** The loaded modules, each as its namespace object. */
export type DshModules = Readonly<Record<DshRole, Readonly<Record<string, unknown>>>>

/**
 * Load every package the adapter composes. A package that is not installed is a usage error naming it and
 * the command that installs DSH's loop with its peers.
 */
export async function loadDshModules(
  importer: ModuleImporter = (specifier) => import(specifier),
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
  return loaded as DshModules
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
