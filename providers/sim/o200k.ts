// o200k_base tokens without a regular expression or a string per piece: the pre-tokenizer's seven
// alternatives walked by hand over character classes, and the vocabulary looked up by a hash of the
// text in place. Pieces the vocabulary lacks are merged as gpt-tokenizer merges them (o200k-merge.ts), so
// the tokens are its own to the last one (tokens.test.ts and o200k.test.ts compare them on fuzzed text).

import { BytePairMerger, type ByteVocabulary } from './o200k-merge.ts'

/** What this file needs of gpt-tokenizer's byte-pair core (fields of a pinned version; tests check them). */
export type BytePairCore = ByteVocabulary

// Character classes of the o200k_base split pattern, one bit each (a code point has at least one of
// LETTER, NUMBER, SPACE or PUNCTUATION, so 0 means "not classified yet").
/** `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`: may lead a word. */
const UPPER = 1
/** `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`: may continue one. */
const LOWER = 2
const LETTER = 4
const NUMBER = 8
/** `\s` as the pattern's JavaScript flavour has it. */
const SPACE = 16
/** `\r` or `\n`. */
const NEWLINE = 32
/** `[^\s\p{L}\p{N}]`: punctuation, symbols, marks, anything else. */
const PUNCTUATION = 64
/** `[^\r\n\p{L}\p{N}]`: the one character that may precede a word. */
const LEADER = 128

const UPPER_PATTERN = /^[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]$/u
const LOWER_PATTERN = /^[\p{Ll}\p{Lm}\p{Lo}\p{M}]$/u
const LETTER_PATTERN = /^\p{L}$/u
const NUMBER_PATTERN = /^\p{N}$/u
const SPACE_PATTERN = /^\s$/u

/** A code point's classes, from the same Unicode tables the pattern's regular expression uses. */
function classify(codePoint: number): number {
  const character = String.fromCodePoint(codePoint)
  let bits = 0
  if (UPPER_PATTERN.test(character)) bits |= UPPER
  if (LOWER_PATTERN.test(character)) bits |= LOWER
  if (LETTER_PATTERN.test(character)) bits |= LETTER
  if (NUMBER_PATTERN.test(character)) bits |= NUMBER
  if (SPACE_PATTERN.test(character)) bits |= SPACE
  if (codePoint === 10 || codePoint === 13) bits |= NEWLINE
  if ((bits & (SPACE | LETTER | NUMBER)) === 0) bits |= PUNCTUATION
  if ((bits & (NEWLINE | LETTER | NUMBER)) === 0) bits |= LEADER
  return bits
}

/** Classes of the basic plane, filled as code points are first seen (ASCII up front). */
const BASIC = new Uint8Array(0x10000)
for (let codePoint = 0; codePoint < 128; codePoint += 1) BASIC[codePoint] = classify(codePoint)
/** Classes of the astral planes met so far. */
const ASTRAL = new Map<number, number>()

function classOf(codePoint: number): number {
  if (codePoint < 128) return BASIC[codePoint] as number
  if (codePoint < 0x10000) {
    const known = BASIC[codePoint] as number
    if (known !== 0) return known
    const bits = classify(codePoint)
    BASIC[codePoint] = bits
    return bits
  }
  let bits = ASTRAL.get(codePoint)
  if (bits === undefined) {
    bits = classify(codePoint)
    ASTRAL.set(codePoint, bits)
  }
  return bits
}

/** The code point at `index` (a surrogate pair read as one, a lone surrogate as itself). */
function codePointAt(text: string, index: number): number {
  return text.codePointAt(index) as number
}

function width(codePoint: number): number {
  return codePoint > 0xffff ? 2 : 1
}

/** Where the run of code points having one of `mask`'s classes, from `index`, ends. */
function runEnd(text: string, index: number, length: number, mask: number): number {
  let at = index
  while (at < length) {
    const code = text.charCodeAt(at)
    // ASCII first: one table read, no code point to assemble.
    if (code < 128) {
      if (((BASIC[code] as number) & mask) === 0) break
      at += 1
      continue
    }
    const codePoint = codePointAt(text, at)
    if ((classOf(codePoint) & mask) === 0) break
    at += width(codePoint)
  }
  return at
}

