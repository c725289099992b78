import { spawnSync } from 'node:child_process'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from '../bin/testing.ts'
import { CachelabError } from '../harness/errors.ts'
import { lockFileOf, processAlive } from './folder-lock.ts'
import {
  buildPrefixOf,
  folderState,
  foreignCollisions,
  MANIFEST_FILE,
  manifestText,
  parseManifest,
  RunFolder,
  readManifest,
  replaceSymlink,
  requireCompleteRun,
  unsafePathProblem,
} from './run-folder.ts'

const temp = (prefix = 'cachelab-folder-') => mkdtempSync(join(tmpdir(), prefix))
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Every file under `dir` with its content, paths relative to it. */
function contents(dir: string): Record<string, string> {
  const found: Record<string, string> = {}
  const walk = (relative: string) => {
    for (const name of readdirSync(join(dir, relative))) {
      const path = relative === '' ? name : `${relative}/${name}`
      if (lstatSync(join(dir, path)).isDirectory()) walk(path)
      else found[path] = readFileSync(join(dir, path), 'utf8')
    }
  }
  walk('')
  return found
}

/** A folder holding files cachelab never wrote, some named like its own. */
function foreignFolder(): { dir: string; foreign: Record<string, string> } {
  const dir = temp()
  mkdirSync(join(dir, 'sessions'))
  const foreign = {
    'notes.txt': 'mine',
    'sessions/mine.jsonl': '{"mine": true}\n',
    'sessions/old.torn': 'line 3: {"se',
    'data.csv': 'a,b\n1,2\n',
  }
  for (const [name, content] of Object.entries(foreign)) writeFileSync(join(dir, name), content)
  return { dir, foreign }
}

describe('a run folder manifest', () => {
  it('accepts only plain relative paths inside the folder', () => {
    expect(unsafePathProblem('sessions/a.jsonl')).toBeUndefined()
    for (const bad of ['', '/etc/passwd', '../x', 'a/../../x', 'a//b', './a', 'a\\b', 'C:x', MANIFEST_FILE])
      expect(unsafePathProblem(bad), bad).toBeDefined()
  })

  it('reads back what it writes, files sorted and unique', () => {
    const text = manifestText({
      format: 'cachelab-run-folder',
      version: 1,
      writer: 'run',
      state: 'complete',
      files: ['steps.csv', 'breaks.csv', 'steps.csv'],
    })
    expect(parseManifest(text, 'm').files).toEqual(['breaks.csv', 'steps.csv'])
  })

  it('refuses a manifest that lists a path outside the folder, naming the file and entry', () => {
    const text = JSON.stringify({
      format: 'cachelab-run-folder',
      version: 1,
      writer: 'run',
      state: 'complete',
      files: ['../../home/me/.bashrc'],
    })
    expect(() => parseManifest(text, 'DIR/.cachelab-manifest.json')).toThrow(
      'DIR/.cachelab-manifest.json: files entry "../../home/me/.bashrc" must not have empty, . or .. segments',
    )
    expect(() => parseManifest('{"format": "other"}', 'm')).toThrow('m: format must be "cachelab-run-folder"')
  })

  it('calls a planned file foreign when it exists and the previous manifest does not list it', () => {
    const present = new Set(['steps.csv', 'summary.csv'])
    expect(
      foreignCollisions(['steps.csv', 'summary.csv', 'report.html'], ['steps.csv'], (name) =>
        present.has(name),
      ),
    ).toEqual(['summary.csv'])
  })

  it('tells a complete folder from an interrupted one and from one without a marker', () => {
    const manifest = parseManifest(
      manifestText({
        format: 'cachelab-run-folder',
        version: 1,
        writer: 'run',
        state: 'complete',
        files: ['a.csv'],
      }),
      'm',
    )
    expect(folderState(manifest, () => true).kind).toBe('complete')
    expect(folderState({ ...manifest, state: 'writing' }, () => true)).toMatchObject({
      kind: 'incomplete',
      missing: [],
    })
    expect(folderState(manifest, () => false)).toMatchObject({ kind: 'incomplete', missing: ['a.csv'] })
    expect(folderState(undefined, (name) => name !== 'report.html')).toEqual({
      kind: 'unmarked',
      missing: [MANIFEST_FILE, 'report.html'],
    })
  })
})

