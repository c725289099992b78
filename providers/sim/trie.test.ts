// The prefix trie on its own: longest stored prefix, frame-aware matching, the walk cursor and pruning,
// checked against hand-worked cases and a naive list of stored prefixes.

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { commonTokenPrefix, encode } from './tokens.ts'
import { childrenOf, PrefixTrie, sameSegment } from './trie.ts'
import type { Prompt, Segment } from './types.ts'

const segment = (text: string, frame = 'user||'): Segment => ({
  frame,
  text,
  framing: 3,
  tokens: 3 + text.length,
  node: { part: 'messages', index: 0 },
})

/** A prompt of the given segments; `base` says its first `count` segments are those of an earlier one. */
function promptOf(segments: Segment[], base?: Prompt, count = 0): Prompt {
  const cumulative: number[] = []
  let total = 0
  for (const { tokens } of segments) {
    total += tokens
    cumulative.push(total)
  }
  return {
    segments,
    cumulative,
    trailing: 0,
    total,
    ...(base !== undefined ? { base: { segments: base.segments, count } } : {}),
  }
}

const texts = (...values: string[]) => promptOf(values.map((value) => segment(value)))
const matched = (trie: PrefixTrie<unknown>, prompt: Prompt, limit?: number) =>
  trie.walk(prompt, limit).map((node) => node.segment?.text)

describe('sameSegment', () => {
  it('compares frame and text only, and never matches a missing segment', () => {
    const plain = segment('alpha')
    const breakpoint = { ttl: '5m', ttlSeconds: 300, explicit: true }
    const marked = { ...segment('alpha'), tokens: 99, breakpoint }
    expect(sameSegment(plain, marked)).toBe(true)
    expect(sameSegment(plain, segment('alpha', 'assistant||'))).toBe(false)
    expect(sameSegment(plain, segment('alphA'))).toBe(false)
    expect(sameSegment(plain, undefined)).toBe(false)
    expect(sameSegment(undefined, undefined)).toBe(false)
  })
})

describe('a prefix trie', () => {
  it('walks the longest stored prefix of a request, a node per segment', () => {
    const trie = new PrefixTrie<string>()
    const stored = texts('a', 'b', 'c')
    const nodes = trie.insert(stored, 3, (value) => `data-${value.text}`)
    expect(nodes.map((node) => node.depth)).toEqual([1, 2, 3])
    expect(nodes[2]?.parent).toBe(nodes[1])
    expect(nodes[0]?.parent).toBe(trie.root)
    expect(nodes.map((node) => node.data)).toEqual(['data-a', 'data-b', 'data-c'])
    expect(matched(trie, texts('a', 'b', 'c', 'd', 'e'))).toEqual(['a', 'b', 'c'])
    expect(matched(trie, texts('a', 'b'))).toEqual(['a', 'b'])
    expect(matched(trie, texts('z'))).toEqual([])
  })

  it('stops where a request diverges mid-way and matches again after a branch is stored', () => {
    const trie = new PrefixTrie<number>()
    trie.insert(texts('a', 'b', 'c', 'd'), 4, () => 0)
    expect(matched(trie, texts('a', 'b', 'x', 'd'))).toEqual(['a', 'b'])
    trie.insert(texts('a', 'b', 'x'), 3, () => 1)
    expect(matched(trie, texts('a', 'b', 'x', 'd'))).toEqual(['a', 'b', 'x'])
    expect(matched(trie, texts('a', 'b', 'c', 'd'))).toEqual(['a', 'b', 'c', 'd'])
  })

  it('stores only the first `count` segments and walks no further than `limit`', () => {
    const trie = new PrefixTrie<number>()
    const prompt = texts('a', 'b', 'c', 'd')
    expect(trie.insert(prompt, 2, () => 0)).toHaveLength(2)
    expect(matched(trie, texts('a', 'b', 'c'))).toEqual(['a', 'b'])
    expect(matched(trie, texts('a', 'b', 'c'), 1)).toEqual(['a'])
    expect(trie.insert(prompt, 9, () => 0)).toHaveLength(4)
  })

  it('tells apart segments with the same text and another frame', () => {
    const trie = new PrefixTrie<string>()
    trie.insert(promptOf([segment('same', 'user||')]), 1, () => 'user')
    expect(matched(trie, promptOf([segment('same', 'assistant||')]))).toEqual([])
    trie.insert(promptOf([segment('same', 'assistant||')]), 1, () => 'assistant')
    expect(trie.root.children.get('same')).toHaveLength(2)
    expect([...childrenOf(trie.root)].map((node) => node.data)).toEqual(['user', 'assistant'])
    expect(trie.walk(promptOf([segment('same', 'assistant||')]))[0]?.data).toBe('assistant')
  })
})

