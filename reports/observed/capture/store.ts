// A capture on disk: `capture.json` (what was captured, how) and `sessions/<conversation>.jsonl`, one
// exchange per line. A line keeps its request's digest as a delta against the previous line of the
// same file (the segments and items it shares are counted, not repeated), so a long conversation's file
// grows with what each request added, not with its whole prompt. Headers are never recorded.

import {
  appendFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { makeDirectories } from '../../../harness/directories.ts'
import { CachelabError } from '../../../harness/errors.ts'
import type { ItemDigest, RequestDigest, SegmentDigest } from '../../../providers/wire/digest.ts'
import {
  type CapturedExchange,
  CONVERSATION_KINDS,
  type ConversationKind,
} from '../../../providers/wire/exchange.ts'

export const CAPTURE_FORMAT = 'cachelab-capture'
export const CAPTURE_VERSION = 1

/** `capture.json`. */
export interface CaptureManifest {
  format: typeof CAPTURE_FORMAT
  version: number
  /** The capture's id: the run id of its report. */
  id: string
  /** When the capture began, ISO 8601. */
  started: string
  upstream: 'sim' | 'live'
  /** Whether request bodies and response texts are kept. */
  bodies: boolean
}

/** A line of a session file: the exchange with its digest as a delta. */
interface ExchangeLine extends Omit<CapturedExchange, 'digest'> {
  prompt: { keep: number; add: readonly SegmentDigest[]; trailing: number; total: number }
  items: { keep: number; add: readonly ItemDigest[] }
  config: Readonly<Record<string, unknown>>
}

/** How many leading entries two lists share, compared by `same`. */
function sharedPrefix<T>(before: readonly T[], now: readonly T[], same: (a: T, b: T) => boolean): number {
  let count = 0
  while (count < before.length && count < now.length && same(before[count] as T, now[count] as T)) count += 1
  return count
}

const sameSegment = (a: SegmentDigest, b: SegmentDigest) => a[0] === b[0] && a[1] === b[1] && a[2] === b[2]
const sameItem = (a: ItemDigest, b: ItemDigest) => a.hash === b.hash && a.role === b.role

/** An exchange as a line, its digest a delta against `previous` (the previous line of its file). */
export function encodeExchange(exchange: CapturedExchange, previous: RequestDigest | undefined): string {
  const { digest, ...rest } = exchange
  const keepSegments =
    previous === undefined ? 0 : sharedPrefix(previous.segments, digest.segments, sameSegment)
  const keepItems = previous === undefined ? 0 : sharedPrefix(previous.items, digest.items, sameItem)
  const line: ExchangeLine = {
    ...rest,
    prompt: {
      keep: keepSegments,
      add: digest.segments.slice(keepSegments),
      trailing: digest.trailing,
      total: digest.total,
    },
    items: { keep: keepItems, add: digest.items.slice(keepItems) },
    config: digest.config,
  }
  return JSON.stringify(line)
}

/** A line back into an exchange; `previous` is the digest of the line before it in its file. */
export function decodeExchange(
  text: string,
  previous: RequestDigest | undefined,
  where: string,
): CapturedExchange {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new CachelabError('input', `${where}: not a JSON line`)
  }
  const line = value as Partial<ExchangeLine>
  const fail = (field: string) => new CachelabError('input', `${where}: ${field} is missing or malformed`)
  for (const field of ['seq', 'at', 'status', 'latencyMs', 'turn', 'step', 'attempt'] as const)
    if (typeof line[field] !== 'number') throw fail(field)
  for (const field of ['session', 'api', 'provider', 'model', 'time'] as const)
    if (typeof line[field] !== 'string') throw fail(field)
  const prompt = line.prompt
  const items = line.items
  if (
    typeof prompt !== 'object' ||
    prompt === null ||
    !Array.isArray(prompt.add) ||
    typeof prompt.keep !== 'number'
  )
    throw fail('prompt')
  if (
    typeof items !== 'object' ||
    items === null ||
    !Array.isArray(items.add) ||
    typeof items.keep !== 'number'
  )
    throw fail('items')
  if ((previous?.segments.length ?? 0) < prompt.keep || (previous?.items.length ?? 0) < items.keep)
    throw new CachelabError(
      'input',
      `${where}: keeps more of the previous request than it had (a line is missing)`,
    )
  const { prompt: _prompt, items: _items, config, ...rest } = line as ExchangeLine
  const digest: RequestDigest = {
    segments: [...(previous?.segments.slice(0, prompt.keep) ?? []), ...prompt.add],
    trailing: prompt.trailing,
    total: prompt.total,
    items: [...(previous?.items.slice(0, items.keep) ?? []), ...items.add],
    config: config ?? {},
  }
  // A capture written before conversations were told apart: each session file is one main conversation.
  const conversation = typeof rest.conversation === 'string' ? rest.conversation : rest.session
  const kind = CONVERSATION_KINDS.includes(rest.kind as ConversationKind) ? rest.kind : 'main'
  return { ...rest, conversation, kind, digest }
}

