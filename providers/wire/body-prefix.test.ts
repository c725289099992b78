import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BodyPrefixes, layoutOf, parseJsonBody, parseJsonText } from './body-prefix.ts'

const bytes = (text: string) => Buffer.from(text, 'utf8')

/** The same value and the same key order (`toStrictEqual` alone does not see order), `-0` told from `0`. */
function expectSame(actual: unknown, expected: unknown): void {
  expect(actual).toStrictEqual(expected)
  expect(JSON.stringify(actual, (_, value) => (Object.is(value, -0) ? '-0' : value))).toBe(
    JSON.stringify(expected, (_, value) => (Object.is(value, -0) ? '-0' : value)),
  )
}

/** Parse every text in order with one `BodyPrefixes`; each result must be `JSON.parse`'s. */
function parseAll(texts: readonly string[]): BodyPrefixes {
  const prefixes = new BodyPrefixes()
  for (const text of texts) expectSame(prefixes.parse(bytes(text)), parseJsonBody(bytes(text)))
  return prefixes
}

const message = (role: string, content: unknown) => ({ role, content })
const history = (count: number) =>
  Array.from({ length: count }, (_, index) =>
    message(
      index % 2 === 0 ? 'user' : 'assistant',
      `turn ${index}: ${'é✓ "quoted" \\ back\nslash '.repeat(3)}`,
    ),
  )

describe('parsing a body that repeats an earlier one', () => {
  it('takes the repeated items from the earlier body and parses the rest, as JSON.parse would', () => {
    const texts = [1, 2, 3, 4].map((count) =>
      JSON.stringify({ model: 'm', messages: history(count), stream: true }),
    )
    const prefixes = parseAll(texts)
    expect(prefixes.repeated).toBe(1 + 2 + 3)
    // The repeated items are the same objects from body to body.
    const again = new BodyPrefixes()
    const first = again.parse(bytes(texts[2] as string)) as { messages: object[] }
    const second = again.parse(bytes(texts[3] as string)) as { messages: object[] }
    expect(second.messages[0]).toBe(first.messages[0])
    expect(second.messages[2]).toBe(first.messages[2])
    expect(second.messages[3]).toEqual(history(4)[3])
  })

  it('parses whole what only looks repeated, and refuses what is not JSON exactly as JSON.parse', () => {
    const base = { model: 'm', messages: history(3) }
    const text = JSON.stringify(base)
    const longer = JSON.stringify({ ...base, messages: history(4) })
    // Another start past the bytes a body is looked up by, of the same length.
    const padded = (tag: string) =>
      JSON.stringify({ model: 'm', pad: `${'x'.repeat(64)}${tag}`, messages: history(3) })
    parseAll([
      text,
      // A byte changed in an early item, spaces around the items, the list key twice (the last counts),
      // the list key written with an escape, another list key after the list, keys in another order.
      text.replace('turn 1', 'turn 9'),
      text,
      JSON.stringify(base, null, 2),
      text,
      `${longer.slice(0, -1)},"messages":[{"role":"user","content":"late"}]}`,
      text,
      `${longer.slice(0, -1)},"\\u006dessages":[]}`,
      text,
      `${longer.slice(0, -1)},"contents":[1]}`,
      text,
      `${longer.slice(0, -1)},"input":"text"}`,
      JSON.stringify({ messages: history(4), model: 'm' }),
      padded('a'),
      padded('b'),
      // Not JSON after the repeated items, a trailing comma, trailing bytes, a BOM, an array.
      `${text.slice(0, -2)},{"role":"user","content":"x"`,
      `${text.slice(0, -2)},]}`,
      `${longer} x`,
      text,
      `\uFEFF${longer}`,
      `[${text}]`,
      text,
      // Repeated items and then the end of the list at once, and the same body again.
      text,
      `${text.slice(0, -2)}]}`,
      longer,
      longer,
    ])
  })

  it('finds each wire’s list where itemsOf does', () => {
    expect(layoutOf(bytes('{"contents":[{"a":1},{"b":[2]}],"systemInstruction":{"x":"]"}}'))).toEqual({
      key: 'contents',
      first: 13,
      ends: [20, 30],
    })
    expect(layoutOf(bytes('{"input":[],"model":"m"}'))?.ends).toEqual([])
    expect(layoutOf(bytes('{"contents":[1],"messages":[2,3]}'))?.key).toBe('messages')
    expect(layoutOf(bytes('{"messages":[1],"messages":[2]}'))).toBeUndefined()
    expect(layoutOf(bytes('{"input":"text"}'))).toBeUndefined()
  })

  it('gives JSON.parse’s value for any sequence of bodies that grow, change, reformat or break', () => {
    const json = fc.jsonValue({ maxDepth: 3 })
    const item = fc.oneof(
      fc.record({ role: fc.constantFrom('user', 'assistant'), content: fc.string({ unit: 'binary' }) }),
      json,
    )
    const step = fc.record({
      add: fc.array(item, { maxLength: 3 }),
      change: fc.option(fc.tuple(fc.nat(), item), { nil: undefined }),
      drop: fc.nat({ max: 2 }),
      indent: fc.constantFrom(undefined, 0, 1, '\t'),
      key: fc.constantFrom('messages', 'contents', 'input'),
      tail: fc.constantFrom('', ' ', ',', 'x', '}'),
    })
    // A long first item, as a system prompt: the bodies share their first bytes, and repeat each other.
    const system = message('system', 'a system prompt longer than the bytes a body is looked up by')
    let repeated = 0
    fc.assert(
      fc.property(
        fc.array(json, { maxLength: 2 }),
        fc.array(step, { minLength: 1, maxLength: 8 }),
        (start, steps) => {
          let items: unknown[] = [system, ...start]
          const texts: string[] = []
          for (const { add, change, drop, indent, key, tail } of steps) {
            items = [...items, ...add]
            if (change !== undefined && items.length > 0) items[change[0] % items.length] = change[1]
            const text = JSON.stringify({ model: 'm', [key]: items, n: -0 }, null, indent)
            texts.push(text, `${text.slice(0, text.length - (drop % 2))}${tail}`)
          }
          repeated += parseAll(texts).repeated
        },
      ),
      { numRuns: 300 },
    )
    // The runs did take items from earlier bodies, not only parse them whole.
    expect(repeated).toBeGreaterThan(300)
  })

  it('reads a text as its UTF-8 bytes would be read, lone surrogates and all', () => {
    const texts = fc.oneof(
      fc.string({ unit: 'binary' }).map((text) => JSON.stringify({ usage: { text } })),
      fc.string({ unit: 'binary' }).map((text) => `{"${text}":1}`),
      fc.string({ unit: 'binary' }),
    )
    fc.assert(
      fc.property(texts, (text) => expectSame(parseJsonText(text), parseJsonBody(Buffer.from(text)))),
      { numRuns: 500 },
    )
    const lone = '{"\\ud800":"\ud800","pair":"\ud83d\ude00"}'
    expectSame(parseJsonText(lone), parseJsonBody(Buffer.from(lone)))
  })

  it('forgets the least recently kept bodies past its bytes', () => {
    const prefixes = new BodyPrefixes()
    for (const index of [1, 2, 3])
      prefixes.parse(bytes(JSON.stringify({ model: `m${index}`, messages: history(20) })))
    const kept = prefixes.bytes
    expect(kept).toBeGreaterThan(0)
    prefixes.trim(kept / 2)
    expect(prefixes.bytes).toBeLessThanOrEqual(kept / 2)
    prefixes.clear()
    expect(prefixes.bytes).toBe(0)
  })
})
