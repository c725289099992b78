// Token counting with o200k_base for every provider, memoized per distinct text so that simulating
// request N+1 of a session only tokenizes what request N did not already contain.

import { Tiktoken } from 'js-tiktoken/lite'
import o200kBase from 'js-tiktoken/ranks/o200k_base'

let encoder: Tiktoken | undefined

function encoderInstance(): Tiktoken {
  encoder ??= new Tiktoken(o200kBase)
  return encoder
}

/** Tokenize `text` as plain text: special-token strings inside it are ordinary characters. */
export function encode(text: string): number[] {
  return encoderInstance().encode(text, [], [])
}

/** Decode tokens back to text. */
export function decode(tokens: readonly number[]): string {
  return encoderInstance().decode([...tokens])
}

/**
 * A memoizing token counter. Counts are cached by the exact text; the token arrays themselves are kept
 * only for the few texts a partial-prefix comparison asked for recently.
 */
export class TokenCounter {
  private readonly counts = new Map<string, number>()
  private readonly arrays = new Map<string, readonly number[]>()
  private readonly arrayLimit: number
  /** How many texts were actually tokenized (a memo miss); benchmarks and tests read it. */
  encodeCalls = 0

  constructor(options: { arrayCacheSize?: number } = {}) {
    this.arrayLimit = options.arrayCacheSize ?? 256
  }

  /** Number of o200k_base tokens in `text`. */
  count(text: string): number {
    if (text === '') return 0
    const known = this.counts.get(text)
    if (known !== undefined) return known
    const tokens = this.encodeOnce(text)
    return tokens.length
  }

  /** The tokens of `text` (cached for a bounded number of texts). */
  tokens(text: string): readonly number[] {
    const known = this.arrays.get(text)
    if (known !== undefined) return known
    return this.encodeOnce(text)
  }

  /** Length of the common token prefix of two texts. */
  commonPrefix(a: string, b: string): number {
    if (a === b) return this.count(a)
    const left = this.tokens(a)
    const right = this.tokens(b)
    const limit = Math.min(left.length, right.length)
    let index = 0
    while (index < limit && left[index] === right[index]) index += 1
    return index
  }

  private encodeOnce(text: string): readonly number[] {
    const tokens = encode(text)
    this.encodeCalls += 1
    this.counts.set(text, tokens.length)
    if (this.arrays.size >= this.arrayLimit) {
      const oldest = this.arrays.keys().next().value
      if (oldest !== undefined) this.arrays.delete(oldest)
    }
    this.arrays.set(text, tokens)
    return tokens
  }
}

/** The process-wide counter: the mock providers and the report predictor share its memo. */
export const sharedTokenCounter = new TokenCounter()
