// Token counting with o200k_base for every provider, memoized per distinct text so that simulating
// request N+1 of a session only tokenizes what request N did not already contain; the memo is bounded
// by bytes, least recently used first out.

import { createRequire } from 'node:module'
import { stringBytes } from './bytes.ts'
import { type BytePairCore, O200k } from './o200k.ts'

type Encoding = typeof import('gpt-tokenizer/encoding/o200k_base')

let loaded: { encoding: Encoding; o200k: O200k } | undefined

/**
 * o200k_base, loaded on first use: building its tables costs a start about 0.2 s of CPU, which a command
 * that counts no tokens (importing Claude Code files) should not pay. Required (the package's CommonJS
 * build, the same code) because the counting is synchronous. Pieces are split and looked up by
 * `O200k` (notes/2026-12-05-tokenizer.md); gpt-tokenizer supplies the vocabulary and merges the pieces
 * the vocabulary lacks.
 */
function o200k(): { encoding: Encoding; o200k: O200k } {
  if (loaded === undefined) {
    const encoding = createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as Encoding
    const api = encoding.default as unknown as { bytePairEncodingCoreProcessor: BytePairCore }
    loaded = { encoding, o200k: new O200k(api.bytePairEncodingCoreProcessor) }
  }
  return loaded
}

/**
 * Tokenize `text` as plain text: special-token strings inside it are ordinary characters. The tokens are
 * gpt-tokenizer's and js-tiktoken's (notes/2026-12-02-serve-throughput.md, notes/2026-12-05-tokenizer.md).
 */
export function encode(text: string): number[] {
  return o200k().o200k.encode(text)
}

/** The first `limit` tokens `encode(text)` gives, scanning no further than they reach. */
export function firstTokens(text: string, limit: number): number[] {
  return o200k().o200k.encode(text, limit)
}

/** The number of tokens `encode(text)` gives, without building them. */
export function countTokens(text: string): number {
  return o200k().o200k.count(text)
}

/** Decode tokens back to text. */
export function decode(tokens: readonly number[]): string {
  return o200k().encoding.decode(tokens)
}

/**
 * Texts this long (characters) or longer are long: a prompt segment keeps its tokens for as long as it
 * lives, and a server tokenizes them in worker threads (mock/tokenizer-pool.ts).
 */
export const LONG_TEXT_CHARACTERS = 32 * 1024

/** How much a counter may keep, in estimated bytes (least recently used entries go first). */
export interface TokenCounterLimits {
  /** Bytes of texts whose counts are remembered (default 128 MiB). */
  countBytes?: number
  /** Bytes of token arrays kept for partial-prefix comparisons (default 64 MiB). */
  arrayBytes?: number
}

/**
 * A memo that forgets its least recently used entries once their estimated bytes pass a limit. Recency is
 * the second-chance approximation of LRU: a hit only marks its entry (a hit is the hot path: every segment
 * of every request is counted), and eviction, from the oldest insertion on, moves a marked entry to the
 * back unmarked instead of dropping it.
 */
class LeastRecentlyUsed<Value> {
  private readonly entries = new Map<string, { value: Value; bytes: number; used: boolean }>()
  private readonly limit: number
  /** Estimated bytes of every entry held. */
  bytes = 0

  constructor(limit: number) {
    this.limit = limit
  }

  get(key: string): Value | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    entry.used = true
    return entry.value
  }

  set(key: string, value: Value, bytes: number): void {
    const previous = this.entries.get(key)
    if (previous !== undefined) {
      this.entries.delete(key)
      this.bytes -= previous.bytes
    }
    // An entry larger than the whole limit is not kept: it would evict everything else for one text.
    if (bytes > this.limit) return
    this.entries.set(key, { value, bytes, used: false })
    this.bytes += bytes
    while (this.bytes > this.limit) {
      const first = this.entries.entries().next()
      if (first.done === true) break
      const [oldest, entry] = first.value
      this.entries.delete(oldest)
      if (entry.used) {
        // Used since it was inserted or last moved: a second chance at the back.
        entry.used = false
        this.entries.set(oldest, entry)
      } else {
        this.bytes -= entry.bytes
      }
    }
  }

  get size(): number {
    return this.entries.size
  }
}

/** Estimated bytes a memo entry keyed by `text` holds beyond its value: the key and the map's entry. */
function keyBytes(text: string): number {
  // The key is counted even when a trie holds the same string: the memo may outlive the trie's node.
  return stringBytes(text) + ENTRY_OVERHEAD
}

const ENTRY_OVERHEAD = 80

/** A Uint32Array's object and its ArrayBuffer's, beyond the data. */
const ARRAY_OVERHEAD = 160

/**
 * A memoizing token counter. Counts are cached by the exact text and token arrays for the texts a
 * partial-prefix comparison asked for, both least recently used first out once their estimated bytes
 * pass the limits, so a long-lived process (serve) holds a bounded memo however many texts it has seen.
 */
export class TokenCounter {
  private readonly counts: LeastRecentlyUsed<number>
  private readonly arrays: LeastRecentlyUsed<Uint32Array>
  /**
   * Token arrays that requests in flight hold, whatever the memo's limits: a long text tokenized in a
   * worker must not be tokenized again on the simulating thread because the memo had no room for it.
   */
  private readonly held = new Map<string, { tokens: Uint32Array; holders: number }>()
  /**
   * Tokens of long texts by the object that carries them (a prompt segment in a trie, a stored unit):
   * kept as long as that object lives, so comparing a new request with a stored long text never
   * tokenizes it again after the memo forgot it. A few such texts, each already held as a string.
   */
  private readonly kept = new WeakMap<object, Uint32Array>()
  /** How many texts were actually tokenized or counted (a memo miss); benchmarks and tests read it. */
  encodeCalls = 0
  /** Characters of the longest text tokenized here (a server's tests read it: long texts go to workers). */
  longestEncoded = 0

