// Byte-pair merging of one o200k_base piece that is not a vocabulary entry, exactly as gpt-tokenizer's
// `bytePairMerge` merges it (the lowest-ranked adjacent pair first, the leftmost of equal ones, until no
// pair is an entry), with ranks looked up by a hash of the bytes in place: no decoding of every candidate
// pair, no map, no cache to thrash. o200k.test.ts compares it with the package's merge.

/** The vocabulary as gpt-tokenizer's byte-pair core holds it (fields of a pinned version). */
export interface ByteVocabulary {
  /** Entries whose bytes are UTF-8, by their text. */
  readonly bytePairStringRankEncoder: ReadonlyMap<string, number>
  /** Entries whose bytes are not UTF-8, sorted by their bytes. */
  readonly bytePairNonUtfSortedEncoder: readonly (readonly [Uint8Array, number])[]
}

/** A rank no entry has: the pair is not an entry. */
const NONE = 0x7fffffff

/**
 * Every entry by its bytes. A lookup repeats the package's: bytes that are well-formed UTF-8 are decoded
 * (its `TextDecoder` drops one leading byte-order mark) and looked up among the text entries; other
 * bytes among the byte entries. So an entry is found only through the kind of bytes it was filed under.
 */
class ByteTable {
  private readonly mask: number
  /** Four numbers a slot: hash, (rank + 1) × 2 + kind (1: a byte entry), offset in `bytes`, length. */
  private readonly slots: Int32Array
  private readonly bytes: Uint8Array

  constructor(vocabulary: ByteVocabulary) {
    const texts = vocabulary.bytePairStringRankEncoder
    const binary = vocabulary.bytePairNonUtfSortedEncoder
    let size = 1
    while (size < (texts.size + binary.length) * 2.5) size *= 2
    this.mask = size - 1
    this.slots = new Int32Array(size * 4)
    // Three bytes a UTF-16 code unit at most.
    let most = 0
    for (const text of texts.keys()) most += text.length * 3
    for (const [bytes] of binary) most += bytes.length
    const pool = new Uint8Array(most)
    const encoder = new TextEncoder()
    let offset = 0
    for (const [text, rank] of texts) {
      // An entry its own bytes do not decode back to (a leading byte-order mark, which the package's
      // decoder drops; a lone surrogate) is never found: it is left out.
      if (text.charCodeAt(0) === 0xfeff || !wellFormedText(text)) continue
      const length = encoder.encodeInto(text, pool.subarray(offset)).written
      this.insert(pool, offset, length, rank, 0)
      offset += length
    }
    for (const [bytes, rank] of binary) {
      pool.set(bytes, offset)
      this.insert(pool, offset, bytes.length, rank, 1)
      offset += bytes.length
    }
    this.bytes = pool.slice(0, offset)
  }

  private insert(pool: Uint8Array, offset: number, length: number, rank: number, kind: number): void {
    const hash = hashBytes(pool, offset, offset + length)
    let slot = hash & this.mask
    while (this.slots[slot * 4 + 1] !== 0) slot = (slot + 1) & this.mask
    this.slots[slot * 4] = hash
    this.slots[slot * 4 + 1] = (rank + 1) * 2 + kind
    this.slots[slot * 4 + 2] = offset
    this.slots[slot * 4 + 3] = length
  }

  /** The rank of `piece[start, end)` as the package finds it, or NONE. */
  rank(piece: Uint8Array, start: number, end: number): number {
    let from = start
    let kind = 1
    if (wellFormed(piece, start, end)) {
      kind = 0
      if (end - start >= 3 && piece[start] === 0xef && piece[start + 1] === 0xbb && piece[start + 2] === 0xbf)
        from += 3
    }
    const length = end - from
    const hash = hashBytes(piece, from, end)
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const at = slot * 4
      const held = this.slots[at + 1] as number
      if (held === 0) return NONE
      if (this.slots[at] !== hash || this.slots[at + 3] !== length || (held & 1) !== kind) continue
      const offset = this.slots[at + 2] as number
      let same = 0
      while (same < length && this.bytes[offset + same] === piece[from + same]) same += 1
      if (same === length) return (held >> 1) - 1
    }
  }
}

