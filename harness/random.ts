// Seeded randomness and a stable string hash: every random choice in cachelab flows from a seed, so
// two runs with the same seed produce the same bytes.

/** A seeded generator of floats in [0, 1) (mulberry32). */
export interface Random {
  next(): number
}

/** A generator from a numeric seed. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0
  return {
    next(): number {
      state = (state + 0x6d2b79f5) >>> 0
      let t = state
      t = Math.imul(t ^ (t >>> 15), t | 1)
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296
    },
  }
}

/** 32-bit FNV-1a hash of a string: stable across runs and platforms. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

/**
 * A 64-bit hash of a string as four UTF-16 code units (cyrb53's two 32-bit lanes, both kept): a key a
 * set holds in about 50 bytes however long the string, where two different strings share one with a
 * chance of about n²/2⁶⁵ among n (one in 10⁸ among a million).
 */
export function hashKey64(text: string): string {
  let first = 0xdeadbeef
  let second = 0x41c6ce57
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index)
    first = Math.imul(first ^ code, 2654435761)
    second = Math.imul(second ^ code, 1597334677)
  }
  first = Math.imul(first ^ (first >>> 16), 2246822507) ^ Math.imul(second ^ (second >>> 13), 3266489909)
  second = Math.imul(second ^ (second >>> 16), 2246822507) ^ Math.imul(first ^ (first >>> 13), 3266489909)
  return String.fromCharCode(first & 0xffff, first >>> 16, second & 0xffff, second >>> 16)
}
