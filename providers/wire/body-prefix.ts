// Parsing a request body that starts as an earlier one did: a session resends its whole history on every
// request, so the bytes of a body's first items are often exactly an earlier body's. Those items are not
// parsed again: the earlier body's item objects stand for them, and only the rest of the body (its start
// before the list, the new items, what follows the list) is parsed. Bytes compare, not values, so the
// result is the value `JSON.parse` gives the whole body (notes/2026-12-05-serve-request-path.md).

/** The fields whose array is a body's item list, in the order `itemsOf` (digest.ts) looks for them. */
const LIST_KEYS = ['messages', 'contents', 'input'] as const
type ListKey = (typeof LIST_KEYS)[number]

/** Where a body's item list stands in its bytes. */
export interface ListLayout {
  key: ListKey
  /** Byte offset of the first item (the list's end, `]`, when it is empty). */
  first: number
  /** Byte offset just past each item. */
  ends: number[]
}

/** A body parsed before, kept for the next body that starts as it does. */
interface KnownBody {
  bytes: Buffer
  /** Its first bytes (`LOOKUP_BYTES`), to pass over bodies that start otherwise without comparing more. */
  lookup: string
  layout: ListLayout
  /** The body's item list: its objects (as the item reuse leaves them) stand for the same bytes later. */
  items: readonly unknown[]
}

/** Bytes of a body's start that every body it may repeat starts with (a lookup only: items are compared). */
const LOOKUP_BYTES = 64

/** Bodies kept at most, whatever their bytes: each is compared with every body parsed. */
const BODIES_KEPT = 8

/** Estimated bytes a kept body holds beside its items: its bytes, and each item's offset. */
function keptBytes(bytes: Buffer, layout: ListLayout): number {
  return bytes.length + 8 * layout.ends.length + 200
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_LIST = 0x5b
const CLOSE_LIST = 0x5d

/** The offset of the first byte at or after `at` that is not JSON whitespace. */
function skipSpace(bytes: Buffer, at: number): number {
  let index = at
  while (index < bytes.length) {
    const byte = bytes[index]
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) break
    index += 1
  }
  return index
}

/** Just past the string that opens at `at` (a quote), or -1 when it does not close. */
function stringEnd(bytes: Buffer, at: number): number {
  let from = at + 1
  for (;;) {
    const quote = bytes.indexOf(QUOTE, from)
    if (quote < 0) return -1
    let backslashes = 0
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes += 1
    if (backslashes % 2 === 0) return quote + 1
    from = quote + 1
  }
}

/**
 * Just past the JSON value that starts at `at`, or -1. It finds the end of a valid value and does not
 * validate: what it scans is parsed by `JSON.parse` as well, which refuses what is not JSON.
 */
function valueEnd(bytes: Buffer, at: number): number {
  const first = bytes[at]
  if (first === QUOTE) return stringEnd(bytes, at)
  if (first === OPEN_OBJECT || first === OPEN_LIST) {
    let depth = 0
    let index = at
    while (index < bytes.length) {
      const byte = bytes[index]
      if (byte === QUOTE) {
        index = stringEnd(bytes, index)
        if (index < 0) return -1
        continue
      }
      if (byte === OPEN_OBJECT || byte === OPEN_LIST) depth += 1
      else if (byte === CLOSE_OBJECT || byte === CLOSE_LIST) {
        depth -= 1
        if (depth === 0) return index + 1
      }
      index += 1
    }
    return -1
  }
  // A number or a literal: up to the next delimiter.
  let index = at
  while (index < bytes.length) {
    const byte = bytes[index] as number
    if (byte === COMMA || byte === CLOSE_OBJECT || byte === CLOSE_LIST || byte <= 0x20) break
    index += 1
  }
  return index > at ? index : -1
}

/** The items of a list whose first item (or `]`) is at `at`: each item's end, and just past the `]`; undefined when malformed. */
function scanItems(bytes: Buffer, at: number, ends: number[]): number | undefined {
  const index = skipSpace(bytes, at)
  if (bytes[index] === CLOSE_LIST) return index + 1
  const end = valueEnd(bytes, index)
  if (end < 0) return undefined
  ends.push(end)
  return scanMore(bytes, end, ends)
}

/** The items of a list after an item that ends at `at`, as `scanItems`. */
function scanMore(bytes: Buffer, at: number, ends: number[]): number | undefined {
  let index = skipSpace(bytes, at)
  for (;;) {
    if (bytes[index] === CLOSE_LIST) return index + 1
    if (bytes[index] !== COMMA) return undefined
    const end = valueEnd(bytes, skipSpace(bytes, index + 1))
    if (end < 0) return undefined
    ends.push(end)
    index = skipSpace(bytes, end)
  }
}