/** Whether `bytes[start, end)` is well-formed UTF-8 (no overlong form, surrogate or code point past U+10FFFF). */
export function wellFormed(bytes: Uint8Array, start: number, end: number): boolean {
  let at = start
  while (at < end) {
    const lead = bytes[at] as number
    if (lead < 0x80) {
      at += 1
      continue
    }
    let count: number
    let low = 0x80
    let high = 0xbf
    if (lead >= 0xc2 && lead <= 0xdf) count = 1
    else if (lead >= 0xe0 && lead <= 0xef) {
      count = 2
      if (lead === 0xe0) low = 0xa0
      else if (lead === 0xed) high = 0x9f
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      count = 3
      if (lead === 0xf0) low = 0x90
      else if (lead === 0xf4) high = 0x8f
    } else return false
    if (at + count >= end) return false
    const second = bytes[at + 1] as number
    if (second < low || second > high) return false
    for (let next = 2; next <= count; next += 1) {
      const continuation = bytes[at + next] as number
      if (continuation < 0x80 || continuation > 0xbf) return false
    }
    at += count + 1
  }
  return true
}

/** Whether `text` has no lone surrogate (so its UTF-8 bytes decode back to it, unless it opens with a BOM). */
function wellFormedText(text: string): boolean {
  for (let at = 0; at < text.length; at += 1) {
    const code = text.charCodeAt(at)
    if ((code & 0xf800) !== 0xd800) continue
    if (code >= 0xdc00 || at + 1 >= text.length) return false
    if ((text.charCodeAt(at + 1) & 0xfc00) !== 0xdc00) return false
    at += 1
  }
  return true
}

/** FNV-1a over bytes, then a final mix. */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5
  for (let at = start; at < end; at += 1) hash = Math.imul(hash ^ (bytes[at] as number), 0x01000193)
  hash ^= hash >>> 16
  hash = Math.imul(hash, 0x45d9f3b)
  return hash ^ (hash >>> 16)
}

/** Merges pieces into ranks; its buffers grow to the longest piece seen and are reused. */
export class BytePairMerger {
  private readonly vocabulary: ByteVocabulary
  /** Built on the first merge (about 0.1 s): a text of vocabulary entries alone never needs it. */
  private built: ByteTable | undefined
  private readonly encoder = new TextEncoder()
  private piece = new Uint8Array(256)
  /** Each part's first byte, the next part (-1: none), the previous part, and its pair's rank. */
  private starts = new Int32Array(256)
  private nexts = new Int32Array(256)
  private previous = new Int32Array(256)
  private ranks = new Int32Array(256)

  constructor(vocabulary: ByteVocabulary) {
    this.vocabulary = vocabulary
  }

  private get table(): ByteTable {
    this.built ??= new ByteTable(this.vocabulary)
    return this.built
  }

  /** The ranks of `text` (one piece) merged, appended to `out`. */
  merge(text: string, out: number[]): void {
    // UTF-8 takes at most three bytes per UTF-16 code unit (a lone surrogate becomes U+FFFD's three).
    if (this.piece.length < text.length * 3) this.grow(text.length * 3)
    const length = this.encoder.encodeInto(text, this.piece).written
    const piece = this.piece
    const table = this.table
    const { starts, nexts, previous, ranks } = this
    for (let part = 0; part < length; part += 1) {
      starts[part] = part
      nexts[part] = part + 1 < length ? part + 1 : -1
      previous[part] = part - 1
    }
    const end = (part: number) => {
      const next = nexts[part] as number
      return next < 0 ? length : (starts[next] as number)
    }
    const pairRank = (part: number) => {
      const next = nexts[part] as number
      return next < 0 ? NONE : table.rank(piece, starts[part] as number, end(next))
    }
    for (let part = 0; part < length; part += 1) ranks[part] = pairRank(part)
    for (;;) {
      let lowest = NONE
      let at = -1
      for (let part = 0; part >= 0; part = nexts[part] as number) {
        const rank = ranks[part] as number
        if (rank < lowest) {
          lowest = rank
          at = part
        }
      }
      if (at < 0) break
      const gone = nexts[at] as number
      const after = nexts[gone] as number
      nexts[at] = after
      if (after >= 0) previous[after] = at
      ranks[at] = pairRank(at)
      const before = previous[at] as number
      if (before >= 0) ranks[before] = pairRank(before)
    }
    for (let part = 0; part >= 0; part = nexts[part] as number) {
      const rank = table.rank(piece, starts[part] as number, end(part))
      if (rank === NONE) throw new Error('o200k: a merged part is not in the vocabulary')
      out.push(rank)
    }
  }

  private grow(bytes: number): void {
    this.piece = new Uint8Array(bytes)
    this.starts = new Int32Array(bytes)
    this.nexts = new Int32Array(bytes)
    this.previous = new Int32Array(bytes)
    this.ranks = new Int32Array(bytes)
  }
}
