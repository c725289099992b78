// Tokenizing off the event loop: a request with a text of megabytes costs seconds of BPE, and the
// server's one thread would serve nobody meanwhile. The loopback hands such texts to worker threads
// first and has the token counter hold the tokens while the request is in flight (the memo may have no
// room for a text of megabytes), so the simulation that follows (on the main thread, where the cache
// state lives) finds them counted and never tokenizes them itself. Small texts are counted inline.

import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { LONG_TEXT_CHARACTERS, type TokenCounter } from '../sim/tokens.ts'

/**
 * Texts at least this long (characters) are tokenized in a worker: below it inline is cheaper. The
 * simulators' threshold for keeping a text's tokens with its segment, so the two agree on what is long.
 */
export const OFFLOAD_CHARACTERS = LONG_TEXT_CHARACTERS

// The worker is plain JavaScript evaluated from this string, so it runs the same under tsx and from the
// published build. It imports the tokenizer by the URLs the main thread resolved (in the repository, where
// they are TypeScript, after registering tsx in its own thread) and encodes exactly as `encode` in
// sim/tokens.ts does: o200k_base split and merged by `O200k`, over gpt-tokenizer's vocabulary.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const ready = (async () => {
  if (workerData.tsx !== undefined) (await import(workerData.tsx)).register()
  const [{ O200k }, encoding] = await Promise.all([import(workerData.o200k), import(workerData.encoding)])
  return new O200k(encoding.default.bytePairEncodingCoreProcessor)
})()
parentPort.on('message', async ({ id, text }) => {
  try {
    const tokens = Uint32Array.from((await ready).encode(text))
    parentPort.postMessage({ id, tokens }, [tokens.buffer])
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message ? error.message : error) })
  }
})
`

/** Where a worker finds the tokenizer: `O200k`'s module beside this one's kind, the vocabulary's. */
function workerModules(): { o200k: string; encoding: string; tsx?: string } {
  const typescript = import.meta.url.endsWith('.ts')
  return {
    o200k: new URL(`../sim/o200k.${typescript ? 'ts' : 'js'}`, import.meta.url).href,
    encoding: import.meta.resolve('gpt-tokenizer/encoding/o200k_base'),
    ...(typescript ? { tsx: import.meta.resolve('tsx/esm/api') } : {}),
  }
}

interface Pending {
  resolve: (tokens: Uint32Array) => void
  reject: (error: Error) => void
}

interface PoolWorker {
  worker: Worker
  /** Texts sent and not yet answered, by id. */
  waiting: Set<number>
}

/** A few tokenizer threads, started when first needed, feeding one token counter. */
export class TokenizerPool {
  private readonly counter: TokenCounter
  private readonly size: number
  private readonly workers: PoolWorker[] = []
  private readonly pending = new Map<number, Pending>()
  /** The same text asked for twice while in flight is tokenized once. */
  private readonly inFlight = new Map<string, Promise<Uint32Array | undefined>>()
  private serial = 0

  /** `size`: threads at most (default: the cores but one, at least one). */
  constructor(counter: TokenCounter, size = Math.max(1, availableParallelism() - 1)) {
    this.counter = counter
    this.size = size
  }

  /**
   * Make every long string in `body` answerable by the counter without tokenizing until the returned
   * release is called: the ones the memo knows are held as they are, the others are tokenized in the
   * workers first (and remembered, if the memo has room). Resolves once they all are; a worker's failure
   * leaves the text to be counted inline. The caller releases once its request is simulated.
   */
  async prepare(body: unknown): Promise<() => void> {
    const releases: (() => void)[] = []
    const waiting: Promise<void>[] = []
    for (const text of longStrings(body)) {
      const known = this.counter.knownTokens(text)
      if (known !== undefined) releases.push(this.counter.hold(text, known))
      else
        waiting.push(
          this.tokensOf(text).then((tokens) => {
            if (tokens !== undefined) releases.push(this.counter.hold(text, tokens))
          }),
        )
    }
    await Promise.all(waiting)
    return () => {
      for (const release of releases) release()
    }
  }

  /** Stop the threads (pending texts are counted inline when asked for). */
  async close(): Promise<void> {
    const workers = this.workers.splice(0)
    for (const [, pending] of this.pending) pending.reject(new Error('tokenizer pool closed'))
    this.pending.clear()
    await Promise.all(workers.map(({ worker }) => worker.terminate()))
  }

  /** `text`'s tokens from a worker (undefined if it failed); the same text in flight twice is sent once. */
  private tokensOf(text: string): Promise<Uint32Array | undefined> {
    const known = this.inFlight.get(text)
    if (known !== undefined) return known
    const done = this.tokenize(text)
      .then((tokens) => {
        this.counter.remember(text, tokens)
        return tokens
      })
      .catch(() => undefined)
      .finally(() => this.inFlight.delete(text))
    this.inFlight.set(text, done)
    return done
  }

  private tokenize(text: string): Promise<Uint32Array> {
    const target = this.leastBusy()
    this.serial += 1
    const id = this.serial
    target.waiting.add(id)
    return new Promise<Uint32Array>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      target.worker.postMessage({ id, text })
    }).finally(() => {
      target.waiting.delete(id)
    })
  }

  /** An idle thread, a new one while below the size, else the one with the fewest texts. */
  private leastBusy(): PoolWorker {
    const idle = this.workers.find((entry) => entry.waiting.size === 0)
    if (idle !== undefined) return idle
    if (this.workers.length < this.size) return this.start()
    return this.workers.reduce((best, entry) => (entry.waiting.size < best.waiting.size ? entry : best))
  }

  private start(): PoolWorker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: workerModules(),
    })
    // The server's exit never waits for an idle tokenizer.
    worker.unref()
    const entry: PoolWorker = { worker, waiting: new Set() }
    worker.on('message', (message: { id: number; tokens?: Uint32Array; error?: string }) => {
      const pending = this.pending.get(message.id)
      if (pending === undefined) return
      this.pending.delete(message.id)
      if (message.tokens !== undefined) pending.resolve(message.tokens)
      else pending.reject(new Error(message.error ?? 'tokenizer failed'))
    })
    worker.on('error', (error) => {
      // A dead thread is dropped; what it was tokenizing is counted inline.
      const index = this.workers.indexOf(entry)
      if (index >= 0) this.workers.splice(index, 1)
      for (const id of entry.waiting) {
        this.pending.get(id)?.reject(error)
        this.pending.delete(id)
      }
    })
    this.workers.push(entry)
    return entry
  }
}

/** Every string in a JSON value at least `OFFLOAD_CHARACTERS` long (an explicit stack: no recursion). */
export function longStrings(value: unknown): string[] {
  const found: string[] = []
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const next = stack.pop()
    if (typeof next === 'string') {
      if (next.length >= OFFLOAD_CHARACTERS) found.push(next)
    } else if (Array.isArray(next)) {
      for (const item of next) stack.push(item)
    } else if (typeof next === 'object' && next !== null) {
      for (const item of Object.values(next)) stack.push(item)
    }
  }
  return found
}