describe("a prefix trie's cursor", () => {
  it('gives a request that extends the last one the same path as a walk from the root', () => {
    const trie = new PrefixTrie<number>()
    const first = texts('a', 'b', 'c')
    trie.insert(first, 3, () => 0)
    trie.insert(texts('a', 'q'), 2, () => 0)
    trie.walk(first)
    const extended = promptOf([...first.segments, segment('d')], first, 3)
    const reused = trie.walk(extended)
    trie.prune(() => false) // prunes nothing, but drops the cursor: the next walk starts at the root
    expect(reused).toEqual(trie.walk(extended))
    expect(reused).toHaveLength(3)
    expect(trie.walk(first)).toBe(trie.walk(first))
  })

  it('does not trust a base whose later segments differ from the remembered request', () => {
    const trie = new PrefixTrie<number>()
    const first = texts('a', 'b', 'c')
    trie.insert(first, 3, () => 0)
    const branch = promptOf([first.segments[0] as Segment, segment('x'), segment('c')], first, 1)
    expect(matched(trie, branch)).toEqual(['a'])
  })

  it('walks the remembered prompt again with a shorter limit, then the full one', () => {
    const trie = new PrefixTrie<number>()
    const prompt = texts('a', 'b', 'c', 'd')
    trie.insert(prompt, 4, () => 0)
    expect(matched(trie, prompt, 2)).toEqual(['a', 'b'])
    expect(matched(trie, prompt)).toEqual(['a', 'b', 'c', 'd'])
  })

  it('takes over, without comparing, what a prompt and a remembered one share through one earlier prompt', () => {
    const trie = new PrefixTrie<number>()
    const first = texts('a', 'b')
    // The remembered prompt: the first one extended by an answer.
    const answered = promptOf([...first.segments, segment('answer')], first, 2)
    trie.insert(answered, 3, () => 0)
    // The next request, built from the first prompt: a copy of the answer, then a new message.
    const next = promptOf([...first.segments, segment('answer'), segment('c')], first, 2)
    expect(matched(trie, next)).toEqual(['a', 'b', 'answer'])
    // A same-length prompt with other segment objects past the shared two is compared, not trusted.
    const other = promptOf([...first.segments, segment('other')], first, 2)
    expect(matched(trie, other)).toEqual(['a', 'b'])
  })

  it('forgets the remembered path when pruning removes its nodes', () => {
    const trie = new PrefixTrie<string>()
    const prompt = texts('a', 'b')
    trie.insert(prompt, 2, () => 'dead')
    trie.walk(prompt)
    expect(trie.prune((data) => data === 'dead')).toBe(2)
    expect(trie.walk(prompt)).toEqual([])
  })
})

describe('pruning a prefix trie', () => {
  it('removes whole dead subtrees and keeps a dead node that leads to a live one', () => {
    const trie = new PrefixTrie<boolean>()
    const alive = (live: boolean) => () => live
    trie.insert(texts('a', 'b'), 2, alive(false))
    trie.insert(texts('a', 'b', 'live'), 3, alive(true))
    trie.insert(texts('a', 'c', 'd'), 3, alive(false))
    expect(trie.prune((live) => live === false)).toBe(2)
    expect(matched(trie, texts('a', 'b', 'live'))).toEqual(['a', 'b', 'live'])
    expect(matched(trie, texts('a', 'c', 'd'))).toEqual(['a'])
    expect(trie.walk(texts('a'))[0]?.children.has('c')).toBe(false)
  })

  it('removes one of two same-text children and keeps the other under the shared key', () => {
    const trie = new PrefixTrie<string>()
    trie.insert(promptOf([segment('same', 'user||')]), 1, () => 'user')
    trie.insert(promptOf([segment('same', 'tool||')]), 1, () => 'tool')
    expect(trie.prune((data) => data === 'user')).toBe(1)
    expect(trie.root.children.get('same')?.map((node) => node.data)).toEqual(['tool'])
  })
})

type Operation =
  | { kind: 'insert'; prompt: number; count: number }
  | { kind: 'walk'; prompt: number; limit: number | undefined }
  | { kind: 'prune'; below: number }

