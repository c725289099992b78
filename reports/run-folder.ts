// A run folder's ownership and completeness. cachelab lists every file it writes in
// `DIR/.cachelab-manifest.json`, deletes or replaces only files listed there, builds a new run in a
// folder beside DIR and swaps it in only once complete, one writer at a time: a foreign file is never
// lost, and an interrupted run leaves the previous one whole (notes/2026-11-30-output-safety.md,
// notes/2026-12-02-run-folders.md).

import { randomBytes } from 'node:crypto'
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { makeDirectories } from '../harness/directories.ts'
import { CachelabError } from '../harness/errors.ts'
import { FolderLock, processAlive } from './folder-lock.ts'

/** The manifest's file name, in the folder it describes. */
export const MANIFEST_FILE = '.cachelab-manifest.json'

/** The manifest's `format` tag: tells it apart from any other JSON file of that name. */
export const MANIFEST_FORMAT = 'cachelab-run-folder'

/** The manifest's version. */
export const MANIFEST_VERSION = 1

/** The files every run folder holds once complete (run, report and import write them all). */
export const RUN_FILES = ['steps.csv', 'summary.csv', 'breaks.csv', 'claims.csv', 'report.html'] as const

/**
 * A name for this moment that no other run shares: `YYYYMMDD-HHMMSS-mmm` (UTC) and six random hex
 * digits, so names sort by time and two runs started in the same millisecond still differ. For default
 * output folders and live run ids.
 */
export function runStamp(now: Date = new Date(), suffix: string = randomBytes(3).toString('hex')): string {
  const iso = now.toISOString()
  return `${iso.slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}-${iso.slice(20, 23)}-${suffix}`
}

/** Which files of a folder cachelab wrote, and whether the writing finished. */
export interface RunFolderManifest {
  /** Always `cachelab-run-folder`. */
  format: typeof MANIFEST_FORMAT
  /** The manifest's version (1). */
  version: number
  /** The command that wrote the folder: `run`, `report`, `import`, `check --update`. */
  writer: string
  /** `writing` from the moment the folder is touched; `complete` once every file is in place. */
  state: 'writing' | 'complete'
  /** Every file cachelab wrote or is writing, relative to the folder with `/` separators, sorted. */
  files: string[]
}

/** What a folder holds, as `check` sees it. */
export type RunFolderState =
  | { kind: 'complete'; manifest: RunFolderManifest }
  /** The manifest says the writing never finished, or a file it lists is gone. */
  | { kind: 'incomplete'; manifest: RunFolderManifest; missing: string[] }
  /** No manifest: not written by this cachelab, or interrupted before its first file. */
  | { kind: 'unmarked'; missing: string[] }

/** Why a manifest path is unsafe to write or delete, or undefined when it is a plain path inside the folder. */
export function unsafePathProblem(name: string): string | undefined {
  if (name === '' || name.startsWith('/') || name.includes('\\') || /^[A-Za-z]:/.test(name))
    return 'must be a relative path with / separators'
  if (name.split('/').some((segment) => segment === '' || segment === '.' || segment === '..'))
    return 'must not have empty, . or .. segments'
  if (name === MANIFEST_FILE) return 'is the manifest itself'
  return undefined
}

/** Parse a manifest's text; anything that is not one is an input error naming the file. */
export function parseManifest(text: string, where: string): RunFolderManifest {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new CachelabError(
      'input',
      `${where} is not JSON: cachelab does not know which files there are its own`,
    )
  }
  const record = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}
  const files = record.files
  const problem =
    record.format !== MANIFEST_FORMAT
      ? `format must be ${JSON.stringify(MANIFEST_FORMAT)}`
      : record.version !== MANIFEST_VERSION
        ? `version must be ${MANIFEST_VERSION}`
        : typeof record.writer !== 'string'
          ? 'writer must be a string'
          : record.state !== 'writing' && record.state !== 'complete'
            ? 'state must be writing or complete'
            : !Array.isArray(files) || !files.every((file) => typeof file === 'string')
              ? 'files must be an array of paths'
              : files
                  .map((file) => {
                    const unsafe = unsafePathProblem(file)
                    return unsafe === undefined ? undefined : `files entry ${JSON.stringify(file)} ${unsafe}`
                  })
                  .find((entry) => entry !== undefined)
  if (problem !== undefined) throw new CachelabError('input', `${where}: ${problem}`)
  return value as RunFolderManifest
}