  constructor(limits: TokenCounterLimits = {}) {
    this.counts = new LeastRecentlyUsed(limits.countBytes ?? DEFAULT_COUNT_BYTES)
    this.arrays = new LeastRecentlyUsed(limits.arrayBytes ?? DEFAULT_ARRAY_BYTES)
  }

  /** Estimated bytes the memo holds (counts and token arrays). */
  get bytes(): number {
    return this.counts.bytes + this.arrays.bytes
  }

  /** Number of o200k_base tokens in `text`. */
  count(text: string): number {
    if (text === '') return 0
    const known = this.counts.get(text)
    if (known !== undefined) return known
    const held = this.held.get(text)
    if (held !== undefined) return held.tokens.length
    // Counted, not encoded: most texts are never compared token by token, and one that is gets its
    // tokens then (`tokens`).
    const count = countTokens(text)
    this.tokenized(text)
    this.counts.set(text, count, keyBytes(text))
    return count
  }

  /** The tokens of `text` (kept for a bounded number of bytes, four a token). */
  tokens(text: string): Uint32Array {
    return this.knownTokens(text) ?? this.encodeOnce(text)
  }

  /** The tokens of `owner.text`; a long text's are kept with `owner` from then on. */
  tokensOf(owner: { readonly text: string }): Uint32Array {
    const kept = this.kept.get(owner)
    if (kept !== undefined) return kept
    const tokens = this.tokens(owner.text)
    if (owner.text.length >= LONG_TEXT_CHARACTERS) this.kept.set(owner, tokens)
    return tokens
  }

  /**
   * The first `limit` tokens of `owner.text` (a routing key reads a prompt's first tokens): from the
   * tokens known for it, else tokenizing only that far (not remembered: it is not the whole text).
   */
  firstTokensOf(owner: { readonly text: string }, limit: number): Uint32Array | number[] {
    const known = this.kept.get(owner) ?? this.knownTokens(owner.text)
    if (known !== undefined) return known.subarray(0, limit)
    return firstTokens(owner.text, limit)
  }

  /** Length of the common token prefix of two objects' texts (each a segment or a stored unit). */
  commonPrefixOf(left: { readonly text: string }, right: { readonly text: string }): number {
    if (left.text === right.text)
      return (this.kept.get(right) ?? this.kept.get(left))?.length ?? this.count(right.text)
    return commonTokenPrefix(this.tokensOf(left), this.tokensOf(right))
  }

  /** The tokens of `text` if the memo or a hold has them, without tokenizing. */
  knownTokens(text: string): Uint32Array | undefined {
    return this.arrays.get(text) ?? this.held.get(text)?.tokens
  }

  /**
   * Keep `text`'s tokens (which must be `encode(text)`'s) answerable until the returned function is
   * called, even when the memo has no room for them or forgets them meanwhile. A request in flight holds
   * its long texts so that simulating it never tokenizes them on the main thread; holds of one text nest.
   */
  hold(text: string, tokens: Uint32Array): () => void {
    const entry = this.held.get(text) ?? { tokens, holders: 0 }
    entry.holders += 1
    this.held.set(text, entry)
    let released = false
    return () => {
      if (released) return
      released = true
      entry.holders -= 1
      if (entry.holders === 0) this.held.delete(text)
    }
  }

  /** How many distinct texts requests in flight hold (tests read it: every hold is released). */
  get heldTexts(): number {
    return this.held.size
  }

  /**
   * Remember tokens counted elsewhere (a worker thread), so the next `count` or `tokens` of `text` is a
   * memo hit. The tokens must be `encode(text)`'s.
   */
  remember(text: string, tokens: Uint32Array): void {
    this.counts.set(text, tokens.length, keyBytes(text))
    this.arrays.set(text, tokens, keyBytes(text) + ARRAY_OVERHEAD + tokens.byteLength)
  }

  /** Whether `text`'s count is in the memo (no tokenizing needed). */
  knows(text: string): boolean {
    return text === '' || this.counts.get(text) !== undefined
  }

  /** Length of the common token prefix of two texts. */
  commonPrefix(a: string, b: string): number {
    if (a === b) return this.count(a)
    return commonTokenPrefix(this.tokens(a), this.tokens(b))
  }

  private encodeOnce(text: string): Uint32Array {
    const tokens = Uint32Array.from(encode(text))
    this.tokenized(text)
    this.remember(text, tokens)
    return tokens
  }

  private tokenized(text: string): void {
    this.encodeCalls += 1
    this.longestEncoded = Math.max(this.longestEncoded, text.length)
  }
}

/** Default limits: far above what a full `cachelab run` holds, so only a long-lived process reaches them. */
const DEFAULT_COUNT_BYTES = 128 * 1024 * 1024
const DEFAULT_ARRAY_BYTES = 64 * 1024 * 1024

/** Length of the common prefix of two token arrays. */
export function commonTokenPrefix(left: ArrayLike<number>, right: ArrayLike<number>): number {
  const limit = Math.min(left.length, right.length)
  let index = 0
  while (index < limit && left[index] === right[index]) index += 1
  return index
}

/** The process-wide counter: the mock providers and the report predictor share its memo. */
export const sharedTokenCounter = new TokenCounter()
