// Content-keyed reuse of a request's items (messages, Gemini contents, Responses input items): an item
// whose JSON value equals an item seen before at the same index is replaced by that earlier object, so
// the identity memos of the simulators' linearizers and of the capture's digests apply to the history a
// session sends again on every request. Equal values (same keys in the same order, same strings, numbers
// and literals) give equal JSON text, so nothing computed of an item changes; the objects are shared from
// then on and nothing downstream may write to them.

import { BodyPrefixes } from './body-prefix.ts'
import { itemsOf } from './digest.ts'

/** One item remembered: its object, where it stood, its key in the map, and whether it was reused since it was last moved. */
interface ReusableItem {
  index: number
  item: object
  bytes: number
  key: string
  used: boolean
  /** Set once forgotten: a list that still holds the entry must not hand its item out. */
  forgotten: boolean
}

/** Estimated bytes of an object or array of a remembered item, and of its map entry and key. */
const OBJECT_BYTES = 64
const ENTRY_BYTES = 200

/** Characters of each end of a string that go into an item's key. */
const KEY_END = 24

/** How many items a reuse remembers at most, whatever their bytes (a body of many tiny items). */
const ITEMS_KEPT = 200_000

/**
 * How deeply an item may nest to be remembered: the walks below recurse, and a body may reach them before
 * the server has refused one nested too deeply (mock/request.ts checks after the reuse, so the reused
 * items it has measured before are not measured again). Deeper items are left as they are.
 */
const DEEPEST_KEPT = 128

/**
 * A short key of a JSON value: its shape, every key, every number and literal, and each string's length
 * and ends. Equal values have equal keys; values with equal keys are compared in full (`sameValue`).
 * Made and compared without serializing the value: a history of megabytes costs a walk of its nodes.
 * False, with no key, for a value nested deeper than `DEEPEST_KEPT`.
 */
function keyOf(value: unknown, parts: string[], depth = 0): boolean {
  if (typeof value === 'string') {
    parts.push(
      value.length <= 2 * KEY_END
        ? JSON.stringify(value)
        : `${value.length}:${JSON.stringify(value.slice(0, KEY_END))}${JSON.stringify(value.slice(-KEY_END))}`,
    )
  } else if (typeof value === 'object' && value !== null) {
    if (depth >= DEEPEST_KEPT) return false
    if (Array.isArray(value)) {
      parts.push('[')
      for (const element of value) if (!keyOf(element, parts, depth + 1)) return false
      parts.push(']')
    } else {
      parts.push('{')
      for (const [name, field] of Object.entries(value)) {
        parts.push(JSON.stringify(name))
        if (!keyOf(field, parts, depth + 1)) return false
      }
      parts.push('}')
    }
  } else parts.push(Object.is(value, -0) ? '-0' : String(value))
  return true
}

/**
 * Whether two JSON values are equal: the same keys in the same order, the same strings, numbers and
 * literals. It recurses no deeper than the shallower value, and one of them is always a remembered item.
 */
function sameValue(left: unknown, right: unknown): boolean {
  if (Object.is(left, right)) return true
  if (typeof left !== 'object' || left === null || typeof right !== 'object' || right === null) return false
  if (Array.isArray(left) !== Array.isArray(right)) return false
  if (Array.isArray(left)) {
    const other = right as unknown[]
    if (left.length !== other.length) return false
    for (let index = 0; index < left.length; index += 1)
      if (!sameValue(left[index], other[index])) return false
    return true
  }
  const leftKeys = Object.keys(left)
  const rightKeys = Object.keys(right)
  if (leftKeys.length !== rightKeys.length) return false
  for (let index = 0; index < leftKeys.length; index += 1) {
    const name = leftKeys[index] as string
    if (name !== rightKeys[index]) return false
    if (!sameValue((left as Record<string, unknown>)[name], (right as Record<string, unknown>)[name]))
      return false
  }
  return true
}

/** Estimated bytes of a parsed JSON value: two a character of its strings (an upper bound), and its objects. */
function valueBytes(value: unknown): number {
  if (typeof value === 'string') return 16 + 2 * value.length
  if (typeof value !== 'object' || value === null) return 8
  let bytes = OBJECT_BYTES
  for (const [name, field] of Object.entries(value)) bytes += name.length + valueBytes(field)
  return bytes
}

