// Our byte-pair merge against gpt-tokenizer's own: the same ranks for the same bytes, byte-order marks,
// lone surrogates and long runs included.

import { createRequire } from 'node:module'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BytePairMerger, type ByteVocabulary, wellFormed } from './o200k-merge.ts'

const encoding = createRequire(import.meta.url)(
  'gpt-tokenizer/encoding/o200k_base',
) as typeof import('gpt-tokenizer/encoding/o200k_base')
/** The package's core, with the merge the tests compare against (private in its types). */
const core = (
  encoding.default as unknown as {
    bytePairEncodingCoreProcessor: ByteVocabulary & { bytePairMerge(bytes: Uint8Array): number[] }
  }
).bytePairEncodingCoreProcessor

describe('merging a piece the vocabulary lacks', () => {
  const merger = new BytePairMerger(core)
  const merged = (text: string) => {
    const out: number[] = []
    merger.merge(text, out)
    return out
  }
  /** Characters whose bytes the package's lookups treat apart: a byte-order mark, lone surrogates, 2–4-byte characters. */
  const pieceText = fc
    .array(
      fc.constantFrom(
        'a',
        'b',
        'z',
        'Q',
        ' ',
        '-',
        '=',
        '_',
        '0',
        '\ufeff',
        '\ud800',
        '\udfff',
        'é',
        'ß',
        '日',
        '€',
        '🎉',
        '𝐀',
        '\u0301',
      ),
      { minLength: 1, maxLength: 24 },
    )
    .map((characters) => characters.join(''))

  it("gives the package's merge of the same bytes", () => {
    fc.assert(
      fc.property(pieceText, (text) => {
        expect(merged(text)).toEqual(core.bytePairMerge(new TextEncoder().encode(text)))
      }),
      { numRuns: 5_000 },
    )
  })

  it('merges long runs as the package does', () => {
    for (const text of ['-'.repeat(700), ' '.repeat(1_500), '\ufeff'.repeat(40), 'ab'.repeat(300)])
      expect(merged(text)).toEqual(core.bytePairMerge(new TextEncoder().encode(text)))
  })

  it('tells well-formed UTF-8 as the standard does', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), (bytes) => {
        let decodes = true
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(bytes)
        } catch {
          decodes = false
        }
        expect(wellFormed(bytes, 0, bytes.length)).toBe(decodes)
      }),
      { numRuns: 20_000 },
    )
  })
})