/** Where the code point ending just before `index` starts (not before `floor`). */
function previousStart(text: string, index: number, floor: number): number {
  if (
    index - 2 >= floor &&
    (text.charCodeAt(index - 1) & 0xfc00) === 0xdc00 &&
    (text.charCodeAt(index - 2) & 0xfc00) === 0xd800
  )
    return index - 2
  return index - 1
}

/** Length of `'s|'t|'re|'ve|'m|'ll|'d` (any case) at `index`, or 0. */
function contraction(text: string, index: number, length: number): number {
  if (index + 1 >= length || text.charCodeAt(index) !== 39) return 0
  // `| 0x20` folds exactly the two ASCII cases of a letter together (and maps nothing else onto one).
  const first = text.charCodeAt(index + 1) | 0x20
  if (first === 115 || first === 116 || first === 109 || first === 100) return 2
  if (index + 2 >= length) return 0
  const second = text.charCodeAt(index + 2) | 0x20
  if (
    (first === 108 && second === 108) ||
    (first === 118 && second === 101) ||
    (first === 114 && second === 101)
  )
    return 3
  return 0
}

/** `UPPER* LOWER+ contraction?` from `index` (the greedy first match), or -1. */
function lowerWord(text: string, index: number, length: number): number {
  const uppers = runEnd(text, index, length, UPPER)
  let start = uppers
  for (;;) {
    if (start < length && (classOf(codePointAt(text, start)) & LOWER) !== 0) {
      const end = runEnd(text, start, length, LOWER)
      return end + contraction(text, end, length)
    }
    if (start === index) return -1
    start = previousStart(text, start, index)
  }
}

/** `UPPER+ LOWER* contraction?` from `index`, or -1. */
function upperWord(text: string, index: number, length: number): number {
  if (index >= length || (classOf(codePointAt(text, index)) & UPPER) === 0) return -1
  const end = runEnd(text, runEnd(text, index, length, UPPER), length, LOWER)
  return end + contraction(text, end, length)
}

/**
 * `pieceEnd` for a piece that starts with an ASCII character and whose end is decided by ASCII
 * characters alone (most of English and code): the same alternatives, with one table read a character.
 * -1 when a character past 127 could change the answer (the general walk then decides).
 */
function asciiPieceEnd(text: string, index: number, length: number): number {
  const code = text.charCodeAt(index)
  const bits = BASIC[code] as number
  // A word, after a leading character or from a letter: `UPPER* LOWER+` else `UPPER+ LOWER*`.
  let word = -1
  if ((bits & LETTER) !== 0) word = index
  else if ((bits & LEADER) !== 0 && index + 1 < length) {
    const next = text.charCodeAt(index + 1)
    if (next >= 128) return -1
    if (((BASIC[next] as number) & LETTER) !== 0) word = index + 1
  }
  if (word >= 0) {
    let at = word
    let following = -1
    for (; at < length; at += 1) {
      following = text.charCodeAt(at)
      if (following >= 128) return -1
      if (((BASIC[following] as number) & UPPER) === 0) break
    }
    if (at < length && ((BASIC[following] as number) & LOWER) !== 0) {
      for (at += 1; at < length; at += 1) {
        following = text.charCodeAt(at)
        if (following >= 128) return -1
        if (((BASIC[following] as number) & LOWER) === 0) break
      }
    }
    return at + contraction(text, at, length)
  }
  if ((bits & NUMBER) !== 0) {
    let end = index + 1
    for (; end < index + 3 && end < length; end += 1) {
      const following = text.charCodeAt(end)
      if (following >= 128) return -1
      if (((BASIC[following] as number) & NUMBER) === 0) break
    }
    return end
  }
  let punctuation = -1
  if ((bits & PUNCTUATION) !== 0) punctuation = index
  else if (code === 32 && index + 1 < length) {
    const next = text.charCodeAt(index + 1)
    if (next >= 128) return -1
    if (((BASIC[next] as number) & PUNCTUATION) !== 0) punctuation = index + 1
  }
  if (punctuation >= 0) {
    let end = punctuation + 1
    for (; end < length; end += 1) {
      const following = text.charCodeAt(end)
      if (following >= 128) return -1
      if (((BASIC[following] as number) & PUNCTUATION) === 0) break
    }
    for (;;) {
      const following = end < length ? text.charCodeAt(end) : -1
      if (following !== 10 && following !== 13 && following !== 47) return end
      end += 1
    }
  }
  // Whitespace: as the general walk, once the run is known to end at an ASCII character or the text's end.
  let spaces = index + 1
  for (; spaces < length; spaces += 1) {
    const following = text.charCodeAt(spaces)
    if (following >= 128) return -1
    if (((BASIC[following] as number) & SPACE) === 0) break
  }
  for (let at = spaces - 1; at >= index; at -= 1) {
    const following = text.charCodeAt(at)
    if (following === 10 || following === 13) return at + 1
  }
  if (spaces === length || spaces - 1 === index) return spaces
  return spaces - 1
}

