// DSH's session-persistence seam with a JSON Lines store under the run's sessions folder: DSH's own
// `SessionPersistence` service (its resume path reads it through `prepare` → `load`), writing every event
// the session commits, one line each, after a first line holding the session header. The published JSONL
// backend (`@deepseek-ai/dsh-session-persistence-jsonl`) is not among the installed packages, so cachelab
// supplies the storage: append on `session/event`, read back on `load`.

import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** The file of one DSH session's log: `<id>.dsh.jsonl`. */
export function dshLogFile(directory: string, sessionId: string): string {
  return join(directory, `${sessionId}.dsh.jsonl`)
}

/** What a stored log holds: the session header (DSH's metadata) and the events in seq order. */
export interface StoredDshLog {
  meta: Record<string, unknown>
  events: Array<Record<string, unknown>>
}

/** Read a stored log: the header line, then one event per line. */
export function readDshLog(file: string): StoredDshLog {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
  const [first, ...rest] = lines
  if (first === undefined) throw new Error(`${file}: empty DSH session log`)
  const header = JSON.parse(first) as { header?: Record<string, unknown> }
  if (header.header === undefined) throw new Error(`${file}:1: not a DSH session header line`)
  return { meta: header.header, events: rest.map((line) => JSON.parse(line) as Record<string, unknown>) }
}

/** The session a `session/*` event is about, as far as this store needs it. */
interface StoredSession {
  id: string
  header: unknown
}

/** The Cordis context surface the store uses. */
interface StoreContext {
  on(event: string, listener: (...args: never[]) => unknown): () => void
}

type PersistenceBase = abstract new (ctx: never) => object

/**
 * Build the store as a subclass of DSH's abstract `SessionPersistence` (loaded at run time, like every DSH
 * package), writing under `directory`.
 */
export function jsonlPersistence(base: PersistenceBase, directory: string) {
  abstract class Base extends (base as unknown as abstract new (ctx: StoreContext) => object) {}
  return class CachelabJsonlPersistence extends Base {
    static readonly directory = directory
    readonly supportsRawArtifacts = false

    constructor(ctx: StoreContext) {
      super(ctx)
      ctx.on('session/created', ((session: StoredSession) => {
        const file = dshLogFile(directory, session.id)
        // A resumed session keeps its file: the new instance only appends.
        if (!existsSync(file)) writeFileSync(file, `${JSON.stringify({ header: session.header })}\n`)
      }) as (...args: never[]) => unknown)
      ctx.on('session/event', ((session: StoredSession, event: unknown) => {
        appendFileSync(dshLogFile(directory, session.id), `${JSON.stringify(event)}\n`)
      }) as (...args: never[]) => unknown)
    }

    locate(meta: { id: string }) {
      return { kind: 'jsonl', path: dshLogFile(directory, meta.id) }
    }

    async create(): Promise<void> {}

    async append(): Promise<void> {}

    async load(id: string) {
      return readDshLog(dshLogFile(directory, id))
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