describe('a run folder on disk', () => {
  it('replaces the previous run’s files and keeps every file cachelab did not write', () => {
    const { dir, foreign } = foreignFolder()
    const first = RunFolder.replace(dir, { writer: 'run', files: ['steps.csv', 'sessions/a.jsonl'] })
    first.write('steps.csv', 'first')
    first.write('sessions/a.jsonl', 'a')
    first.complete()
    const second = RunFolder.replace(dir, { writer: 'run', files: ['steps.csv', 'sessions/b.jsonl'] })
    second.write('steps.csv', 'second')
    second.write('sessions/b.jsonl', 'b')
    second.complete()
    const { [MANIFEST_FILE]: manifest, ...files } = contents(dir)
    expect(files).toEqual({ ...foreign, 'steps.csv': 'second', 'sessions/b.jsonl': 'b' })
    expect(readManifest(dir)).toMatchObject({ state: 'complete', files: ['sessions/b.jsonl', 'steps.csv'] })
    expect(manifest).toBeDefined()
  })

  it('refuses, touching nothing, to write over a file it did not write', () => {
    const { dir, foreign } = foreignFolder()
    expect(() =>
      RunFolder.replace(dir, { writer: 'run', files: ['data.csv', 'sessions/mine.jsonl'] }),
    ).toThrow(
      `${dir} already holds data.csv, sessions/mine.jsonl not written by cachelab (no ${MANIFEST_FILE} lists them): move them away or write elsewhere`,
    )
    expect(contents(dir)).toEqual(foreign)
  })

  it('builds beside the folder: until complete, the previous run stays whole and check still accepts it', async () => {
    const parent = temp()
    const dir = join(parent, 'run')
    const first = RunFolder.replace(dir, { writer: 'run', files: ['steps.csv', 'summary.csv'] })
    first.write('steps.csv', 'first')
    first.write('summary.csv', 'first')
    // A fresh folder appears only once complete, whole, by one rename.
    expect(existsSync(dir)).toBe(false)
    first.complete()
    const before = contents(dir)
    const second = RunFolder.replace(dir, { writer: 'run', files: ['steps.csv', 'sessions/b.jsonl'] })
    second.write('steps.csv', 'second')
    writeFileSync(second.path('sessions/b.jsonl'), 'streamed')
    expect(contents(dir)).toEqual(before)
    expect(() => requireCompleteRun(dir, 'run')).not.toThrow()
    expect(second.buildDir.startsWith(join(parent, buildPrefixOf(dir)))).toBe(true)
    expect(readManifest(second.buildDir)?.state).toBe('writing')
    second.complete()
    const { [MANIFEST_FILE]: _, ...files } = contents(dir)
    expect(files).toEqual({ 'steps.csv': 'second', 'sessions/b.jsonl': 'streamed' })
    expect(readManifest(dir)).toMatchObject({ state: 'complete', files: ['sessions/b.jsonl', 'steps.csv'] })
    // Nothing is left beside it: no build folder, no lock.
    expect(readdirSync(parent)).toEqual(['run'])
  })

  it('leaves the previous run, and nothing beside it, when a run is given up midway', () => {
    const parent = temp()
    const dir = join(parent, 'run')
    const first = RunFolder.replace(dir, { writer: 'run', files: ['steps.csv'] })
    first.write('steps.csv', 'first')
    first.complete()
    const before = contents(dir)
    const second = RunFolder.replace(dir, { writer: 'run', files: ['steps.csv'] })
    second.write('steps.csv', 'half')
    second.abandon()
    expect(contents(dir)).toEqual(before)
    expect(readdirSync(parent)).toEqual(['run'])
    // The folder is free again: the next run takes it.
    RunFolder.replace(dir, { writer: 'run', files: ['steps.csv'] }).complete()
  })

  it('refuses a second writer while the first holds the folder, naming its pid, and lets it in after', () => {
    const parent = temp()
    const dir = join(parent, 'run')
    const first = RunFolder.replace(dir, { writer: 'run', files: ['steps.csv'] })
    const second = () => RunFolder.replace(dir, { writer: 'import', files: ['steps.csv'] })
    expect(second).toThrow(
      new RegExp(
        `^${literal(dir)} is being written by another cachelab run \\(pid ${process.pid}, since [^;]+; lock ${literal(lockFileOf(dir))}\\): wait for it to finish or write elsewhere$`,
      ),
    )
    try {
      second()
    } catch (error) {
      expect(error).toBeInstanceOf(CachelabError)
      expect((error as CachelabError).kind).toBe('usage')
    }
    first.write('steps.csv', 'first')
    first.complete()
    second().complete()
    expect(readManifest(dir)?.writer).toBe('import')
  })

  it('takes over a lock whose process is gone, and clears the build folder it left', () => {
    const parent = temp()
    const dir = join(parent, 'run')
    const dead = spawnSync(process.execPath, ['-e', '']).pid
    expect(processAlive(dead)).toBe(false)
    writeFileSync(
      lockFileOf(dir),
      `${JSON.stringify({ pid: dead, token: 'gone', writer: 'run', started: '2026-12-01T00:00:00Z' })}\n`,
    )
    // Killed right after making its build folder, before writing anything into it.
    const left = join(parent, `${buildPrefixOf(dir)}${dead}-0123abcd`)
    mkdirSync(left)
    // A folder of someone else's that merely shares the prefix is no build folder: it stays.
    const alike = join(parent, `${buildPrefixOf(dir)}mine`)
    mkdirSync(alike)
    const folder = RunFolder.replace(dir, { writer: 'run', files: ['steps.csv'] })
    folder.write('steps.csv', 'x')
    folder.complete()
    expect(readdirSync(parent).sort()).toEqual([basename(alike), 'run'].sort())
  })

  it('updates only the named files, keeping the rest and their ownership (a baseline refresh)', () => {
    const dir = temp()
    writeFileSync(join(dir, 'summary.csv'), 'hand made')
    writeFileSync(join(dir, 'README'), 'keep')
    const folder = RunFolder.update(dir, { writer: 'check --update', files: ['summary.csv'] })
    folder.write('summary.csv', 'new')
    folder.complete()
    expect(contents(dir)).toMatchObject({ 'summary.csv': 'new', README: 'keep' })
    expect(readManifest(dir)).toMatchObject({ state: 'complete', files: ['summary.csv'] })
  })

  it('moves a latest link by renaming a new one over it, and leaves a latest that is not a link alone', () => {
    const dir = temp()
    const link = join(dir, 'latest')
    expect(replaceSymlink(link, 'run-1')).toBe(true)
    expect(replaceSymlink(link, 'run-2')).toBe(true)
    expect(readlinkSync(link)).toBe('run-2')
    const other = join(dir, 'other')
    mkdirSync(other)
    expect(replaceSymlink(other, 'run-2')).toBe(false)
    expect(lstatSync(other).isDirectory()).toBe(true)
    symlinkSync('nowhere', join(dir, 'dangling'))
    expect(replaceSymlink(join(dir, 'dangling'), 'run-3')).toBe(true)
  })
})

