// DSH's session-persistence seam with storage cachelab supplies, for where DSH's published JSONL store
// (`@deepseek-ai/dsh-session-persistence-jsonl`) does not load: it imports Node's Zstandard API, which Node
// 20 lacks. It keeps the published store's uncompressed layout and lines — `<root>/_no-cwd/<id>/
// session.jsonl`, a first line tagging the session header `session`, then every committed event verbatim,
// one per line — so a run's DSH logs read alike on every Node. DSH's resume reads it back through the
// seam's own `prepare` → `load`.

import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/** The folder under a run's sessions folder that DSH's store owns. */
export const DSH_STORE_FOLDER = 'dsh'

/**
 * The file of one DSH session's log under a store root, as the published store lays it out for a session
 * without a working directory, uncompressed. cachelab's session ids are safe path segments as they are
 * (letters, digits, `.`, `-`), which DSH's segment escaping keeps literal.
 */
export function dshLogFile(root: string, sessionId: string): string {
  return join(root, '_no-cwd', sessionId, 'session.jsonl')
}

/** What a stored log holds: the session header (DSH's metadata) and the events in seq order. */
export interface StoredDshLog {
  meta: Record<string, unknown>
  events: Array<Record<string, unknown>>
}

/** Read a stored log: the `session` header line, then one event per line. */
export function readDshLog(file: string): StoredDshLog {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
  const [first, ...rest] = lines
  if (first === undefined) throw new Error(`${file}: empty DSH session log`)
  const { type, ...meta } = JSON.parse(first) as { type?: unknown } & Record<string, unknown>
  if (type !== 'session') throw new Error(`${file}:1: not a DSH session header line`)
  return { meta, events: rest.map((line) => JSON.parse(line) as Record<string, unknown>) }
}

/** The session a `session/*` event is about, as far as this store needs it. */
interface StoredSession {
  id: string
  header: Record<string, unknown>
  events: ReadonlyArray<{ seq: number }>
}

/** The Cordis context surface the store uses. */
interface StoreContext {
  on(event: string, listener: (...args: never[]) => unknown): () => void
}

type PersistenceBase = abstract new (ctx: never) => object

/**
 * Build the store as a subclass of DSH's abstract `SessionPersistence` (loaded at run time, like every DSH
 * package), writing under `root`.
 */
export function jsonlPersistence(base: PersistenceBase, root: string) {
  abstract class Base extends (base as unknown as abstract new (ctx: StoreContext) => object) {}
  return class CachelabJsonlPersistence extends Base {
    static readonly root = root
    readonly supportsRawArtifacts = false

    constructor(ctx: StoreContext) {
      super(ctx)
      // Per session, how many events the file holds: a resumed session is constructed with its stored
      // events and the seed's end marker, which no `session/event` announces.
      const written = new Map<string, number>()
      const write = (session: StoredSession, events: ReadonlyArray<{ seq: number }>) => {
        const from = written.get(session.id) ?? 0
        const fresh = events.filter((event) => event.seq >= from)
        if (fresh.length === 0) return
        appendFileSync(
          dshLogFile(root, session.id),
          fresh.map((event) => `${JSON.stringify(event)}\n`).join(''),
        )
        written.set(session.id, (fresh.at(-1)?.seq ?? from) + 1)
      }
      ctx.on('session/created', ((session: StoredSession) => {
        const file = dshLogFile(root, session.id)
        if (existsSync(file)) {
          // A resumed session keeps its file: the new instance appends what it added to the stored log.
          written.set(session.id, readDshLog(file).events.length)
        } else {
          mkdirSync(dirname(file), { recursive: true })
          // The published store's header line: the session header tagged `session`, a top-level depth 0.
          const line = {
            type: 'session',
            ...session.header,
            delegationDepth: session.header.delegationDepth ?? 0,
          }
          writeFileSync(file, `${JSON.stringify(line)}\n`)
          written.set(session.id, 0)
        }
        write(session, session.events)
      }) as (...args: never[]) => unknown)
      ctx.on('session/event', ((session: StoredSession, event: { seq: number }) => {
        write(session, [event])
      }) as (...args: never[]) => unknown)
    }

    locate(meta: { id: string }) {
      return { kind: 'jsonl', path: dshLogFile(root, meta.id) }
    }

    async create(): Promise<void> {}

    async append(): Promise<void> {}

    async load(id: string) {
      return readDshLog(dshLogFile(root, id))
    }

    async inspect(id: string) {
      return this.load(id)
    }

    async readFrom(id: string, fromSeq: number) {
      const log = await this.load(id)
      return { meta: log.meta, events: log.events.filter((event) => (event.seq as number) >= fromSeq) }
    }

    async list() {
      return []
    }

    async listSnapshots() {
      return []
    }
  }
}
