import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// dev-build.js is plain JavaScript (it runs before any TypeScript can): imported by URL, typed here.
const { prepare, listSources } = (await import(new URL('./dev-build.js', import.meta.url).href)) as {
  prepare: (root: string, cacheRoot?: string) => Promise<URL>
  listSources: (root: string) => string[]
}

const repository = fileURLToPath(new URL('..', import.meta.url))

/** A small repository: tsconfig, package.json, the real node_modules (for tsx's esbuild), and `files`. */
function repositoryWith(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'cachelab-dev-build-'))
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({ include: ['bin', 'lib'], exclude: ['lib/out'] }),
  )
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'cachelab', type: 'module' }))
  symlinkSync(join(repository, 'node_modules'), join(root, 'node_modules'))
  for (const [path, text] of Object.entries(files)) write(root, path, text)
  return root
}

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true })
  writeFileSync(join(root, path), text)
}

const FILES = {
  'bin/cli.ts': "import { answer } from '../lib/answer.ts'\nexport const main = (): number => answer\n",
  'lib/answer.ts': 'export const answer: number = 41\n',
  'lib/answer.test.ts': "import { answer } from './answer.ts'\nexport const tested = answer\n",
  'lib/out/generated.ts': 'export const generated = 1\n',
}

describe('listSources', () => {
  it("lists the TypeScript under tsconfig's include, without tests or excluded folders", () => {
    expect(listSources(repositoryWith(FILES))).toEqual(['bin/cli.ts', 'lib/answer.ts'])
  })
})

describe('prepare', () => {
  it('writes each source as JavaScript whose relative imports name the .js beside it', async () => {
    const root = repositoryWith(FILES)
    const cli = await prepare(root, join(root, 'cache'))
    const built = readFileSync(cli, 'utf8')
    expect(built).toContain('"../lib/answer.js"')
    expect(built).not.toContain('answer.ts"')
    const module = (await import(cli.href)) as { main: () => number }
    expect(module.main()).toBe(41)
    expect(existsSync(join(dirname(fileURLToPath(cli)), '..', 'lib', 'answer.test.js'))).toBe(false)
  })

  it('rebuilds a source whose content changed, even at the same size and modification time', async () => {
    const root = repositoryWith(FILES)
    const cache = join(root, 'cache')
    const answer = join(dirname(fileURLToPath(await prepare(root, cache))), '..', 'lib', 'answer.js')
    expect(readFileSync(answer, 'utf8')).toContain('41')
    const before = statSync(join(root, 'lib/answer.ts'))
    write(root, 'lib/answer.ts', 'export const answer: number = 42\n')
    utimesSync(join(root, 'lib/answer.ts'), before.atime, before.mtime)
    await prepare(root, cache)
    expect(readFileSync(answer, 'utf8')).toContain('42')
  })

  it('leaves the output of an unchanged source alone and removes that of a deleted one', async () => {
    const root = repositoryWith({ ...FILES, 'lib/gone.ts': 'export const gone = true\n' })
    const cache = join(root, 'cache')
    const out = dirname(dirname(fileURLToPath(await prepare(root, cache))))
    const cliWritten = statSync(join(out, 'bin', 'cli.js')).mtimeMs
    expect(existsSync(join(out, 'lib', 'gone.js'))).toBe(true)
    rmSync(join(root, 'lib/gone.ts'))
    await prepare(root, cache)
    expect(existsSync(join(out, 'lib', 'gone.js'))).toBe(false)
    expect(statSync(join(out, 'bin', 'cli.js')).mtimeMs).toBe(cliWritten)
  })

  it('fails on a source esbuild cannot parse, so the caller falls back to tsx', async () => {
    const root = repositoryWith({ ...FILES, 'lib/broken.ts': 'export const broken: number = \n' })
    await expect(prepare(root, join(root, 'cache'))).rejects.toThrow()
  })
})