describe('cachelab run --out', () => {
  const run = (out: string, ...more: string[]) =>
    runCli(['run', '--scenario', 'append-only', '--provider', 'deepseek', '--out', out, ...more])

  it('leaves every foreign file in place when --model is a typo, and writes nothing', async () => {
    const { dir, foreign } = foreignFolder()
    const result = await run(dir, '--model', 'deepseek-flsh')
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('unknown deepseek model "deepseek-flsh"')
    expect(contents(dir)).toEqual(foreign)
  })

  it('leaves every foreign file in place when a live key is missing', async () => {
    const { dir, foreign } = foreignFolder()
    const saved = process.env.DEEPSEEK_API_KEY
    delete process.env.DEEPSEEK_API_KEY
    try {
      const result = await runCli([
        'run',
        '--live',
        '--scenario',
        'append-only',
        '--provider',
        'deepseek',
        '--out',
        dir,
      ])
      expect(result.code).toBe(2)
    } finally {
      if (saved !== undefined) process.env.DEEPSEEK_API_KEY = saved
    }
    expect(contents(dir)).toEqual(foreign)
  })

  it('writes beside foreign files, runs again over its own, and check accepts the finished run', async () => {
    const { dir, foreign } = foreignFolder()
    expect((await run(dir)).code).toBe(0)
    const once = contents(dir)
    expect((await run(dir)).code).toBe(0)
    expect(contents(dir)).toEqual(once)
    expect(once).toMatchObject(foreign)
    expect(Object.keys(once)).toContain('sessions/append-only.default.deepseek.jsonl')
    expect(readManifest(dir)).toMatchObject({ writer: 'run', state: 'complete' })
    const gate = await runCli(['check', '--baseline', dir, '--out', dir])
    expect(gate.code).toBe(0)
  })

  it('is refused by check when the run was interrupted (its folder not marked complete)', async () => {
    const dir = temp()
    expect((await run(dir)).code).toBe(0)
    const manifest = join(dir, MANIFEST_FILE)
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('"complete"', '"writing"'))
    const gate = await runCli(['check', '--baseline', 'reports/baselines', '--out', dir])
    expect(gate.code).toBe(2)
    expect(gate.stderr).toContain(`run directory ${dir} is incomplete`)
    expect(existsSync(join(dir, 'steps.csv'))).toBe(true)
  })
})
