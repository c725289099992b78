// The token counter's memo: bounded by bytes, least recently used first out, and never wrong after it
// forgets.

import { describe, expect, it } from 'vitest'
import { encode, LONG_TEXT_CHARACTERS, TokenCounter } from './tokens.ts'

const text = (index: number) => `text number ${index} with a few words to count`

describe('encode', () => {
  it("gives js-tiktoken's o200k_base tokens, special-token strings as plain text", () => {
    // Token ids as js-tiktoken 1.0.21 encoded this text, the tokenizer the counts were first taken with.
    const mixed = "日本語 🎉 naïve <|endoftext|> it'S   \r\n\tx\u00a0y 12345"
    expect(encode(mixed)).toEqual([
      9048, 40909, 139786, 231, 153475, 737, 464, 91, 419, 1440, 919, 91, 29, 480, 31233, 35224, 21395, 5310,
      88, 220, 7633, 2548,
    ])
  })
})

describe('a token counter', () => {
  it('counts what o200k_base encodes, and tokenizes a remembered text only once', () => {
    const counter = new TokenCounter()
    expect(counter.count(text(1))).toBe(encode(text(1)).length)
    counter.count(text(1))
    expect(counter.encodeCalls).toBe(1)
  })

  it('keeps its memo under the byte limit by forgetting the least recently used texts', () => {
    const counter = new TokenCounter({ countBytes: 2_000, arrayBytes: 2_000 })
    for (let index = 0; index < 200; index += 1) counter.count(text(index))
    expect(counter.bytes).toBeLessThanOrEqual(4_000)
    expect(counter.knows(text(199))).toBe(true)
    expect(counter.knows(text(0))).toBe(false)
  })

  it('keeps a text it keeps using while newer texts push older ones out', () => {
    const counter = new TokenCounter({ countBytes: 1_000, arrayBytes: 1_000 })
    for (let index = 0; index < 100; index += 1) {
      counter.count(text(0))
      counter.count(text(index + 1))
    }
    const calls = counter.encodeCalls
    expect(counter.count(text(0))).toBe(encode(text(0)).length)
    expect(counter.encodeCalls).toBe(calls)
  })

  it('counts a forgotten text again, the same as before', () => {
    const counter = new TokenCounter({ countBytes: 300, arrayBytes: 300 })
    const first = counter.count(text(0))
    for (let index = 1; index < 50; index += 1) counter.count(text(index))
    expect(counter.count(text(0))).toBe(first)
    expect(counter.commonPrefix(text(0), text(1))).toBe(3)
  })

  it('answers a held text without tokenizing, even one too large for its memo, until every hold is released', () => {
    const counter = new TokenCounter({ countBytes: 100, arrayBytes: 100 })
    const long = text(3).repeat(20)
    const tokens = Uint32Array.from(encode(long))
    counter.remember(long, tokens)
    expect(counter.knownTokens(long)).toBeUndefined()
    const first = counter.hold(long, tokens)
    const second = counter.hold(long, tokens)
    expect(counter.tokens(long)).toBe(tokens)
    expect(counter.count(long)).toBe(tokens.length)
    first()
    first()
    expect(counter.knownTokens(long)).toBe(tokens)
    second()
    expect(counter.heldTexts).toBe(0)
    expect(counter.knownTokens(long)).toBeUndefined()
    expect(counter.encodeCalls).toBe(0)
  })

  it("keeps a long text's tokens with the segment that carries it after the memo forgot them", () => {
    const counter = new TokenCounter({ countBytes: 100, arrayBytes: 100 })
    const segment = { text: 'word '.repeat(LONG_TEXT_CHARACTERS / 5 + 1) }
    const tokens = counter.tokensOf(segment)
    const calls = counter.encodeCalls
    expect(counter.tokensOf(segment)).toBe(tokens)
    expect(counter.commonPrefixOf(segment, { text: `${segment.text}and more` })).toBe(tokens.length - 1)
    expect(counter.encodeCalls).toBe(calls + 1)
    expect(counter.tokensOf({ text: 'short' })).toEqual(Uint32Array.from(encode('short')))
  })

  it('takes tokens counted elsewhere as its own', () => {
    const counter = new TokenCounter()
    counter.remember(text(7), Uint32Array.from(encode(text(7))))
    expect(counter.count(text(7))).toBe(encode(text(7)).length)
    expect(counter.encodeCalls).toBe(0)
  })
})