/** Fresh segments, after the first `keep` segment objects of an earlier prompt when `from` is set. */
const recipe = fc.record({
  from: fc.option(fc.nat(), { nil: undefined }),
  keep: fc.nat(),
  fresh: fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('user||', 'tool||')), {
    maxLength: 5,
  }),
})
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), prompt: fc.nat(), count: fc.nat(8) }),
  fc.record({
    kind: fc.constant('walk' as const),
    prompt: fc.nat(),
    limit: fc.option(fc.nat(8), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant('prune' as const), below: fc.nat(30) }),
)

type Recipe = typeof recipe extends fc.Arbitrary<infer Value> ? Value : never

function promptsOf(recipes: readonly Recipe[]): Prompt[] {
  const prompts: Prompt[] = []
  for (const { from, keep, fresh } of recipes) {
    const added = fresh.map(([text, frame]) => segment(text, frame))
    const base = from === undefined ? undefined : prompts[from % prompts.length]
    const count = base === undefined ? 0 : keep % (base.segments.length + 1)
    prompts.push(promptOf((base?.segments.slice(0, count) ?? []).concat(added), base, count))
  }
  return prompts
}

/** The reference: every stored prefix by its frames and texts, with the number it was created with. */
class NaivePrefixes {
  private readonly entries = new Map<string, number>()
  private created = 0
  private readonly key = (prompt: Prompt, count: number) =>
    JSON.stringify(prompt.segments.slice(0, count).map(({ frame, text }) => [frame, text]))

  insert(prompt: Prompt, count: number): void {
    for (let length = 1; length <= Math.min(count, prompt.segments.length); length += 1) {
      const key = this.key(prompt, length)
      if (this.entries.has(key)) continue
      this.created += 1
      this.entries.set(key, this.created)
    }
  }

  /** Data of the longest stored prefix's nodes, shortest first. */
  walk(prompt: Prompt, limit = prompt.segments.length): number[] {
    const found: number[] = []
    for (let length = 1; length <= Math.min(limit, prompt.segments.length); length += 1) {
      const data = this.entries.get(this.key(prompt, length))
      if (data === undefined) break
      found.push(data)
    }
    return found
  }

  /** Drop every prefix that no live stored prefix extends; returns how many were dropped. */
  prune(dead: (data: number) => boolean): number {
    const live = [...this.entries]
      .filter(([, data]) => !dead(data))
      .map(([key]) => JSON.parse(key) as unknown[])
    const before = this.entries.size
    for (const key of this.entries.keys()) {
      const length = (JSON.parse(key) as unknown[]).length
      if (!live.some((other) => JSON.stringify(other.slice(0, length)) === key)) this.entries.delete(key)
    }
    return before - this.entries.size
  }
}

describe('a prefix trie against a naive set of stored prefixes', () => {
  it('walks, inserts and prunes as the set does, whatever the cursor remembers', () => {
    const scenario = fc.tuple(
      fc.array(recipe, { minLength: 1, maxLength: 8 }),
      fc.array(operation, { maxLength: 30 }),
    )
    fc.assert(
      fc.property(scenario, ([recipes, operations]) => {
        const prompts = promptsOf(recipes)
        const trie = new PrefixTrie<number>()
        const naive = new NaivePrefixes()
        let created = 0
        for (const step of operations) {
          if (step.kind === 'prune') {
            const dead = (data: number | undefined) => data !== undefined && data < step.below
            expect(trie.prune(dead)).toBe(naive.prune(dead))
            continue
          }
          const prompt = prompts[step.prompt % prompts.length] as Prompt
          if (step.kind === 'insert') {
            const path = trie.insert(prompt, step.count, () => (created += 1))
            naive.insert(prompt, step.count)
            expect(path.map((node) => node.data)).toEqual(naive.walk(prompt, step.count))
          } else {
            const path = trie.walk(prompt, step.limit)
            expect(path.map((node) => node.data)).toEqual(naive.walk(prompt, step.limit))
            for (const [index, node] of path.entries())
              expect(sameSegment(node.segment, prompt.segments[index])).toBe(true)
          }
        }
      }),
      { seed: 1, numRuns: 200 },
    )
  })
})