/** A key as `JSON.parse` reads it (escapes decoded). */
function keyAt(bytes: Buffer, start: number, end: number): string | undefined {
  const raw = bytes.toString('utf8', start + 1, end - 1)
  if (!raw.includes('\\')) return raw
  try {
    return JSON.parse(bytes.toString('utf8', start, end)) as string
  } catch {
    return undefined
  }
}

/**
 * The top-level fields from `at` (just past `{`, or past a field's value) to the closing `}`: each key,
 * and the list layout of the first list key (`LIST_KEYS` order) whose value is an array. Undefined when
 * the bytes are not an object of that kind, or a list key comes twice (`JSON.parse` keeps the last).
 */
function scanFields(
  bytes: Buffer,
  at: number,
  first: boolean,
  seen: Set<string>,
  lists: Map<ListKey, ListLayout>,
): boolean {
  let index = skipSpace(bytes, at)
  if (first && bytes[index] === CLOSE_OBJECT) return skipSpace(bytes, index + 1) === bytes.length
  if (!first) {
    if (bytes[index] === CLOSE_OBJECT) return skipSpace(bytes, index + 1) === bytes.length
    if (bytes[index] !== COMMA) return false
    index = skipSpace(bytes, index + 1)
  }
  for (;;) {
    if (bytes[index] !== QUOTE) return false
    const keyEnd = stringEnd(bytes, index)
    if (keyEnd < 0) return false
    const key = keyAt(bytes, index, keyEnd)
    if (key === undefined) return false
    if ((LIST_KEYS as readonly string[]).includes(key)) {
      if (seen.has(key)) return false
      seen.add(key)
    }
    index = skipSpace(bytes, keyEnd)
    if (bytes[index] !== COLON) return false
    index = skipSpace(bytes, index + 1)
    let end: number
    if (bytes[index] === OPEN_LIST && (LIST_KEYS as readonly string[]).includes(key)) {
      const layout: ListLayout = { key: key as ListKey, first: skipSpace(bytes, index + 1), ends: [] }
      const closed = scanItems(bytes, layout.first, layout.ends)
      if (closed === undefined) return false
      lists.set(key as ListKey, layout)
      end = closed
    } else {
      end = valueEnd(bytes, index)
      if (end < 0) return false
    }
    index = skipSpace(bytes, end)
    if (bytes[index] === CLOSE_OBJECT) return skipSpace(bytes, index + 1) === bytes.length
    if (bytes[index] !== COMMA) return false
    index = skipSpace(bytes, index + 1)
  }
}

/** The list a body's items are in, as `itemsOf` picks it: the first list key whose value is an array. */
function chosen(lists: Map<ListKey, ListLayout>): ListLayout | undefined {
  for (const key of LIST_KEYS) {
    const layout = lists.get(key)
    if (layout !== undefined) return layout
  }
  return undefined
}

/** Where the item list of a whole body stands, or undefined (not an object with one, or a list key twice). */
export function layoutOf(bytes: Buffer): ListLayout | undefined {
  const open = skipSpace(bytes, 0)
  if (bytes[open] !== OPEN_OBJECT) return undefined
  const lists = new Map<ListKey, ListLayout>()
  if (!scanFields(bytes, open + 1, true, new Set(), lists)) return undefined
  return chosen(lists)
}