/** A manifest as written: two-space JSON with a final newline, files sorted and unique. */
export function manifestText(manifest: RunFolderManifest): string {
  return `${JSON.stringify({ ...manifest, files: [...new Set(manifest.files)].sort() }, null, 2)}\n`
}

/**
 * The planned files that exist but are not cachelab's (absent from the previous manifest): writing them
 * would replace someone else's file.
 */
export function foreignCollisions(
  planned: readonly string[],
  owned: readonly string[],
  exists: (name: string) => boolean,
): string[] {
  const ownedSet = new Set(owned)
  return planned.filter((name) => !ownedSet.has(name) && exists(name))
}

/**
 * A folder's state from its manifest and which files are present. Without a manifest, `missing` names
 * the marker and the run files that are absent.
 */
export function folderState(
  manifest: RunFolderManifest | undefined,
  exists: (name: string) => boolean,
): RunFolderState {
  if (manifest === undefined)
    return { kind: 'unmarked', missing: [MANIFEST_FILE, ...RUN_FILES.filter((name) => !exists(name))] }
  const missing = manifest.files.filter((name) => !exists(name))
  if (manifest.state === 'complete' && missing.length === 0) return { kind: 'complete', manifest }
  return { kind: 'incomplete', manifest, missing }
}

/** The folder's manifest, or undefined when it has none. */
export function readManifest(dir: string): RunFolderManifest | undefined {
  const file = join(dir, MANIFEST_FILE)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new CachelabError('input', `cannot read ${file}: ${(error as Error).message}`)
  }
  return parseManifest(text, file)
}

/** What `check` needs of a run folder: refuse one that is not a finished cachelab run, naming what is missing. */
export function requireCompleteRun(dir: string, what: 'run' | 'baseline'): void {
  const manifest = readManifest(dir)
  // A shard (`run --shard i/n`) holds a blob, not a run: only the merged shards are one.
  const shard = manifest === undefined ? undefined : /--shard (\d+\/\d+)/.exec(manifest.writer)?.[1]
  if (shard !== undefined)
    throw new CachelabError(
      'input',
      `${what} directory ${dir} is shard ${shard} of a run, not a run: merge the shards first (cachelab merge-reports SHARD_DIR… --out DIR) and check that`,
    )
  const state = folderState(manifest, (name) => exists(join(dir, name)))
  switch (state.kind) {
    case 'complete':
      return
    case 'incomplete': {
      const missing =
        state.manifest.state === 'writing' ? ['the completion marker', ...state.missing] : state.missing
      throw new CachelabError(
        'input',
        `${what} directory ${dir} is incomplete (${MANIFEST_FILE} ${state.manifest.state === 'writing' ? `says cachelab ${state.manifest.writer} never finished` : 'lists files that are gone'}): missing ${missing.join(', ')}; write it again`,
      )
    }
    case 'unmarked':
      // A baseline may be any folder of CSVs (reports/baselines, or one made by hand): only a run must be whole.
      if (what === 'baseline') return
      throw new CachelabError(
        'input',
        `run directory ${dir} is not a finished cachelab run: missing ${state.missing.join(', ')} (an interrupted run, or files not written by cachelab run, report or import); run cachelab run first, or name a run directory with --out DIR`,
      )
    default: {
      const unreachable: never = state
      throw new CachelabError('invariant', `unknown folder state ${JSON.stringify(unreachable)}`)
    }
  }
}

/** Write a file through a temp file beside it and a rename: a reader sees the old bytes or the new, never half. */
export function writeFileAtomic(file: string, content: string): void {
  const temp = tempOf(file)
  writeFileSync(temp, content)
  renameSync(temp, file)
}

/**
 * Point `link` at `target` (a relative or absolute path) by renaming a new link over it, so `latest` is
 * never missing or half made. Returns false, touching nothing, when `link` exists and is not a link.
 */