export class ItemReuse {
  /** Items by their key and index, least recently used first (as `trim` approximates it). */
  private readonly items = new Map<string, ReusableItem>()
  /** Estimated bytes of the items and keys remembered. */
  private itemBytes = 0
  /**
   * Bodies parsed lately (`parse`), whose items a later body that repeats their bytes takes as they are.
   * Kept only while every item they hold is one remembered here, so their items are counted once, here.
   */
  private readonly prefixes = new BodyPrefixes()
  /** Items replaced by an earlier object, in all (tests and benchmarks read it). */
  reused = 0
  /**
   * Every item this reuse remembered or handed out: objects of bodies the server parsed itself, which no
   * client can change afterwards, so what is computed of one may be kept by the object.
   */
  private readonly owned = new WeakSet<object>()
  /**
   * The previous body's items as remembered, by index. A session's next request mostly repeats them at the
   * same indexes, so each is compared first, before any key is made: a history costs one comparison.
   */
  private previous: Array<ReusableItem | undefined> = []

  /** Estimated bytes of the items, keys and bodies remembered. */
  get bytes(): number {
    return this.itemBytes + this.prefixes.bytes
  }

  /** Items a parse took from an earlier body's objects rather than parsing them, in all. */
  get repeated(): number {
    return this.prefixes.repeated
  }

  /**
   * A request body parsed as `JSON.parse` reads its UTF-8 text (undefined when it is not an object), its
   * items then reused as `reuse` does. Items whose bytes repeat a body parsed lately are that body's
   * objects, not parsed again (body-prefix.ts).
   */
  parse(bytes: Buffer): Record<string, unknown> | undefined {
    return this.prefixes.parse(bytes, (body) => {
      const remembered = this.reuse(body)
      // A body is kept only while every item it holds is remembered here (and so counted in `bytes`):
      // forgetting any item forgets the kept bodies (`trim`).
      return itemsOf(body).every((item, index) => {
        if (typeof item !== 'object' || item === null) return true
        const entry = remembered[index]
        return entry !== undefined && !entry.forgotten
      })
    })
  }

  /**
   * Replace, in place, each item of `body` equal to a remembered item at the same index with that item,
   * and remember the others. `body` must be a fresh parse no one else holds yet. Returns what is
   * remembered of each item, by index.
   */
  reuse(body: Record<string, unknown>): ReadonlyArray<ReusableItem | undefined> {
    const items = itemsOf(body)
    // `itemsOf` makes a one-item list of a string input: not the body's own, nothing to replace.
    if (items !== body.messages && items !== body.contents && items !== body.input) return []
    const remembered: Array<ReusableItem | undefined> = new Array(items.length)
    for (let index = 0; index < items.length; index += 1) {
      const item = items[index]
      if (typeof item !== 'object' || item === null) continue
      const last = this.previous[index]
      // The previous body's item at this index, still remembered and equal: the key would find it too.
      if (last !== undefined && !last.forgotten && sameValue(item, last.item)) {
        items[index] = last.item
        remembered[index] = last
        this.used(last)
        continue
      }
      const parts = [String(index)]
      if (!keyOf(item, parts)) continue
      const key = parts.join('')
      const known = this.items.get(key)
      if (known !== undefined && sameValue(item, known.item)) {
        items[index] = known.item
        remembered[index] = known
        this.used(known)
        continue
      }
      if (known !== undefined) this.forget(key, known)
      const bytes = valueBytes(item) + 2 * key.length + ENTRY_BYTES
      const entry = { index, item, bytes, key, used: false, forgotten: false }
      this.items.set(key, entry)
      remembered[index] = entry
      this.owned.add(item)
      this.itemBytes += bytes
    }
    this.previous = remembered
    this.trim(Number.POSITIVE_INFINITY)
    return remembered
  }

  /**
   * Forget the least recently used items until at most `limit` bytes (and `ITEMS_KEPT` items) are held.
   * Recency is the second-chance approximation of LRU: a reuse only marks its item (a session's whole
   * history is reused on every request), and an item marked since it was last moved goes to the back
   * unmarked instead of being forgotten.
   */
  trim(limit: number): void {
    // Kept bodies hold their bytes beside the items: a quarter of the room at most.
    this.prefixes.trim(limit / 4)
    for (const [key, known] of this.items) {
      if (this.bytes <= limit && this.items.size <= ITEMS_KEPT) break
      if (known.used) {
        known.used = false
        this.items.delete(key)
        this.items.set(key, known)
        continue
      }
      this.forget(key, known)
      // The previous body's list and the kept bodies must not keep forgotten items alive past the limit.
      this.previous = []
      this.prefixes.clear()
    }
  }

  /** Whether `item` is an object this reuse remembered (and may hand out again). */
  owns(item: object): boolean {
    return this.owned.has(item)
  }

  /** How many items are remembered. */
  get size(): number {
    return this.items.size
  }

  /** Count a reuse of `known` and mark it used. */
  private used(known: ReusableItem): void {
    this.reused += 1
    known.used = true
  }

  private forget(key: string, known: ReusableItem): void {
    known.forgotten = true
    this.items.delete(key)
    this.itemBytes -= known.bytes
  }
}
