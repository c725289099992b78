import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CachelabError } from './errors.ts'
import {
  importPeer,
  installCommand,
  isMissingPackage,
  listNames,
  npmName,
  peerAsk,
  peerSpec,
  pinnedVersion,
} from './peers.ts'

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
  peerDependencies: Record<string, string>
  peerDependenciesMeta: Record<string, { optional?: boolean }>
}

/** An import of a package that is not installed, as Node's ESM loader fails it. */
const notInstalled = (specifier: string) =>
  Object.assign(
    new Error(`Cannot find package '${specifier}' imported from /project/node_modules/cachelab`),
    {
      code: 'ERR_MODULE_NOT_FOUND',
    },
  )

const pins: Record<string, string> = { openai: '6.49.0', 'ai-7': 'npm:ai@7.0.173' }
const pin = (name: string) => pins[name]

describe('the ask for a missing peer', () => {
  it('names the package and the version to install, in one line', () => {
    expect(peerAsk('cachelab run drives scenarios through the openai SDK', ['openai'], pin)).toBe(
      'cachelab run drives scenarios through the openai SDK: npm i -D openai@6.49.0',
    )
  })

  it('installs an aliased pin under the npm name it points at', () => {
    expect(peerSpec('ai-7', pins['ai-7'])).toBe('ai@7.0.173')
    expect(npmName('ai-7', pins['ai-7'])).toBe('ai')
    expect(installCommand(['ai-7', 'openai'], pin)).toBe('npm i -D ai@7.0.173 openai@6.49.0')
  })

  it('names a package without a pin by its name alone', () => {
    expect(installCommand(['left-pad'], pin)).toBe('npm i -D left-pad')
  })

  it('lists several packages as a sentence', () => {
    expect(listNames(['openai'], pin)).toBe('openai')
    expect(listNames(['openai', 'ai-7'], pin)).toBe('openai and ai')
    expect(listNames(['a', 'b', 'c'], pin)).toBe('a, b and c')
  })

  it('reads the versions off cachelab’s own pins (its devDependencies)', () => {
    expect(pinnedVersion('openai')).toBe(manifest.devDependencies.openai)
    expect(pinnedVersion('msw')).toBe(manifest.dependencies.msw)
    expect(peerSpec('ai-7')).toBe(`ai@${manifest.devDependencies['ai-7']?.split('@').at(-1)}`)
  })
})

describe('importPeer', () => {
  it('hands back the module when the package is installed', async () => {
    const module = { answer: 42 }
    expect(await importPeer('openai', 'needs', async () => module)).toBe(module)
  })

  it('fails a missing package with the ask, as a usage error (exit 2 from the CLI)', async () => {
    const failure = await importPeer(
      'openai',
      'cachelab run drives scenarios through the openai SDK',
      async (s) => {
        throw notInstalled(s)
      },
    ).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(CachelabError)
    expect((failure as CachelabError).kind).toBe('usage')
    expect((failure as CachelabError).message).toBe(
      `cachelab run drives scenarios through the openai SDK: npm i -D openai@${manifest.devDependencies.openai}`,
    )
  })

  it('rethrows a missing dependency of the package, and any error inside it, as they are', async () => {
    const inner = notInstalled('@smithy/core')
    await expect(
      importPeer('@aws-sdk/client-bedrock-runtime', 'needs', async () => {
        throw inner
      }),
    ).rejects.toBe(inner)
    const broken = new TypeError('x is not a function')
    await expect(
      importPeer('openai', 'needs', async () => {
        throw broken
      }),
    ).rejects.toBe(broken)
  })

  it('tells a missing package by require’s code too', () => {
    const required = Object.assign(new Error("Cannot find module 'better-sqlite3'"), {
      code: 'MODULE_NOT_FOUND',
    })
    expect(isMissingPackage(required, 'better-sqlite3')).toBe(true)
    expect(isMissingPackage(required, 'openai')).toBe(false)
  })
})

describe('cachelab’s package.json', () => {
  const clientLibraries = [
    'openai',
    '@anthropic-ai/sdk',
    '@google/genai',
    '@aws-sdk/client-bedrock-runtime',
    'ai',
    '@ai-sdk/anthropic',
    '@ai-sdk/openai',
    '@ai-sdk/deepseek',
    '@langchain/core',
    '@langchain/anthropic',
    '@langchain/openai',
    '@openai/agents-core',
    '@openai/agents-openai',
    '@mariozechner/pi-ai',
    '@deepseek-ai/dsh-agent-loop',
    '@deepseek-ai/dsh-llm-deepseek',
    'better-sqlite3',
  ]

  it('installs no client library with cachelab: each is an optional peer, pinned for this repository', () => {
    for (const name of clientLibraries) {
      expect(manifest.dependencies, name).not.toHaveProperty([name])
      expect(manifest.peerDependenciesMeta[name]?.optional, name).toBe(true)
      expect(manifest.devDependencies[name], name).toMatch(/^\d/)
    }
    expect(manifest).not.toHaveProperty('optionalDependencies')
  })

  it('lets every peer range take the version this repository pins', () => {
    for (const [name, range] of Object.entries(manifest.peerDependencies)) {
      const pinned = manifest.devDependencies[name]
      expect(pinned, name).toBeDefined()
      const carets = range.split('||').map((part) => part.trim())
      expect(
        carets.some(
          (part) =>
            part === `^${pinned}` || (part.startsWith('^') && satisfiesCaret(pinned ?? '', part.slice(1))),
        ),
        `${name} ${range} takes ${pinned}`,
      ).toBe(true)
    }
  })
})

/**
 * Whether `version` satisfies `^base` for the plain x.y.z ranges package.json uses: not below the base,
 * within its major (within its minor on 0.x).
 */
function satisfiesCaret(version: string, base: string): boolean {
  const parts = (text: string) => text.split('.').map(Number)
  const [major = 0, minor = 0, patch = 0] = parts(version)
  const [baseMajor = 0, baseMinor = 0, basePatch = 0] = parts(base)
  if (major !== baseMajor || (major === 0 && minor !== baseMinor)) return false
  return minor > baseMinor || (minor === baseMinor && patch >= basePatch)
}
