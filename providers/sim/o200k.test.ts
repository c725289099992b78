// The hand-written o200k_base split against gpt-tokenizer's own regular expression and encoder: the same
// tokens on every text, whatever characters it mixes.

import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type BytePairCore, O200k, pieceEnd } from './o200k.ts'

const encoding = createRequire(import.meta.url)(
  'gpt-tokenizer/encoding/o200k_base',
) as typeof import('gpt-tokenizer/encoding/o200k_base')
const core = (encoding.default as unknown as { bytePairEncodingCoreProcessor: BytePairCore })
  .bytePairEncodingCoreProcessor
const plain = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() }
const o200k = new O200k(core)

/** The pieces gpt-tokenizer's split pattern cuts `text` into. */
function regexPieces(text: string): string[] {
  const pattern =
    /[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu
  return [...text.matchAll(pattern)].map((match) => match[0])
}

function pieces(text: string): string[] {
  const found: string[] = []
  for (let start = 0; start < text.length; ) {
    const end = pieceEnd(text, start, text.length)
    found.push(text.slice(start, end))
    start = end
  }
  return found
}

/**
 * Characters from every class the pattern tells apart: upper, title, modifier and other letters, marks,
 * lower letters, numbers of each kind (some astral), each kind of whitespace (and two that are not `\s`),
 * apostrophes and the contraction letters, slashes, punctuation, emoji with a joiner, lone surrogates.
 */
const ALPHABET = [
  'A',
  'Z',
  'a',
  'z',
  's',
  't',
  'd',
  'm',
  'l',
  'v',
  'e',
  'r',
  'S',
  'T',
  'L',
  'V',
  'E',
  'R',
  'M',
  'D',
  'É',
  'é',
  'ǅ',
  'ʰ',
  '日',
  '本',
  'ا',
  '\u0301',
  '\u20dd',
  '\u0903',
  '𝐀',
  '𝐚',
  '𝓩',
  '0',
  '7',
  '²',
  'Ⅻ',
  '٣',
  '𝟎',
  '𝟡',
  ' ',
  ' ',
  '\t',
  '\n',
  '\r',
  '\v',
  '\f',
  '\u00a0',
  '\u2028',
  '\u3000',
  '\ufeff',
  '\u0085',
  '\u180e',
  "'",
  "'",
  '’',
  '/',
  '.',
  ',',
  '"',
  '-',
  '_',
  '(',
  '{',
  '<',
  '|',
  '>',
  '$',
  '€',
  '🎉',
  '👩\u200d💻',
  '\ud800',
  '\udc00',
  '<|endoftext|>',
]

const mixedText = fc
  .array(fc.constantFrom(...ALPHABET), { maxLength: 40 })
  .map((characters) => characters.join(''))

describe('the o200k_base split', () => {
  it("cuts every text where the pattern's regular expression does", () => {
    fc.assert(
      fc.property(mixedText, (text) => {
        expect(pieces(text)).toEqual(regexPieces(text))
      }),
      { numRuns: 5_000 },
    )
  })

  it('cuts arbitrary Unicode text where the regular expression does', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 30 }), (text) => {
        expect(pieces(text)).toEqual(regexPieces(text))
      }),
      { numRuns: 3_000 },
    )
  })
})

describe('o200k_base tokens', () => {
  it("are gpt-tokenizer's on mixed text, and the count is their number", () => {
    fc.assert(
      fc.property(mixedText, (text) => {
        const expected = encoding.encode(text, plain)
        expect(o200k.encode(text)).toEqual(expected)
        expect(o200k.count(text)).toBe(expected.length)
      }),
      { numRuns: 2_000 },
    )
  })

  it("are gpt-tokenizer's on this repository's code and notes, and again once its pieces are remembered", () => {
    const texts = ['providers/sim', 'notes'].flatMap((folder) =>
      readdirSync(folder)
        .filter((name) => name.endsWith('.ts') || name.endsWith('.md'))
        .slice(0, 25)
        .map((name) => readFileSync(join(folder, name), 'utf8')),
    )
    for (const round of [1, 2])
      for (const text of texts) {
        const expected = encoding.encode(text, plain)
        expect(o200k.encode(text), `round ${round}`).toEqual(expected)
        expect(o200k.count(text)).toBe(expected.length)
      }
  })

  it('merge the pieces the vocabulary lacks, long ones included', () => {
    for (const text of ['zzqxjkvbwpf', ' ────────────', '-'.repeat(300), ' '.repeat(1_000), 'ab'.repeat(200)])
      expect(o200k.encode(text)).toEqual(encoding.encode(text, plain))
  })
})
