// Scenarios from a user's own files (`--scenarios PATH`): the files a path names, importing each (a `.ts`
// file through Node's type stripping or the user's own tsx), the scenarios it exports, and validation.

import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, extname, join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { CachelabError } from '../harness/errors.ts'
import type { Scenario } from './types.ts'
import { type Problem, scenarioProblems } from './validate.ts'

/** File name endings `--scenarios` loads; `*.test.ts` and `*.d.ts` in a directory are skipped. */
export const SCENARIO_EXTENSIONS: readonly string[] = ['.ts', '.js', '.mjs']

/** A scenario read from a user's file. */
export interface UserScenario {
  scenario: Scenario
  /** The file it came from, as the user named it (relative to the working directory when inside it). */
  file: string
}

/** tsx's `tsImport`: imports a TypeScript file without registering a loader for the whole process. */
export type TsImport = (specifier: string, parentUrl: string) => Promise<unknown>

/**
 * How a module is imported. Injected so the fallbacks (Node's type stripping, then the user's tsx) can be
 * tested on any Node version.
 */
export interface ModuleImporter {
  /** The runtime's own `import()`: plain Node, tsx when the CLI runs under it, Vite under Vitest. */
  native(url: string): Promise<unknown>
  /** tsx's `tsImport` as installed for files in `directory` (the user's project), or undefined. */
  findTsx(directory: string): Promise<TsImport | undefined>
}

/** The importer of the running process. */
export const nodeImporter: ModuleImporter = {
  native: (url) => import(url),
  findTsx: async (directory) => {
    // The user's tsx, found the way their own files would find it; its ESM entry, since the CommonJS one
    // does not load its hooks from another package's location.
    let manifestPath: string
    try {
      manifestPath = createRequire(join(directory, 'noop.js')).resolve('tsx/package.json')
    } catch {
      return undefined
    }
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      exports?: Record<string, { import?: { default?: string } } | string>
    }
    const entry = manifest.exports?.['./esm/api']
    const target = typeof entry === 'object' ? entry.import?.default : undefined
    if (target === undefined) return undefined
    const api = (await import(pathToFileURL(join(dirname(manifestPath), target)).href)) as {
      tsImport?: TsImport
    }
    return api.tsImport
  },
}

/**
 * Every user scenario the path list names (a file, a directory of scenario files, or a comma list of
 * either), validated, in the order given (a directory's files by name). A bad file, a duplicate name or a
 * name a built-in scenario already has is an input error naming the file and the field.
 */
export async function loadUserScenarios(
  pathList: string,
  builtIns: readonly Scenario[],
  options: { cwd?: string; importer?: ModuleImporter } = {},
): Promise<UserScenario[]> {
  const cwd = options.cwd ?? process.cwd()
  const importer = options.importer ?? nodeImporter
  const loaded: UserScenario[] = []
  for (const file of scenarioFiles(pathList, cwd)) {
    const shown = shownPath(file, cwd)
    const moduleNamespace = await importScenarioModule(file, shown, importer)
    for (const scenario of scenariosOfModule(moduleNamespace, shown)) {
      const clash = builtIns.find((builtIn) => builtIn.name === scenario.name)
      if (clash !== undefined)
        throw new CachelabError(
          'input',
          `${shown}: scenario ${JSON.stringify(scenario.name)}: name: a built-in scenario has this name; choose another`,
        )
      const earlier = loaded.find((entry) => entry.scenario.name === scenario.name)
      if (earlier !== undefined)
        throw new CachelabError(
          'input',
          `${shown}: scenario ${JSON.stringify(scenario.name)}: name: duplicate (also in ${earlier.file})`,
        )
      loaded.push({ scenario, file: shown })
    }
  }
  return loaded
}

