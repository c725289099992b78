import { describe, expect, it } from 'vitest'
import { CachelabError } from '../harness/errors.ts'
import { pinnedVersion } from '../harness/peers.ts'
import type { CompatibleProviderId } from '../harness/types.ts'
import { lazy, requireSdks, sdkOf, sdksOf } from './sdks.ts'

const notInstalled = (specifier: string) =>
  Object.assign(new Error(`Cannot find package '${specifier}' imported from /project`), {
    code: 'ERR_MODULE_NOT_FOUND',
  })

describe('the SDK each adapter sends through', () => {
  it('is openai for every Chat Completions and Responses provider, compatible ones included', () => {
    expect(sdkOf('openai-chat')).toBe('openai')
    expect(sdkOf('openai-responses')).toBe('openai')
    expect(sdkOf('deepseek')).toBe('openai')
    expect(sdkOf('xai' as CompatibleProviderId)).toBe('openai')
    expect(sdkOf('anthropic')).toBe('@anthropic-ai/sdk')
    expect(sdkOf('gemini')).toBe('@google/genai')
    expect(sdkOf('bedrock')).toBe('@aws-sdk/client-bedrock-runtime')
    expect(sdksOf(['deepseek', 'anthropic', 'openai-chat'])).toEqual(['openai', '@anthropic-ai/sdk'])
  })
})

describe('requireSdks', () => {
  it('passes when every SDK the providers send through imports', async () => {
    await expect(
      requireSdks(['anthropic', 'openai-chat'], 'drives', async () => ({})),
    ).resolves.toBeUndefined()
  })

  it('asks for every missing SDK in one usage error, with the pinned versions', async () => {
    const failure = await requireSdks(
      ['anthropic', 'openai-chat', 'gemini'],
      'cachelab run drives scenarios through',
      async (name) => {
        if (name === '@google/genai') return {}
        throw notInstalled(name)
      },
    ).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(CachelabError)
    expect((failure as CachelabError).kind).toBe('usage')
    expect((failure as CachelabError).message).toBe(
      `cachelab run drives scenarios through the @anthropic-ai/sdk and openai SDKs: npm i -D @anthropic-ai/sdk@${pinnedVersion('@anthropic-ai/sdk')} openai@${pinnedVersion('openai')}`,
    )
  })

  it('says SDK for one', async () => {
    await expect(
      requireSdks(['deepseek'], 'cachelab run drives scenarios through', async (name) => {
        throw notInstalled(name)
      }),
    ).rejects.toThrow(
      `cachelab run drives scenarios through the openai SDK: npm i -D openai@${pinnedVersion('openai')}`,
    )
  })

  it('lets an error inside an SDK through as it is', async () => {
    const broken = new TypeError('broken')
    await expect(
      requireSdks(['anthropic'], 'drives', async () => {
        throw broken
      }),
    ).rejects.toBe(broken)
  })
})

describe('lazy', () => {
  it('makes the value once, and again after a failure', async () => {
    let calls = 0
    const value = lazy(async () => {
      calls += 1
      if (calls === 1) throw new Error('first fails')
      return calls
    })
    await expect(value()).rejects.toThrow('first fails')
    expect(await value()).toBe(2)
    expect(await value()).toBe(2)
    expect(calls).toBe(2)
  })
})
