// The repository's TypeScript as JavaScript, for bin/cachelab.js: every source the CLI may import is
// transpiled once (esbuild, the transpiler tsx uses) into node_modules/.cache, and again only when its
// content changes, so a command run from a clone loads plain JavaScript as the installed package does.
// Freshness is by content, never by time: each start hashes every source (a few milliseconds) and
// rebuilds the files whose hash differs from the one their output was built from.
import { createHash } from 'node:crypto'
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, sep } from 'node:path'
import { pathToFileURL } from 'node:url'

/** Bumped when what this file writes changes shape, so no output of an older version is reused. */
const FORMAT = 1

/**
 * The folder tsconfig.json's `include` names, walked for `.ts` files other than tests and declarations
 * (no runtime module imports a test).
 */
export function listSources(root) {
  const config = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'))
  const excluded = new Set((config.exclude ?? []).map((path) => join(root, path)))
  const sources = []
  const walk = (dir) => {
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch (error) {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return
      throw error
    }
    for (const entry of entries) {
      const path = join(dir, entry.name)
      if (excluded.has(path)) continue
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) walk(path)
      } else if (isSource(entry.name)) sources.push(relative(root, path).split(sep).join('/'))
    }
  }
  for (const path of config.include ?? []) {
    const absolute = join(root, path)
    if (isSource(path)) sources.push(path)
    else walk(absolute)
  }
  return sources.sort()
}

const isSource = (name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')

const hash = (bytes) => createHash('sha256').update(bytes).digest('hex')

/** What a build depends on besides the sources: this file's format, esbuild's version, the tsconfig. */
function buildKey(root, esbuildVersion) {
  return hash(
    `${FORMAT}\0${realpathSync(root)}\0${esbuildVersion}\0${readFileSync(join(root, 'tsconfig.json'))}`,
  )
}

/** Writes through a temporary file and a rename, so a process starting beside this one never reads half a file. */
function writeAtomic(path, contents) {
  mkdirSync(dirname(path), { recursive: true })
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, contents)
  renameSync(temporary, path)
}

function readManifest(path) {
  try {
    const manifest = JSON.parse(readFileSync(path, 'utf8'))
    return manifest !== null && typeof manifest === 'object' ? manifest : {}
  } catch {
    return {}
  }
}

/** Relative `.ts` imports point at the `.js` written beside them; every import stays an import. */
const rewriteImports = {
  name: 'cachelab-relative-js',
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined
      const relativeTs = /^\.\.?\//.test(args.path) && args.path.endsWith('.ts')
      return { path: relativeTs ? `${args.path.slice(0, -3)}.js` : args.path, external: true }
    })
  },
}

/**
 * Brings the JavaScript copy of the repository at `root` up to date and returns the URL of its
 * `bin/cli.js`. Throws when esbuild is not installed or the cache cannot be written; the caller then runs
 * the sources through tsx instead.
 */
export async function prepare(root, cacheRoot = join(root, 'node_modules', '.cache', 'cachelab')) {
  // esbuild as tsx itself resolves it: a devDependency's dependency, present in every clone after npm ci.
  // Its version keys the output; the module itself is loaded only when a file needs building.
  const fromTsx = createRequire(createRequire(join(root, 'package.json')).resolve('tsx/package.json'))
  const esbuildVersion = JSON.parse(readFileSync(fromTsx.resolve('esbuild/package.json'), 'utf8')).version
  const out = join(cacheRoot, buildKey(root, esbuildVersion).slice(0, 16))
  const manifestPath = join(out, 'manifest.json')
  const built = readManifest(manifestPath)

  const current = {}
  for (const source of listSources(root)) current[source] = hash(readFileSync(join(root, source)))
  // package.json beside the output makes it an ES module tree and is the manifest cachelab reads its
  // version and pinned peers from.
  const packageJson = readFileSync(join(root, 'package.json'))
  current['package.json'] = hash(packageJson)

  const stale = Object.keys(current).filter((source) => built[source] !== current[source])
  const removed = Object.keys(built).filter((source) => current[source] === undefined)
  if (stale.length === 0 && removed.length === 0) return pathToFileURL(join(out, 'bin', 'cli.js'))

  for (const source of removed) {
    rmSync(join(out, outputName(source)), { force: true })
    rmSync(join(out, `${outputName(source)}.map`), { force: true })
  }
  const entryPoints = stale.filter((source) => source !== 'package.json').map((source) => join(root, source))
  if (entryPoints.length > 0) {
    const result = await fromTsx('esbuild').build({
      absWorkingDir: root,
      entryPoints,
      outbase: root,
      outdir: out,
      bundle: true,
      treeShaking: false,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      tsconfig: join(root, 'tsconfig.json'),
      sourcemap: 'linked',
      plugins: [rewriteImports],
      logLevel: 'silent',
      write: false,
    })
    for (const file of result.outputFiles) writeAtomic(file.path, file.contents)
  }
  if (stale.includes('package.json')) writeAtomic(join(out, 'package.json'), packageJson)
  writeAtomic(manifestPath, `${JSON.stringify(current)}\n`)
  return pathToFileURL(join(out, 'bin', 'cli.js'))
}

const outputName = (source) => (source.endsWith('.ts') ? `${source.slice(0, -3)}.js` : source)