/** A capture directory being written. Write errors after the start go to `onError`; serving goes on. */
export class CaptureWriter {
  readonly dir: string
  readonly manifest: CaptureManifest
  private readonly onError: (error: Error) => void
  private readonly last = new Map<string, RequestDigest>()
  private readonly failures = new Set<string>()
  /** The folders `open` made, innermost first: what `discard` may remove again. */
  private readonly made: readonly string[]

  private constructor(
    dir: string,
    manifest: CaptureManifest,
    onError: (error: Error) => void,
    made: readonly string[],
  ) {
    this.dir = dir
    this.manifest = manifest
    this.onError = onError
    this.made = made
  }

  /**
   * Open `dir` for a new capture: it is created, and must not hold one already (a second capture there
   * would mix two runs). A directory that cannot be written is a usage error, before anything is served.
   */
  static open(
    dir: string,
    manifest: Omit<CaptureManifest, 'format' | 'version'>,
    onError: (error: Error) => void,
  ): CaptureWriter {
    const file = join(dir, 'capture.json')
    if (existsSync(file))
      throw new CachelabError(
        'usage',
        `--record ${dir} already holds a capture (capture.json): choose a new directory`,
      )
    const full: CaptureManifest = { format: CAPTURE_FORMAT, version: CAPTURE_VERSION, ...manifest }
    const made = missingFolders(join(dir, 'sessions'))
    try {
      makeDirectories(join(dir, 'sessions'))
      writeFileSync(file, `${JSON.stringify(full, null, 2)}\n`)
    } catch (error) {
      throw new CachelabError('usage', `--record ${dir} is not writable: ${(error as Error).message}`)
    }
    return new CaptureWriter(dir, full, onError, made)
  }

  /**
   * Undo `open` when serving never began (the port was busy): capture.json goes, and so do the folders
   * `open` made if they are still empty, so the next try with the same `--record DIR` is not refused.
   */
  discard(): void {
    rmSync(join(this.dir, 'capture.json'), { force: true })
    for (const folder of this.made) {
      try {
        rmdirSync(folder)
      } catch {
        // Not empty (someone wrote there meanwhile) or already gone: left as it is.
        return
      }
    }
  }

  /** Append an exchange to its session's file; a failure is reported once per distinct message. */
  write(exchange: CapturedExchange): void {
    const line = encodeExchange(exchange, this.last.get(exchange.conversation))
    try {
      appendFileSync(join(this.dir, 'sessions', `${exchange.conversation}.jsonl`), `${line}\n`)
      this.last.set(exchange.conversation, exchange.digest)
    } catch (error) {
      const message = (error as Error).message
      if (!this.failures.has(message)) {
        this.failures.add(message)
        this.onError(error as Error)
      }
      // The next line of this session is written whole, so the file stays readable without this one.
      this.last.delete(exchange.conversation)
    }
  }
}

/** The folders of `dir` and its parents that do not exist yet, innermost first. */
function missingFolders(dir: string): string[] {
  const missing: string[] = []
  for (let at = resolve(dir); !existsSync(at); at = dirname(at)) {
    missing.push(at)
    if (dirname(at) === at) break
  }
  return missing
}

/** A capture read back: its manifest and, per session file, the exchanges in file order. */
export interface Capture {
  manifest: CaptureManifest
  /** Session files in name order. */
  sessions: string[]
  /** The exchanges of one session file. A torn last line (the server stopped mid-write) is reported, not read. */
  read(session: string, onTorn?: (where: string) => void): CapturedExchange[]
}

/** Open a capture directory for reading; a directory that is not a capture is an input error. */
export function openCapture(dir: string): Capture {
  const file = join(dir, 'capture.json')
  if (!existsSync(file))
    throw new CachelabError(
      'input',
      `${dir} is not a capture: no capture.json (record one with cachelab serve --record ${dir})`,
    )
  let manifest: CaptureManifest
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8')) as CaptureManifest
  } catch (error) {
    throw new CachelabError('input', `${file}: ${(error as Error).message}`)
  }
  if (manifest.format !== CAPTURE_FORMAT || manifest.version !== CAPTURE_VERSION)
    throw new CachelabError('input', `${file}: not a ${CAPTURE_FORMAT} version ${CAPTURE_VERSION} manifest`)
  const sessionsDir = join(dir, 'sessions')
  const sessions = existsSync(sessionsDir)
    ? readdirSync(sessionsDir)
        .filter((name) => name.endsWith('.jsonl'))
        .map((name) => name.slice(0, -'.jsonl'.length))
        .sort()
    : []
  return {
    manifest,
    sessions,
    read(session, onTorn) {
      const path = join(sessionsDir, `${session}.jsonl`)
      const text = readFileSync(path, 'utf8')
      const lines = text.split('\n')
      const torn = lines.at(-1) !== ''
      const exchanges: CapturedExchange[] = []
      let previous: RequestDigest | undefined
      for (let index = 0; index < lines.length; index += 1) {
        const line = lines[index] as string
        if (line === '') continue
        const where = `${path}:${index + 1}`
        if (torn && index === lines.length - 1) {
          onTorn?.(where)
          break
        }
        const exchange = decodeExchange(line, previous, where)
        // A line written whole after a failed write keeps nothing; any other line keeps its predecessor.
        previous = exchange.digest
        exchanges.push(exchange)
      }
      return exchanges
    },
  }
}
