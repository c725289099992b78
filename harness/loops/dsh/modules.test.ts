import { describe, expect, it } from 'vitest'
import { CachelabError } from '../../errors.ts'
import { DSH_INSTALL, ensurePromiseWithResolvers, loadDshModules } from './modules.ts'

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