/** The files a comma list of paths names: files as given, directories' scenario files (not recursive) by name. */
export function scenarioFiles(pathList: string, cwd: string): string[] {
  const entries = pathList
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
  if (entries.length === 0) throw new CachelabError('usage', '--scenarios needs a file or directory')
  const files: string[] = []
  for (const entry of entries) {
    const path = resolve(cwd, entry)
    if (!existsSync(path)) throw new CachelabError('input', `--scenarios: ${entry} does not exist`)
    if (statSync(path).isDirectory()) {
      const found = readdirSync(path)
        .filter((name) => isScenarioFileName(name) && statSync(join(path, name)).isFile())
        .sort()
      if (found.length === 0)
        throw new CachelabError(
          'input',
          `--scenarios: ${entry} has no scenario files (${SCENARIO_EXTENSIONS.map((extension) => `*${extension}`).join(', ')})`,
        )
      files.push(...found.map((name) => join(path, name)))
    } else {
      if (!SCENARIO_EXTENSIONS.includes(extname(path)))
        throw new CachelabError(
          'input',
          `--scenarios: ${entry} is not a scenario file (expected ${SCENARIO_EXTENSIONS.join(', ')})`,
        )
      files.push(path)
    }
  }
  return [...new Set(files)]
}

function isScenarioFileName(name: string): boolean {
  if (name.endsWith('.d.ts') || /\.test\.[cm]?[jt]s$/.test(name)) return false
  return SCENARIO_EXTENSIONS.includes(extname(name))
}

/**
 * Import one scenario file. A `.ts` file the runtime cannot load (Node 20, or syntax Node's type
 * stripping does not erase) goes through the user's tsx; without it the error says what to do.
 */
export async function importScenarioModule(
  file: string,
  shown: string,
  importer: ModuleImporter,
): Promise<unknown> {
  const url = pathToFileURL(file).href
  try {
    return await importer.native(url)
  } catch (error) {
    const code = errorCode(error)
    const typescript = extname(file) === '.ts'
    const unloadable = code === 'ERR_UNKNOWN_FILE_EXTENSION' || code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX'
    if (!typescript || !unloadable) throw loadError(shown, error, file)
    const tsImport = await importer.findTsx(dirname(file))
    if (tsImport === undefined)
      throw new CachelabError(
        'input',
        code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX'
          ? `${shown}: uses TypeScript syntax Node's type stripping cannot erase (enum, namespace, parameter properties): rewrite it with erasable syntax, install tsx in your project (npm i -D tsx), or use a .js/.mjs file`
          : `${shown}: this Node (${process.version}) cannot import a .ts file by itself: install tsx in your project (npm i -D tsx), use Node >= 22.18, or write the scenario as a .js/.mjs file`,
      )
    try {
      return await tsImport(url, url)
    } catch (tsxError) {
      throw loadError(shown, tsxError, file)
    }
  }
}

function loadError(shown: string, error: unknown, file: string): CachelabError {
  const message = error instanceof Error ? error.message : String(error)
  const syntax = syntaxErrorAt(error, file)
  if (syntax !== undefined)
    return new CachelabError(
      'input',
      `${shown}:${syntax.line}:${syntax.column}: syntax error: ${syntax.reason}`,
    )
  return new CachelabError('input', `${shown}: could not be loaded: ${message.split('\n')[0]}`)
}

/** Where a syntax error is, as a file:line:column a user's editor opens. */
export interface SyntaxErrorPlace {
  line: number
  column: number
  reason: string
}

/**
 * The line and column (both from 1) of a scenario file's syntax error. tsx (esbuild) writes them into its
 * message, with the column from 0; Node's own SyntaxError carries neither, so `node --check` reads the
 * file again and its caret gives them (only on this failing path: it costs a process).
 */