/**
 * Where the piece starting at `index` ends: the first of o200k_base's alternatives that matches there,
 * as the regular expression would take it (greedy, backtracking), written out:
 * `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(contraction)?`,
 * `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(contraction)?`,
 * `\p{N}{1,3}`, ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, `\s*[\r\n]+`, `\s+(?!\S)`, `\s+`.
 */
export function pieceEnd(text: string, index: number, length: number): number {
  if (text.charCodeAt(index) < 128) {
    const end = asciiPieceEnd(text, index, length)
    if (end >= 0) return end
  }
  const codePoint = codePointAt(text, index)
  const bits = classOf(codePoint)
  const next = index + width(codePoint)
  if ((bits & LEADER) !== 0) {
    const word = lowerWord(text, next, length)
    if (word >= 0) return word
  }
  const lower = lowerWord(text, index, length)
  if (lower >= 0) return lower
  if ((bits & LEADER) !== 0) {
    const word = upperWord(text, next, length)
    if (word >= 0) return word
  }
  const upper = upperWord(text, index, length)
  if (upper >= 0) return upper
  if ((bits & NUMBER) !== 0) {
    let end = next
    for (let digits = 1; digits < 3 && end < length; digits += 1) {
      const following = codePointAt(text, end)
      if ((classOf(following) & NUMBER) === 0) break
      end += width(following)
    }
    return end
  }
  const punctuationFrom =
    (bits & PUNCTUATION) !== 0
      ? index
      : codePoint === 32 && next < length && (classOf(codePointAt(text, next)) & PUNCTUATION) !== 0
        ? next
        : -1
  if (punctuationFrom >= 0) {
    let end = runEnd(text, punctuationFrom, length, PUNCTUATION)
    for (;;) {
      const code = end < length ? text.charCodeAt(end) : -1
      if (code !== 10 && code !== 13 && code !== 47) return end
      end += 1
    }
  }
  // Whitespace (every `\s` character is in the basic plane, one code unit each).
  if ((bits & SPACE) === 0) throw new Error(`o200k: no alternative matches at ${index}`)
  const spaces = runEnd(text, index, length, SPACE)
  for (let at = spaces - 1; at >= index; at -= 1) {
    const code = text.charCodeAt(at)
    if (code === 10 || code === 13) return at + 1
  }
  if (spaces === length || spaces - 1 === index) return spaces
  return spaces - 1
}

/** The vocabulary's string entries in an open-addressing table keyed by a hash of their code units. */
class Vocabulary {
  private readonly mask: number
  /**
   * Four numbers a slot, so that a probe reads one cache line: the hash, the rank + 1 (0: empty), and
   * where the entry's code units start in `units` and how many there are.
   */
  private readonly slots: Int32Array
  /** Every entry's UTF-16 code units, one after another. */
  private readonly units: Uint16Array

  constructor(entries: ReadonlyMap<string, number>) {
    let size = 1
    while (size < entries.size * 2.5) size *= 2
    this.mask = size - 1
    this.slots = new Int32Array(size * 4)
    let total = 0
    for (const text of entries.keys()) total += text.length
    this.units = new Uint16Array(total)
    let offset = 0
    for (const [text, rank] of entries) {
      for (let at = 0; at < text.length; at += 1) this.units[offset + at] = text.charCodeAt(at)
      const hash = hashOf(text, 0, text.length)
      let slot = hash & this.mask
      while (this.slots[slot * 4 + 1] !== 0) slot = (slot + 1) & this.mask
      this.slots[slot * 4] = hash
      this.slots[slot * 4 + 1] = rank + 1
      this.slots[slot * 4 + 2] = offset
      this.slots[slot * 4 + 3] = text.length
      offset += text.length
    }
  }

