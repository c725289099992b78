import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SCENARIOS } from './index.ts'
import {
  importScenarioModule,
  loadUserScenarios,
  type ModuleImporter,
  nodeImporter,
  scenarioFiles,
  scenariosOfModule,
  syntaxErrorAt,
} from './load.ts'

/** A scenario file's text: one scenario of this name, in JavaScript. */
function scenarioSource(name: string): string {
  return `export default {
  name: ${JSON.stringify(name)},
  demonstrates: 'A test scenario.',
  variants: [{ name: 'default' }],
  system: { tokens: 1200 },
  tools: [],
  script: [{ kind: 'turn', user: 'Hello.', steps: [{ text: 'Hi.' }] }],
  claims: [],
}
`
}

/** A directory holding the files given by name and text. */
function project(files: Record<string, string>): string {
  const directory = mkdtempSync(join(tmpdir(), 'cachelab-scenarios-'))
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(directory, name, '..'), { recursive: true })
    writeFileSync(join(directory, name), text)
  }
  return directory
}

const minimal = {
  name: 'minimal',
  demonstrates: 'A test scenario.',
  variants: [{ name: 'default' }],
  system: 'You help.',
  tools: [],
  script: [{ kind: 'turn', user: 'Hello.', steps: [{ text: 'Hi.' }] }],
  claims: [],
}

describe('scenarioFiles', () => {
  it("takes a directory's scenario files by name, leaving out tests, declarations and subdirectories", () => {
    const directory = project({
      'b.mjs': '',
      'a.ts': '',
      'c.js': '',
      'a.test.ts': '',
      'types.d.ts': '',
      'notes.md': '',
      'helpers/shared.ts': '',
    })
    expect(scenarioFiles(directory, '/')).toEqual(
      ['a.ts', 'b.mjs', 'c.js'].map((name) => join(directory, name)),
    )
  })

  it('takes a comma list of files and directories, relative to the working directory, each file once', () => {
    const directory = project({ 'one.mjs': '', 'more/two.mjs': '' })
    expect(scenarioFiles('one.mjs, more ,one.mjs', directory)).toEqual([
      join(directory, 'one.mjs'),
      join(directory, 'more', 'two.mjs'),
    ])
  })

  it.each([
    ['missing.ts', /--scenarios: missing.ts does not exist/],
    ['notes.md', /--scenarios: notes.md is not a scenario file \(expected .ts, .js, .mjs\)/],
    ['empty', /--scenarios: empty has no scenario files \(\*.ts, \*.js, \*.mjs\)/],
    [' , ', /--scenarios needs a file or directory/],
  ])('refuses %j', (path, message) => {
    const directory = project({ 'notes.md': '', 'empty/readme.md': '' })
    expect(() => scenarioFiles(path, directory)).toThrow(message)
  })
})

describe('scenariosOfModule', () => {
  it('takes the default export, a scenario or an array of them', () => {
    expect(scenariosOfModule({ default: minimal }, 'a.mjs')).toEqual([minimal])
    expect(scenariosOfModule({ default: [minimal, { ...minimal, name: 'other' }] }, 'a.mjs')).toHaveLength(2)
  })

  it('takes a named `scenarios` export when there is no default', () => {
    expect(scenariosOfModule({ scenarios: [minimal] }, 'a.mjs')).toEqual([minimal])
  })

  it('unwraps TypeScript compiled to CommonJS and a CommonJS exports object', () => {
    const compiled = { default: Object.defineProperty({ default: minimal }, '__esModule', { value: true }) }
    expect(scenariosOfModule(compiled, 'a.ts')).toEqual([minimal])
    const exportsObject = { scenarios: [minimal] }
    expect(scenariosOfModule({ default: exportsObject, scenarios: exportsObject.scenarios }, 'a.js')).toEqual(
      [minimal],
    )
  })

  it.each([
    [{}, /a.mjs: exports no scenario: `export default` a scenario or an array of them/],
    [{ default: minimal, scenarios: [minimal] }, /a.mjs: exports both a default and `scenarios`: keep one/],
    [{ default: [] }, /a.mjs: exports an empty list of scenarios/],
    [
      { default: { ...minimal, variants: [{ name: 'default', policies: { route: 'sideways' } }] } },
      /^a.mjs: scenario "minimal": variants\[0\].policies.route: unknown value "sideways" \(expected one of: in-history, unsupported\)$/,
    ],
    [
      { default: [minimal, { ...minimal, name: undefined, script: undefined }] },
      /^a.mjs: scenario \[1\]: name: missing \(and 1 more problem\)$/,
    ],
  ])('refuses %j with one line naming the file and field', (namespace, message) => {
    expect(() => scenariosOfModule(namespace, 'a.mjs')).toThrow(message)
  })
})

