// A run folder's ownership and completeness. cachelab lists every file it is about to write in
// `DIR/.cachelab-manifest.json` before writing it, deletes or replaces only files listed there, writes
// each through a temp file and a rename, and marks the folder complete last: a foreign file is never
// lost, and an interrupted run is recognisable (notes/2026-11-30-output-safety.md).

import { lstatSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { makeDirectories } from '../harness/directories.ts'
import { CachelabError } from '../harness/errors.ts'

/** The manifest's file name, in the folder it describes. */
export const MANIFEST_FILE = '.cachelab-manifest.json'

/** The manifest's `format` tag: tells it apart from any other JSON file of that name. */
export const MANIFEST_FORMAT = 'cachelab-run-folder'

/** The manifest's version. */
export const MANIFEST_VERSION = 1

/** The files every run folder holds once complete (run, report and import write them all). */
export const RUN_FILES = ['steps.csv', 'summary.csv', 'breaks.csv', 'claims.csv', 'report.html'] as const

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
  const state = folderState(readManifest(dir), (name) => exists(join(dir, name)))
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
 * A folder being written. `replace` starts a fresh run there (the previous run's files go, nobody
 * else's); `update` replaces only the named files (a baseline refresh). Either way the folder is marked
 * `writing` until `complete`.
 */
export class RunFolder {
  readonly dir: string
  private readonly writer: string
  private readonly files: Set<string>

  private constructor(dir: string, writer: string, files: Iterable<string>) {
    this.dir = dir
    this.writer = writer
    this.files = new Set(files)
  }

  /**
   * Open `dir` for a new run. Refuses (usage error, nothing touched) when a planned file exists and no
   * manifest lists it; deletes only the files the previous manifest lists.
   */
  static replace(dir: string, options: OpenRunFolder): RunFolder {
    requireSafe(options.files)
    const previous = readManifest(dir)
    const owned = previous?.files ?? []
    const foreign = foreignCollisions(options.files, owned, (name) => exists(join(dir, name)))
    if (foreign.length > 0)
      throw new CachelabError(
        'usage',
        `${dir} already holds ${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ` (and ${foreign.length - 3} more)` : ''} not written by cachelab (no ${MANIFEST_FILE} lists ${foreign.length === 1 ? 'it' : 'them'}): move ${foreign.length === 1 ? 'it' : 'them'} away or write elsewhere`,
      )
    makeDirectories(dir)
    // Marked `writing` with the old files still listed first: a crash while deleting leaves them owned.
    const folder = new RunFolder(dir, options.writer, options.files)
    folder.writeManifest('writing', [...owned, ...options.files])
    for (const name of owned) {
      rmSync(join(dir, name), { force: true })
      rmSync(tempOf(join(dir, name)), { force: true })
    }
    folder.writeManifest('writing', options.files)
    folder.makeParents()
    return folder
  }

  /** Open `dir` to replace the named files only; every other file stays, its ownership too. */
  static update(dir: string, options: OpenRunFolder): RunFolder {
    requireSafe(options.files)
    const previous = readManifest(dir)
    makeDirectories(dir)
    const folder = new RunFolder(dir, options.writer, [...(previous?.files ?? []), ...options.files])
    folder.writeManifest('writing', folder.files)
    folder.makeParents()
    return folder
  }

  /** The absolute path of a planned file, for writers that stream into it (session logs). */
  path(name: string): string {
    if (!this.files.has(name))
      throw new CachelabError('invariant', `${name} was not planned in ${this.dir}'s manifest`)
    return join(this.dir, name)
  }

  /** Write a planned file atomically. */
  write(name: string, content: string): void {
    writeFileAtomic(this.path(name), content)
  }

  /** Mark the folder complete: every planned file that exists is listed, and the marker set. */
  complete(): void {
    this.writeManifest(
      'complete',
      [...this.files].filter((name) => exists(join(this.dir, name))),
    )
  }

  private writeManifest(state: RunFolderManifest['state'], files: Iterable<string>): void {
    writeFileAtomic(
      join(this.dir, MANIFEST_FILE),
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
    for (const parent of new Set([...this.files].map((name) => dirname(join(this.dir, name)))))
      makeDirectories(parent)
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