/** A request body parsed as `JSON.parse` reads its UTF-8 text: an object (or array), else undefined. */
export function parseJsonBody(bytes: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'))
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/**
 * The JSON of a text, as `parseJsonBody` reads the text's UTF-8 bytes (a lone surrogate is U+FFFD), without
 * encoding it to bytes and decoding it again.
 */
export function parseJsonText(text: string): Record<string, unknown> | undefined {
  try {
    // With the `u` flag a surrogate matches only when it is not half of a pair.
    const value: unknown = JSON.parse(/\p{Cs}/u.test(text) ? Buffer.from(text).toString('utf8') : text)
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/** How many of a known body's items `bytes` repeats byte for byte from its first byte on. */
function repeatedItems(bytes: Buffer, known: KnownBody): number {
  const { ends, first } = known.layout
  // A session's next body mostly repeats every item of its previous one: one comparison.
  const whole = ends.at(-1) ?? first
  if (bytes.length >= whole && bytes.compare(known.bytes, 0, whole, 0, whole) === 0) return ends.length
  if (bytes.length < first || bytes.compare(known.bytes, 0, first, 0, first) !== 0) return 0
  let repeated = 0
  let from = first
  for (const end of ends) {
    if (end > bytes.length || bytes.compare(known.bytes, from, end, from, end) !== 0) break
    repeated += 1
    from = end
  }
  return repeated
}

/**
 * The bodies a server parsed lately, and the parse of a body that repeats one's first items. The objects
 * handed out are the earlier body's: nothing may write to a parsed body.
 */
export class BodyPrefixes {
  /** The bodies kept, most recently parsed first. */
  private known: KnownBody[] = []
  /** Estimated bytes of the bodies kept (their items are the item reuse's, counted there). */
  bytes = 0
  /** Items taken from an earlier body rather than parsed, in all (tests and benchmarks read it). */
  repeated = 0

  /**
   * `bytes` parsed as `parseJsonBody` parses it, the items it repeats from the kept body it repeats most of
   * taken from that body. `JSON.parse` reads everything else (the start before the list, the new items,
   * what follows), so what is not JSON is refused as before. `settle` sees the parsed body first (the item
   * reuse replaces its items) and says whether the body may be kept for the next.
   */
  parse(
    bytes: Buffer,
    settle: (body: Record<string, unknown>) => boolean = () => true,
  ): Record<string, unknown> | undefined {
    const lookup = bytes.toString('latin1', 0, Math.min(bytes.length, LOOKUP_BYTES))
    let best: KnownBody | undefined
    let repeated = 0
    for (const known of this.known) {
      if (known.lookup !== lookup) continue
      const count = repeatedItems(bytes, known)
      if (count > repeated) {
        best = known
        repeated = count
      }
    }
    let parsed: { body: Record<string, unknown>; layout: ListLayout } | undefined
    if (best !== undefined) parsed = this.parseRest(bytes, best, repeated)
    if (parsed === undefined) {
      const body = parseJsonBody(bytes)
      if (body === undefined) return undefined
      const layout = layoutOf(bytes)
      const items = layout === undefined ? undefined : body[layout.key]
      // Kept only when the scan and the parse agree on the list (they always should).
      if (layout === undefined || !Array.isArray(items) || items.length !== layout.ends.length) {
        settle(body)
        return body
      }
      parsed = { body, layout }
    } else this.repeated += repeated
    const items = parsed.body[parsed.layout.key] as unknown[]
    if (!settle(parsed.body)) return parsed.body
    // A body that repeats all of a kept one's items stands for it from now on.
    if (best !== undefined && repeated === best.layout.ends.length) this.forget(best)
    this.keep({ bytes, lookup, layout: parsed.layout, items })
    return parsed.body
  }

  /** The body whose first `repeated` items are `known`'s, the rest parsed; undefined to parse it whole. */
  private parseRest(
    bytes: Buffer,
    known: KnownBody,
    repeated: number,
  ): { body: Record<string, unknown>; layout: ListLayout } | undefined {
    const { first, key } = known.layout
    const last = known.layout.ends[repeated - 1] as number
    // The new items, and the fields after the list: scanned for the layout, and for a list key coming again.
    const ends = known.layout.ends.slice(0, repeated)
    const closed = scanMore(bytes, last, ends)
    if (closed === undefined) return undefined
    const lists = new Map<ListKey, ListLayout>()
    const seen = new Set<string>([key])
    if (!scanFields(bytes, closed, false, seen, lists) || lists.size > 0) return undefined
    // The other list keys before the list were in the known body's start, which these bytes repeat.
    // Its start and the rest, the repeated items and the comma after them left out: `[` + rest.
    let rest = skipSpace(bytes, last)
    if (bytes[rest] === COMMA) rest = skipSpace(bytes, rest + 1)
    let body: unknown
    try {
      body = JSON.parse(`${bytes.toString('utf8', 0, first)}${bytes.toString('utf8', rest)}`)
    } catch {
      return undefined
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined
    const record = body as Record<string, unknown>
    const items = record[key]
    if (!Array.isArray(items) || repeated + items.length !== ends.length) return undefined
    record[key] = [...known.items.slice(0, repeated), ...items]
    return { body: record, layout: { key, first, ends } }
  }

  /** Keep a body first, the least recently parsed forgotten past `BODIES_KEPT`. */
  private keep(body: KnownBody): void {
    this.known.unshift(body)
    this.bytes += keptBytes(body.bytes, body.layout)
    this.trim(Number.POSITIVE_INFINITY)
  }

  private forget(body: KnownBody): void {
    const index = this.known.indexOf(body)
    if (index < 0) return
    this.known.splice(index, 1)
    this.bytes -= keptBytes(body.bytes, body.layout)
  }

  /** Forget the least recently parsed bodies until at most `limit` bytes (and `BODIES_KEPT` bodies) are held. */
  trim(limit: number): void {
    while (this.known.length > 0 && (this.bytes > limit || this.known.length > BODIES_KEPT))
      this.forget(this.known.at(-1) as KnownBody)
  }

  /** Forget every body kept (their items may no longer be the item reuse's). */
  clear(): void {
    this.known = []
    this.bytes = 0
  }
}