describe('importScenarioModule', () => {
  const unknownExtension = Object.assign(new Error('Unknown file extension ".ts"'), {
    code: 'ERR_UNKNOWN_FILE_EXTENSION',
  })
  const failing = (error: Error, tsImport?: (url: string) => Promise<unknown>): ModuleImporter => ({
    native: () => Promise.reject(error),
    findTsx: async () => tsImport,
  })

  it("imports a .ts file the runtime cannot load through the user's tsx", async () => {
    const imported: string[] = []
    const namespace = await importScenarioModule(
      '/project/scenarios/a.ts',
      'scenarios/a.ts',
      failing(unknownExtension, async (url) => {
        imported.push(url)
        return { default: minimal }
      }),
    )
    expect(namespace).toEqual({ default: minimal })
    expect(imported).toEqual(['file:///project/scenarios/a.ts'])
  })

  it('without tsx says what to do instead', async () => {
    await expect(importScenarioModule('/p/a.ts', 'a.ts', failing(unknownExtension))).rejects.toThrow(
      /^a.ts: this Node \(v[\d.]+\) cannot import a .ts file by itself: install tsx in your project \(npm i -D tsx\), use Node >= 22.18, or write the scenario as a .js\/.mjs file$/,
    )
    const syntax = Object.assign(new Error('enum'), { code: 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX' })
    await expect(importScenarioModule('/p/a.ts', 'a.ts', failing(syntax))).rejects.toThrow(
      /a.ts: uses TypeScript syntax Node's type stripping cannot erase \(enum, namespace, parameter properties\)/,
    )
  })

  it('reports any other failure as the file that could not be loaded, without trying tsx', async () => {
    let looked = false
    const importer: ModuleImporter = {
      native: () => Promise.reject(new SyntaxError("Unexpected token '}'\n    at line 3")),
      findTsx: async () => {
        looked = true
        return undefined
      },
    }
    await expect(importScenarioModule('/p/a.mjs', 'a.mjs', importer)).rejects.toThrow(
      /^a.mjs: could not be loaded: Unexpected token '}'$/,
    )
    expect(looked).toBe(false)
  })

  it("names a syntax error's file:line:column, read off node --check where Node's error has none", async () => {
    const dir = project({ 'bad.mjs': 'export default {\n  name: "x",\n  oops oops\n}\n' })
    const importer: ModuleImporter = {
      native: () => Promise.reject(new SyntaxError("Unexpected identifier 'oops'")),
      findTsx: async () => undefined,
    }
    await expect(importScenarioModule(join(dir, 'bad.mjs'), 'bad.mjs', importer)).rejects.toThrow(
      /^bad\.mjs:3:8: syntax error: Unexpected identifier 'oops'$/,
    )
  })

  it("takes tsx's line and column (from 0) from its message, and none from an error that is not a syntax error", () => {
    const transform = new Error(
      'Transform failed with 1 error:\n/p/bad.ts:3:7: ERROR: Expected "}" but found "oops"',
    )
    const never = () => {
      throw new Error('node --check is not needed')
    }
    expect(syntaxErrorAt(transform, '/p/bad.ts', never)).toEqual({
      line: 3,
      column: 8,
      reason: 'Expected "}" but found "oops"',
    })
    expect(syntaxErrorAt(new Error('no database in tests'), '/p/a.mjs', never)).toBeUndefined()
    expect(syntaxErrorAt(new SyntaxError('x'), '/p/a.mjs', () => '')).toBeUndefined()
  })

  it("finds the user's own tsx from the file's directory, and none where there is none", async () => {
    const outside = project({ 'a.ts': '' })
    expect(await nodeImporter.findTsx(outside)).toBeUndefined()
    const tsImport = await nodeImporter.findTsx(import.meta.dirname)
    expect(tsImport).toBeTypeOf('function')
    // TypeScript that type stripping refuses, in a directory without "type": "module": tsx compiles it to
    // CommonJS, and the module's exports are still found.
    const file = join(outside, 'with-enum.ts')
    writeFileSync(
      file,
      `enum Turns { Few = 1 }\nexport default ${JSON.stringify(minimal)} as { name: string }\nexport const turns: number = Turns.Few\n`,
    )
    const namespace = await tsImport?.(`file://${file}`, `file://${file}`)
    expect(scenariosOfModule(namespace, 'with-enum.ts').map((scenario) => scenario.name)).toEqual(['minimal'])
  })
})

describe('loadUserScenarios', () => {
  it("loads a directory's files in name order, with the file each scenario came from", async () => {
    const directory = project({ 'b.mjs': scenarioSource('second'), 'a.js': scenarioSource('first') })
    const loaded = await loadUserScenarios('.', SCENARIOS, { cwd: directory })
    expect(loaded.map((entry) => [entry.scenario.name, entry.file])).toEqual([
      ['first', 'a.js'],
      ['second', 'b.mjs'],
    ])
  })

  it('refuses a name twice, and a name a built-in scenario has', async () => {
    const twice = project({ 'a.mjs': scenarioSource('mine'), 'b.mjs': scenarioSource('mine') })
    await expect(loadUserScenarios('.', SCENARIOS, { cwd: twice })).rejects.toThrow(
      /^b.mjs: scenario "mine": name: duplicate \(also in a.mjs\)$/,
    )
    const clash = project({ 'a.mjs': scenarioSource('append-only') })
    await expect(loadUserScenarios('a.mjs', SCENARIOS, { cwd: clash })).rejects.toThrow(
      /^a.mjs: scenario "append-only": name: a built-in scenario has this name; choose another$/,
    )
  })

  it('names the file when loading it throws', async () => {
    const directory = project({ 'broken.mjs': 'throw new Error("no database in tests")\n' })
    await expect(loadUserScenarios('broken.mjs', SCENARIOS, { cwd: directory })).rejects.toThrow(
      /^broken.mjs: could not be loaded: no database in tests$/,
    )
  })
})