export function replaceSymlink(link: string, target: string): boolean {
  try {
    if (!lstatSync(link).isSymbolicLink()) return false
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const temp = tempOf(link)
  rmSync(temp, { force: true })
  symlinkSync(target, temp)
  renameSync(temp, link)
  return true
}

/** How a folder is opened. */
export interface OpenRunFolder {
  /** The command writing it, recorded in the manifest: `run`, `report`, `import`, `check --update`. */
  writer: string
  /** Every file to be written, relative to the folder. */
  files: readonly string[]
}

/**
 * A folder being written. The files go into a build folder beside it (same parent, so renames are
 * atomic) while the folder itself keeps its previous run, readable and complete; `complete` swaps them
 * in. `replace` starts a fresh run (the previous run's files go, nobody else's); `update` replaces only
 * the named files (a baseline refresh). One writer at a time: a lock file beside the folder.
 */
export class RunFolder {
  /** The folder the run is for. */
  readonly dir: string
  /** Where the files are written until `complete` (a hidden sibling of `dir`). */
  readonly buildDir: string
  private readonly writer: string
  private readonly mode: 'replace' | 'update'
  private readonly files: Set<string>
  private readonly lock: FolderLock

  private constructor(
    dir: string,
    buildDir: string,
    options: OpenRunFolder,
    mode: 'replace' | 'update',
    lock: FolderLock,
  ) {
    this.dir = dir
    this.buildDir = buildDir
    this.writer = options.writer
    this.mode = mode
    this.files = new Set(options.files)
    this.lock = lock
  }

  /**
   * Open `dir` for a new run. Refuses (usage error, nothing in `dir` touched) when a planned file exists
   * and no manifest lists it, or when another cachelab is writing `dir`; at `complete`, deletes only the
   * files the previous manifest lists.
   */
  static replace(dir: string, options: OpenRunFolder): RunFolder {
    return RunFolder.open(dir, options, 'replace')
  }

  /** Open `dir` to replace the named files only; every other file stays, its ownership too. */
  static update(dir: string, options: OpenRunFolder): RunFolder {
    return RunFolder.open(dir, options, 'update')
  }

  private static open(target: string, options: OpenRunFolder, mode: 'replace' | 'update'): RunFolder {
    requireSafe(options.files)
    const dir = resolve(target)
    requireFolderOrAbsent(dir)
    makeDirectories(dirname(dir))
    const lock = FolderLock.acquire(dir, options.writer)
    try {
      if (mode === 'replace') refuseForeign(dir, options.files)
      removeAbandonedBuilds(dir)
      const buildDir = join(
        dirname(dir),
        `${buildPrefixOf(dir)}${process.pid}-${randomBytes(4).toString('hex')}`,
      )
      mkdirSync(buildDir)
      const folder = new RunFolder(dir, buildDir, options, mode, lock)
      folder.writeManifest(buildDir, 'writing', folder.files)
      folder.makeParents()
      return folder
    } catch (error) {
      lock.release()
      throw error
    }
  }

  /** The absolute path of a planned file, for writers that stream into it (session logs): in the build folder. */
  path(name: string): string {
    if (!this.files.has(name))
      throw new CachelabError('invariant', `${name} was not planned in ${this.dir}'s manifest`)
    return join(this.buildDir, name)
  }

  /** Write a planned file atomically. */
  write(name: string, content: string): void {
    writeFileAtomic(this.path(name), content)
  }

  /**
   * Swap the finished files in and mark the folder complete: a folder that did not exist (or was empty)
   * becomes the build folder by one rename; otherwise each file is renamed over its old self under a
   * `writing` manifest, the previous run's other files are deleted (replace) and the manifest completed.
   */
  complete(): void {
    try {
      if (!this.lock.holds())
        throw new CachelabError(
          'usage',
          `${this.dir}: the lock ${this.lock.file} was taken over by another cachelab while this one wrote; this run's files were not kept`,
        )
      const written = [...this.files].filter((name) => exists(join(this.buildDir, name)))
      if (!this.swapWhole(written)) this.swapFiles(written)
    } catch (error) {
      this.abandon()
      throw error
    }
    this.lock.release()
  }

  /** Give the run up: its build folder goes, the folder keeps its previous run, the lock is released. */
  abandon(): void {
    rmSync(this.buildDir, { recursive: true, force: true })
    this.lock.release()
  }

  /** The whole build folder renamed into place, when nothing is there to keep. */
  private swapWhole(written: readonly string[]): boolean {
    let entries: string[]
    try {
      if (lstatSync(this.dir).isSymbolicLink()) return false
      entries = readdirSync(this.dir)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      entries = []
    }
    if (entries.length > 0) return false
    this.writeManifest(this.buildDir, 'complete', written)
    try {
      rmdirSync(this.dir)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    renameSync(this.buildDir, this.dir)
    return true
  }

  /** Each file renamed over its old self, under a `writing` manifest that lists old and new. */
  private swapFiles(written: readonly string[]): void {
    const previous = readManifest(this.dir)?.files ?? []
    if (this.mode === 'replace') refuseForeign(this.dir, written)
    const kept = this.mode === 'update' ? previous : []
    // Marked `writing` with the old files still listed first: a crash while swapping leaves them owned.
    this.writeManifest(this.dir, 'writing', [...previous, ...written])
    for (const name of written) {
      makeDirectories(dirname(join(this.dir, name)))
      renameSync(join(this.buildDir, name), join(this.dir, name))
    }
    const now = new Set([...kept, ...written])
    for (const name of previous) {
      if (now.has(name)) continue
      rmSync(join(this.dir, name), { force: true })
      rmSync(tempOf(join(this.dir, name)), { force: true })
    }
    this.writeManifest(
      this.dir,
      'complete',
      [...now].filter((name) => exists(join(this.dir, name))),
    )
    rmSync(this.buildDir, { recursive: true, force: true })
  }

  private writeManifest(dir: string, state: RunFolderManifest['state'], files: Iterable<string>): void {
    writeFileAtomic(
      join(dir, MANIFEST_FILE),
      manifestText({
        format: MANIFEST_FORMAT,
        version: MANIFEST_VERSION,
        writer: this.writer,
        state,
        files: [...files],
      }),
    )
  }

  private makeParents(): void {
    for (const parent of new Set([...this.files].map((name) => dirname(join(this.buildDir, name)))))
      makeDirectories(parent)
  }
}

/** The name every build folder of `dir` starts with: hidden, beside it, named after it. */
export function buildPrefixOf(dir: string): string {
  return `.${basename(dir)}.cachelab-build-`
}

/** A usage error, touching nothing, when planned files exist in `dir` that no manifest there lists. */
function refuseForeign(dir: string, files: readonly string[]): void {
  const owned = readManifest(dir)?.files ?? []
  const foreign = foreignCollisions(files, owned, (name) => exists(join(dir, name)))
  if (foreign.length > 0)
    throw new CachelabError(
      'usage',
      `${dir} already holds ${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ` (and ${foreign.length - 3} more)` : ''} not written by cachelab (no ${MANIFEST_FILE} lists ${foreign.length === 1 ? 'it' : 'them'}): move ${foreign.length === 1 ? 'it' : 'them'} away or write elsewhere`,
    )
}

/** `dir` must be a folder (or a link to one) or absent: a file there is an input error. */
function requireFolderOrAbsent(dir: string): void {
  try {
    if (!statSync(dir).isDirectory())
      throw new CachelabError('input', `cannot write a run into ${dir}: it is a file, not a folder`)
  } catch (error) {
    if (error instanceof CachelabError) throw error
  }
}

/**
 * Build folders of `dir` left by a writer that was killed (at any moment, even before its manifest was
 * written): called under the lock, so none is in use. Only names cachelab makes, `<prefix><pid>-<8 hex>`,
 * of a process that is gone (or this one), are removed.
 */
function removeAbandonedBuilds(dir: string): void {
  const parent = dirname(dir)
  const prefix = buildPrefixOf(dir)
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(prefix)) continue
    const match = /^(\d+)-[0-9a-f]{8}$/.exec(name.slice(prefix.length))
    if (match === null) continue
    const pid = Number(match[1])
    if (pid !== process.pid && processAlive(pid)) continue
    const path = join(parent, name)
    if (lstatSync(path).isDirectory()) rmSync(path, { recursive: true, force: true })
  }
}

function requireSafe(files: readonly string[]): void {
  for (const name of files) {
    const problem = unsafePathProblem(name)
    if (problem !== undefined)
      throw new CachelabError('invariant', `run folder file ${JSON.stringify(name)} ${problem}`)
  }
}

/** The temp file a write goes through: hidden, beside its target, named after it. */
function tempOf(file: string): string {
  return join(dirname(file), `.${file.split(/[\\/]/).pop() ?? 'file'}.cachelab-tmp`)
}

function exists(path: string): boolean {
  try {
    lstatSync(path)
    return true
  } catch {
    return false
  }
}
