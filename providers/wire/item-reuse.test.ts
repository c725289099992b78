import { describe, expect, it } from 'vitest'
import { ItemReuse } from './item-reuse.ts'

const parsed = (value: unknown) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>
const long = (seed: string) => `${seed} ${'word '.repeat(200)}${seed}`

describe('ItemReuse', () => {
  it('replaces an item equal to one seen at the same index with that object', () => {
    const reuse = new ItemReuse()
    const first = parsed({ messages: [{ role: 'user', content: long('a') }] })
    reuse.reuse(first)
    const second = parsed({
      messages: [
        { role: 'user', content: long('a') },
        { role: 'assistant', content: 'b' },
      ],
    })
    reuse.reuse(second)
    expect((second.messages as unknown[])[0]).toBe((first.messages as unknown[])[0])
    expect(reuse.reused).toBe(1)
    expect(reuse.owns((second.messages as object[])[1] as object)).toBe(true)
  })

  it('keeps every item that differs in any way, however alike it looks', () => {
    const text = long('same')
    const middle = Math.floor(text.length / 2)
    const cases: unknown[] = [
      { role: 'user', content: `${text.slice(0, middle)}X${text.slice(middle + 1)}` },
      { content: text, role: 'user' },
      { role: 'user', content: [{ type: 'text', text }] },
      { role: 'user', content: text, extra: null },
      { role: 'user', content: text, n: 0 },
    ]
    const reuse = new ItemReuse()
    const original = parsed({ messages: [{ role: 'user', content: text, n: -0 }] })
    ;((original.messages as Record<string, unknown>[])[0] as Record<string, unknown>).n = -0
    reuse.reuse(original)
    for (const item of cases) {
      const body = parsed({ messages: [item] })
      const before = (body.messages as unknown[])[0]
      reuse.reuse(body)
      expect((body.messages as unknown[])[0]).toBe(before)
    }
    // The same text at another index is another item.
    const moved = parsed({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'user', content: text, n: 0 },
      ],
    })
    reuse.reuse(
      parsed({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'user', content: text, n: 0 },
        ],
      }),
    )
    reuse.reuse(moved)
    expect(reuse.reused).toBe(2)
  })

  it('leaves an item nested too deeply to walk alone, and reads the rest of its body', () => {
    const reuse = new ItemReuse()
    // Deeper than the stack would take a recursive walk of.
    const deep = `{"role":"user","content":${'['.repeat(50_000)}${']'.repeat(50_000)}}`
    const body = () =>
      JSON.parse(`{"messages":[${deep},{"role":"user","content":"${long('after')}"}]}`) as Record<
        string,
        unknown
      >
    const first = body()
    reuse.reuse(first)
    const second = body()
    reuse.reuse(second)
    const [deepItem, after] = second.messages as object[]
    // (Compared by hand: a failing matcher would print the item, as deep as it is.)
    expect(deepItem === (first.messages as object[])[0]).toBe(false)
    expect(reuse.owns(deepItem as object)).toBe(false)
    expect(after).toBe((first.messages as object[])[1])
  })

  it('leaves a string input alone, and forgets the least recently used past its bytes', () => {
    const reuse = new ItemReuse()
    const body = { input: 'just text' }
    reuse.reuse(body)
    expect(body.input).toBe('just text')
    expect(reuse.size).toBe(0)
    for (let index = 0; index < 10; index += 1)
      reuse.reuse(parsed({ messages: [{ role: 'user', content: long(`m${index}`) }] }))
    const all = reuse.bytes
    reuse.trim(all / 2)
    expect(reuse.bytes).toBeLessThanOrEqual(all / 2)
    expect(reuse.size).toBeLessThan(10)
    // The newest is kept, the oldest gone.
    const newest = parsed({ messages: [{ role: 'user', content: long('m9') }] })
    const oldest = parsed({ messages: [{ role: 'user', content: long('m0') }] })
    const reusedBefore = reuse.reused
    reuse.reuse(newest)
    expect(reuse.reused).toBe(reusedBefore + 1)
    reuse.reuse(oldest)
    expect(reuse.reused).toBe(reusedBefore + 1)
  })

  it('reuses a growing history whether its requests come in a row or interleaved with another', () => {
    const history = (session: string, length: number) =>
      parsed({
        messages: Array.from({ length }, (_, index) => ({
          role: 'user',
          content: long(`${session}${index}`),
        })),
      })
    const reuse = new ItemReuse()
    const seen = new Map<string, unknown[]>()
    let expected = 0
    for (let length = 1; length <= 4; length += 1)
      for (const session of ['a', 'b', 'b', 'a']) {
        const body = history(session, length)
        const earlier = seen.get(session) ?? []
        reuse.reuse(body)
        const items = body.messages as unknown[]
        for (const [index, item] of earlier.entries())
          if (index < items.length) expect(items[index]).toBe(item)
        expected += Math.min(earlier.length, items.length)
        seen.set(session, items)
      }
    expect(reuse.reused).toBe(expected)
  })

  it("does not hand out the previous body's items once it has forgotten them", () => {
    const reuse = new ItemReuse()
    const first = parsed({ messages: [{ role: 'user', content: long('gone') }] })
    reuse.reuse(first)
    reuse.trim(0)
    expect(reuse.size).toBe(0)
    const again = parsed({ messages: [{ role: 'user', content: long('gone') }] })
    const fresh = (again.messages as unknown[])[0]
    reuse.reuse(again)
    expect((again.messages as unknown[])[0]).toBe(fresh)
    expect(reuse.reused).toBe(0)
  })

  it('gives an item reused since it was remembered a second chance when it trims', () => {
    const reuse = new ItemReuse()
    const body = (name: string) => parsed({ messages: [{ role: 'user', content: long(name) }] })
    for (let index = 0; index < 10; index += 1) reuse.reuse(body(`m${index}`))
    reuse.reuse(body('m0'))
    expect(reuse.reused).toBe(1)
    reuse.trim(reuse.bytes / 2)
    // m0, the oldest, was reused: m1 went in its place.
    reuse.reuse(body('m0'))
    expect(reuse.reused).toBe(2)
    reuse.reuse(body('m1'))
    expect(reuse.reused).toBe(2)
  })
})

describe('ItemReuse parsing bodies', () => {
  const text = (turns: number) =>
    JSON.stringify({
      model: 'm',
      messages: Array.from({ length: turns }, (_, index) => ({
        role: 'user',
        content: long(`turn ${index}`),
      })),
    })

  it('takes the items a body repeats from the one before, counts the bodies it keeps, and forgets them with any item', () => {
    const reuse = new ItemReuse()
    const first = reuse.parse(Buffer.from(text(3))) as { messages: object[] }
    const itemsOnly = new ItemReuse()
    itemsOnly.reuse(JSON.parse(text(3)))
    // The body's bytes are held beside its items.
    expect(reuse.bytes).toBeGreaterThan(itemsOnly.bytes + text(3).length)
    const second = reuse.parse(Buffer.from(text(4))) as { messages: object[] }
    expect(reuse.repeated).toBe(3)
    expect(second).toEqual(JSON.parse(text(4)))
    expect(second.messages[2]).toBe(first.messages[2])
    // Forgetting any item forgets the kept bodies too: none of their items outlives its count.
    reuse.trim(reuse.bytes / 2)
    expect(reuse.bytes).toBeLessThanOrEqual(itemsOnly.bytes * 2)
    const third = reuse.parse(Buffer.from(text(5)))
    expect(reuse.repeated).toBe(3)
    expect(third).toEqual(JSON.parse(text(5)))
  })
})