export function syntaxErrorAt(
  error: unknown,
  file: string,
  check: (file: string) => string = nodeCheck,
): SyntaxErrorPlace | undefined {
  if (!(error instanceof Error)) return undefined
  const esbuild = /:(\d+):(\d+): ERROR: (.+)/.exec(error.message)
  if (esbuild !== undefined && esbuild !== null)
    return { line: Number(esbuild[1]), column: Number(esbuild[2]) + 1, reason: esbuild[3] as string }
  if (error.name !== 'SyntaxError') return undefined
  // `FILE:LINE`, the source line, a caret line under the fault, a blank line, `SyntaxError: reason`.
  const lines = check(file).split('\n')
  const named = [file, pathToFileURL(file).href]
  const head = lines.findIndex(
    (line) => /:\d+$/.test(line) && named.some((name) => line.startsWith(`${name}:`)),
  )
  const caret = lines.findIndex((line, index) => index > head && /^\s*\^+\s*$/.test(line))
  const line = Number(/:(\d+)$/.exec(lines[head] ?? '')?.[1])
  if (head === -1 || caret === -1 || !Number.isInteger(line)) return undefined
  return {
    line,
    column: (lines[caret] as string).indexOf('^') + 1,
    reason: error.message.split('\n')[0] ?? '',
  }
}

/** What `node --check FILE` says on stderr. */
function nodeCheck(file: string): string {
  return spawnSync(process.execPath, ['--check', file], { encoding: 'utf8', timeout: 10_000 }).stderr ?? ''
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined
  return typeof error.code === 'string' ? error.code : undefined
}

/**
 * The scenarios a module exports, validated: its default export, else its `scenarios` export, each a
 * scenario or an array of them. TypeScript compiled to CommonJS (tsx in a package without
 * `"type": "module"`) arrives wrapped in one more `default`, which is unwrapped first.
 */
export function scenariosOfModule(moduleNamespace: unknown, shown: string): Scenario[] {
  const namespace = unwrapCommonJs(moduleNamespace)
  const named = namespace.scenarios
  let exported = namespace.default
  // A CommonJS `exports.scenarios = …` shows up both as the default (the exports object) and as `scenarios`.
  if (exported !== undefined && named !== undefined && exported !== named) {
    const isExportsObject =
      typeof exported === 'object' &&
      exported !== null &&
      (exported as { scenarios?: unknown }).scenarios === named
    if (!isExportsObject)
      throw new CachelabError(
        'input',
        `${shown}: exports both a default and \`scenarios\`: keep one (a scenario or an array of them)`,
      )
    exported = named
  }
  exported ??= named
  if (exported === undefined)
    throw new CachelabError(
      'input',
      `${shown}: exports no scenario: \`export default\` a scenario or an array of them (or export \`scenarios\`); keep helper modules in a subdirectory`,
    )
  const values = Array.isArray(exported) ? exported : [exported]
  if (values.length === 0) throw new CachelabError('input', `${shown}: exports an empty list of scenarios`)
  return values.map((value, index) => {
    const problems = scenarioProblems(value)
    if (problems.length > 0)
      throw problemError(shown, value, Array.isArray(exported) ? index : undefined, problems)
    return value as Scenario
  })
}

function unwrapCommonJs(moduleNamespace: unknown): Record<string, unknown> {
  const namespace = (moduleNamespace ?? {}) as Record<string, unknown>
  const inner = namespace.default
  if (typeof inner === 'object' && inner !== null && (inner as { __esModule?: unknown }).__esModule === true)
    return inner as Record<string, unknown>
  return namespace
}

/** One line: the file, which scenario, the first problem's field and message, and how many more there are. */
function problemError(
  shown: string,
  value: unknown,
  index: number | undefined,
  problems: Problem[],
): CachelabError {
  const name = (value as { name?: unknown } | null)?.name
  const which =
    typeof name === 'string' && name !== ''
      ? `scenario ${JSON.stringify(name)}`
      : index === undefined
        ? 'default export'
        : `scenario [${index}]`
  const [first] = problems
  const more =
    problems.length > 1
      ? ` (and ${problems.length - 1} more ${problems.length === 2 ? 'problem' : 'problems'})`
      : ''
  const where = first === undefined || first.path === '' ? '' : `${first.path}: `
  return new CachelabError('input', `${shown}: ${which}: ${where}${first?.message ?? 'invalid'}${more}`)
}

function shownPath(file: string, cwd: string): string {
  const path = relative(cwd, file)
  return path.startsWith('..') ? file : path
}
