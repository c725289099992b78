import { describe, expect, it } from 'vitest'
import { CachelabError } from '../../errors.ts'
import {
  DSH_INSTALL,
  DSH_PLUGINS,
  ensurePromiseWithResolvers,
  jsonlStoreUnsupported,
  loadDshModules,
} from './modules.ts'

const missing = (specifier: string) =>
  Object.assign(new Error(`Cannot find package '${specifier}'`), { code: 'ERR_MODULE_NOT_FOUND' })

describe('loading DSH', () => {
  it('is a usage error naming the missing package and the install command when DSH is absent', async () => {
    const importer = async (specifier: string) => {
      if (specifier === '@deepseek-ai/dsh-agent-loop') throw missing(specifier)
      return {}
    }
    const failure = await loadDshModules(importer).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(CachelabError)
    expect((failure as CachelabError).kind).toBe('usage')
    expect((failure as CachelabError).message).toContain('@deepseek-ai/dsh-agent-loop')
    expect((failure as CachelabError).message).toContain(DSH_INSTALL)
  })

  it('lets any other import failure through unchanged', async () => {
    const broken = new SyntaxError('Unexpected token')
    await expect(
      loadDshModules(async () => {
        throw broken
      }),
    ).rejects.toBe(broken)
  })

  it('takes a missing plugin as missing, naming the command that installs it, and loads the rest', async () => {
    const modules = await loadDshModules(async (specifier) => {
      if (specifier === DSH_PLUGINS.pruner) throw missing(specifier)
      return import(specifier)
    })
    expect(modules.plugins.pruner).toEqual({
      status: 'missing',
      install: 'npm i -D @deepseek-ai/dsh-compaction-tool-result-pruner@0.1.0-rc.8',
    })
    expect(modules.plugins.compaction.status).toBe('loaded')
  })

  it("does not import DSH's JSONL store where Node has no Zstandard API, and says so", async () => {
    const reason = jsonlStoreUnsupported({})
    expect(reason).toMatch(/Zstandard API \(node:zlib, Node 22\.15\+\)/)
    expect(jsonlStoreUnsupported({ zstdCompress: () => undefined })).toBeUndefined()
    const imported: string[] = []
    const modules = await loadDshModules(async (specifier) => {
      imported.push(specifier)
      return import(specifier)
    }, reason)
    expect(modules.plugins.jsonlStore).toEqual({ status: 'unsupported', reason })
    expect(imported).not.toContain(DSH_PLUGINS.jsonlStore)
  })

  it('loads every package it composes when they are installed', async () => {
    const modules = await loadDshModules()
    expect(typeof modules.agentLoop.default).toBe('function')
    expect(typeof modules.deepseek.apply).toBe('function')
  })
})

describe('the Promise.withResolvers polyfill', () => {
  it('leaves an existing Promise.withResolvers alone', () => {
    const holder = Promise as unknown as { withResolvers?: unknown }
    const native = holder.withResolvers
    const existing = () => undefined
    holder.withResolvers = existing
    try {
      ensurePromiseWithResolvers()
      expect(holder.withResolvers).toBe(existing)
    } finally {
      holder.withResolvers = native
    }
  })

  it('installs a working one where it is missing', async () => {
    const holder = Promise as unknown as { withResolvers?: unknown }
    const native = holder.withResolvers
    delete holder.withResolvers
    try {
      ensurePromiseWithResolvers()
      const { promise, resolve } = (
        Promise as unknown as { withResolvers<T>(): { promise: Promise<T>; resolve(value: T): void } }
      ).withResolvers<number>()
      resolve(7)
      expect(await promise).toBe(7)
    } finally {
      if (native === undefined) delete holder.withResolvers
      else holder.withResolvers = native
    }
  })
})