  /** The rank of `text.slice(start, end)` (whose `hashOf` is `hash`) if it is an entry, else -1. */
  rank(text: string, start: number, end: number, hash: number): number {
    const length = end - start
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const at = slot * 4
      const held = this.slots[at + 1] as number
      if (held === 0) return -1
      if (this.slots[at] !== hash || this.slots[at + 3] !== length) continue
      const offset = this.slots[at + 2] as number
      let same = 0
      while (same < length && this.units[offset + same] === text.charCodeAt(start + same)) same += 1
      if (same === length) return held - 1
    }
  }
}

/**
 * The merged ranks of pieces that are not vocabulary entries, in a table of one entry a slot (a newer
 * piece takes its slot): a hit costs no substring and no map, and the table's size is fixed (real text
 * brings well over 100,000 distinct such pieces: a least-recently-used map that size spends its time
 * evicting).
 */
class MergedPieces {
  private readonly hashes = new Int32Array(MERGED_SLOTS)
  private readonly texts = new Array<string>(MERGED_SLOTS).fill('')
  private readonly ranks = new Array<readonly number[]>(MERGED_SLOTS).fill([])
  private readonly merger: BytePairMerger

  constructor(core: BytePairCore) {
    this.merger = new BytePairMerger(core)
  }

  ranksOf(text: string, start: number, end: number, hash: number): readonly number[] {
    const slot = hash & (MERGED_SLOTS - 1)
    if (this.hashes[slot] === hash && sameText(this.texts[slot] as string, text, start, end))
      return this.ranks[slot] as readonly number[]
    const piece = text.slice(start, end)
    const ranks: number[] = []
    this.merger.merge(piece, ranks)
    if (piece.length <= MERGED_PIECE_CHARACTERS) {
      this.hashes[slot] = hash
      this.texts[slot] = piece
      this.ranks[slot] = ranks
    }
    return ranks
  }
}

/** Slots of the merged-piece table (a power of two). */
const MERGED_SLOTS = 1 << 16
/** Longer pieces are merged each time: the table holds short strings only. */
const MERGED_PIECE_CHARACTERS = 64

/** Whether `entry` equals `text.slice(start, end)`. */
function sameText(entry: string, text: string, start: number, end: number): boolean {
  const length = end - start
  if (entry.length !== length) return false
  for (let at = 0; at < length; at += 1)
    if (entry.charCodeAt(at) !== text.charCodeAt(start + at)) return false
  return true
}

/** FNV-1a over UTF-16 code units, then a final mix so the low bits spread. */
function hashOf(text: string, start: number, end: number): number {
  let hash = 0x811c9dc5
  for (let at = start; at < end; at += 1) hash = Math.imul(hash ^ text.charCodeAt(at), 0x01000193)
  hash ^= hash >>> 16
  hash = Math.imul(hash, 0x45d9f3b)
  return hash ^ (hash >>> 16)
}

/** o200k_base over a byte-pair core: counts and tokens of plain text (special-token strings are text). */
export class O200k {
  private readonly vocabulary: Vocabulary
  private readonly merged: MergedPieces

  constructor(core: BytePairCore) {
    this.vocabulary = new Vocabulary(core.bytePairStringRankEncoder)
    this.merged = new MergedPieces(core)
  }

  count(text: string): number {
    const length = text.length
    let tokens = 0
    for (let start = 0; start < length; ) {
      const end = pieceEnd(text, start, length)
      const hash = hashOf(text, start, end)
      tokens +=
        this.vocabulary.rank(text, start, end, hash) >= 0
          ? 1
          : this.merged.ranksOf(text, start, end, hash).length
      start = end
    }
    return tokens
  }

  /**
   * The tokens of `text`, or its first `limit` of them: the scan stops there (a piece's end never depends
   * on what follows its scan, so they are the first tokens of the whole text).
   */
  encode(text: string, limit = Number.POSITIVE_INFINITY): number[] {
    const length = text.length
    const tokens: number[] = []
    for (let start = 0; start < length && tokens.length < limit; ) {
      const end = pieceEnd(text, start, length)
      const hash = hashOf(text, start, end)
      const rank = this.vocabulary.rank(text, start, end, hash)
      if (rank >= 0) tokens.push(rank)
      else for (const merged of this.merged.ranksOf(text, start, end, hash)) tokens.push(merged)
      start = end
    }
    if (tokens.length > limit) tokens.length = limit
    return tokens
  }
}