describe("a node's longest shared child", () => {
  // Texts of a few letters tokenize to a few tokens each; the naive answer compares every child.
  const words = ['alpha', 'alpine', 'alp', 'beta', 'bet', 'gamma', 'gam', 'ga', 'delta', 'del', 'x', 'xy']
  const tokens = (segment: { text: string }) => encode(segment.text)
  const naive = (stored: string[], live: Set<string>, query: string, frame: string) => {
    let best: number | undefined
    for (const text of stored) {
      if (!live.has(text) || frame !== 'user||') continue
      best = Math.max(best ?? 0, commonTokenPrefix(encode(text), encode(query)))
    }
    return best
  }

  it('equals a comparison with every live child, for a few children and for many (indexed)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc
            .tuple(fc.constantFrom(...words), fc.constantFrom(...words), fc.nat(40))
            .map(([left, right, number]) => `${left} ${right}${number}`),
          { minLength: 1, maxLength: 60 },
        ),
        fc.func(fc.boolean()),
        fc.constantFrom(...words).map((word) => `${word} alpha7`),
        fc.constantFrom('user||', 'assistant||'),
        (stored, isLive, query, frame) => {
          const trie = new PrefixTrie<string>()
          for (const text of stored) trie.insert(texts(text), 1, () => text)
          const live = new Set(stored.filter((text) => isLive(text)))
          const found = trie.longestShared(
            trie.root,
            segment(query, frame),
            (child) => live.has(child.data as string),
            tokens,
          )
          expect(found).toBe(naive(stored, live, query, frame))
        },
      ),
      { numRuns: 200 },
    )
  })

  it('keeps its index up to date with children inserted after it was built and after pruning', () => {
    const trie = new PrefixTrie<string>()
    const stored = Array.from({ length: 40 }, (_, index) => `session ${index} asks about module ${index * 7}`)
    for (const text of stored.slice(0, 30)) trie.insert(texts(text), 1, () => text)
    trie.longestShared(trie.root, segment('session 3'), () => true, tokens)
    for (const text of stored.slice(30)) trie.insert(texts(text), 1, () => text)
    const query = 'session 35 asks about module 245 and more'
    expect(trie.longestShared(trie.root, segment(query), () => true, tokens)).toBe(
      naive(stored, new Set(stored), query, 'user||'),
    )
    trie.prune((data) => data === stored[35])
    expect(trie.longestShared(trie.root, segment(query), () => true, tokens)).toBe(
      naive(stored, new Set(stored.filter((text) => text !== stored[35])), query, 'user||'),
    )
  })
})

describe("a prefix trie's least recently used nodes", () => {
  it('count a node used whenever a walk or insert passed through it, though only its last node is marked', () => {
    const meter = { bytes: 0, tick: 1 }
    const trie = new PrefixTrie<number>(meter)
    trie.insert(texts('a', 'b', 'c'), 3, () => 0)
    meter.tick = 2
    trie.walk(texts('a', 'b'))
    meter.tick = 3
    trie.insert(texts('a', 'd'), 2, () => 0)
    const byUse = new Map<number, number>()
    trie.bytesByUse(byUse)
    // One node each at ticks 1 (c) and 2 (b), two at 3 (a, through which d was inserted, and d).
    const node = byUse.get(1) ?? 0
    expect([...byUse.keys()].sort()).toEqual([1, 2, 3])
    expect([byUse.get(2), byUse.get(3)]).toEqual([node, 2 * node])
    // Eviction goes by the same ticks: c first, then b; a and d stay.
    Object.assign(meter, { evictBefore: 2 })
    expect(trie.prune(() => false)).toBe(1)
    Object.assign(meter, { evictBefore: 3 })
    expect(trie.prune(() => false)).toBe(1)
    expect(matched(trie, texts('a', 'b', 'c'))).toEqual(['a'])
    expect(matched(trie, texts('a', 'd'))).toEqual(['a', 'd'])
  })
})

describe("a prefix trie's estimated bytes", () => {
  it('grow with every node inserted and return to zero when everything is pruned', () => {
    const meter = { bytes: 0 }
    const first = new PrefixTrie<number>(meter)
    const second = new PrefixTrie<number>(meter)
    first.insert(texts('a', 'b', 'c'), 3, () => 1)
    const afterFirst = meter.bytes
    second.insert(texts('a', 'b'), 2, () => 1)
    expect(afterFirst).toBeGreaterThan(0)
    expect(meter.bytes).toBeGreaterThan(afterFirst)
    first.prune(() => true)
    second.prune(() => true)
    expect(meter.bytes).toBe(0)
  })
})
