// Reading a few fields of a large JSON line without building the rest. A Claude Code line is mostly text
// the reader never looks at (tool results, file contents, thinking); `JSON.parse` would decode and build
// all of it. `pickJson` walks the line's UTF-8 bytes instead, checks every byte as `JSON.parse` would, and
// builds only what a `JsonPick` names. Whatever it does not accept (broken JSON, a value that is not an
// object, nesting deeper than it tracks) it leaves to the caller's `JSON.parse`, which then gives its own
// verdict and message: a line is accepted here only if `JSON.parse` would accept it, and what is built is
// what `JSON.parse` would have built for the named fields.

/**
 * What to build of a JSON value: all of it, only the named fields of an object (a field not named is
 * checked and passed over), or each element of an array. A value of another kind than the pick expects
 * (a string where fields were named) is built whole.
 */
export type JsonPick =
  | 'whole'
  | { readonly fields: Readonly<Record<string, JsonPick>> }
  | { readonly each: JsonPick }

/** A pick made ready for matching field names against bytes. */
type Plan = 'whole' | FieldsPlan | { kind: 'each'; plan: Plan }

interface FieldsPlan {
  kind: 'fields'
  /** The field names, and each one's plan, by index. */
  names: string[]
  plans: Plan[]
  /** Each name's UTF-8 bytes. */
  bytes: Uint8Array[]
  /** The indexes of the names of each byte length. */
  byLength: number[][]
  /**
   * The string each field last held, by index, when it was plain ASCII: a field that holds the same as on
   * the line before (a session id, a type, a model) gives the same string again, not a new one decoded.
   */
  last: Array<string | undefined>
}

/** A pick compiled for `pickJson`. */
export class JsonPicker {
  readonly plan: Plan

  constructor(pick: JsonPick) {
    this.plan = planOf(pick)
  }
}

function planOf(pick: JsonPick): Plan {
  if (pick === 'whole') return 'whole'
  if ('each' in pick) return { kind: 'each', plan: planOf(pick.each) }
  const names = Object.keys(pick.fields)
  const bytes = names.map((name) => new TextEncoder().encode(name))
  const byLength: number[][] = []
  for (const [index, name] of bytes.entries()) {
    for (let length = byLength.length; length <= name.length; length += 1) byLength.push([])
    byLength[name.length]?.push(index)
  }
  return {
    kind: 'fields',
    names,
    plans: names.map((name) => planOf(pick.fields[name] as JsonPick)),
    bytes,
    byLength,
    last: names.map(() => undefined),
  }
}

/*
 * Byte classes. Inside a string, `"`, `\` and control characters (which JSON forbids unescaped) stop the
 * scan; so does a read past the end of the bytes (undefined indexes no table: `STOPS[undefined]` is
 * undefined, not 0). A line's bytes end at its line break, itself a control character, or at the end of
 * the buffer: a scan never runs past a line that is not whole.
 */
const STOPS = new Uint8Array(256)
for (let byte = 0; byte < 0x20; byte += 1) STOPS[byte] = 1
STOPS[0x22] = 1
STOPS[0x5c] = 1
const HEX = new Uint8Array(256)
for (const character of '0123456789abcdefABCDEF') HEX[character.charCodeAt(0)] = 1
/** The characters that may follow a backslash, besides `u`. */
const ESCAPES = new Uint8Array(256)
for (const character of '"\\/bfnrt') ESCAPES[character.charCodeAt(0)] = 1

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09
const isDigit = (byte: number | undefined) => byte !== undefined && byte >= 0x30 && byte <= 0x39

/**
 * The index after the string whose body starts at `index` (just past its opening quote), or -1 when the
 * body breaks JSON's rules (a control character, a bad escape) or does not end.
 */
function skipString(bytes: Uint8Array, index: number): number {
  let at = index
  for (;;) {
    let byte = bytes[at] as number
    // Four at a time: most of a line's bytes are plain text inside strings.
    for (;;) {
      if (STOPS[byte] !== 0) break
      byte = bytes[at + 1] as number
      if (STOPS[byte] !== 0) {
        at += 1
        break
      }
      byte = bytes[at + 2] as number
      if (STOPS[byte] !== 0) {
        at += 2
        break
      }
      byte = bytes[at + 3] as number
      if (STOPS[byte] !== 0) {
        at += 3
        break
      }
      at += 4
      byte = bytes[at] as number
    }
    if (byte === QUOTE) return at + 1
    if (byte !== BACKSLASH) return -1
    byte = bytes[at + 1] as number
    if (byte === 0x75) {
      if (
        HEX[bytes[at + 2] as number] !== 1 ||
        HEX[bytes[at + 3] as number] !== 1 ||
        HEX[bytes[at + 4] as number] !== 1 ||
        HEX[bytes[at + 5] as number] !== 1
      )
        return -1
      at += 6
    } else if (ESCAPES[byte] === 1) at += 2
    else return -1
  }
}

/** The index after the number starting at `index`, by JSON's grammar (-1 when it is none). */
function skipNumber(bytes: Uint8Array, index: number): number {
  let at = index
  if (bytes[at] === 0x2d) at += 1
  if (bytes[at] === 0x30) at += 1
  else if (isDigit(bytes[at]) && bytes[at] !== 0x30) {
    do at += 1
    while (isDigit(bytes[at]))
  } else return -1
  if (bytes[at] === 0x2e) {
    at += 1
    if (!isDigit(bytes[at])) return -1
    do at += 1
    while (isDigit(bytes[at]))
  }
  if (bytes[at] === 0x65 || bytes[at] === 0x45) {
    at += 1
    if (bytes[at] === 0x2b || bytes[at] === 0x2d) at += 1
    if (!isDigit(bytes[at])) return -1
    do at += 1
    while (isDigit(bytes[at]))
  }
  return at
}

/** The index after `true`, `false` or `null` at `index` (-1 when none is there). */
function skipLiteral(bytes: Uint8Array, index: number): number {
  const first = bytes[index]
  if (first === 0x74)
    return bytes[index + 1] === 0x72 && bytes[index + 2] === 0x75 && bytes[index + 3] === 0x65
      ? index + 4
      : -1
  if (first === 0x66)
    return bytes[index + 1] === 0x61 &&
      bytes[index + 2] === 0x6c &&
      bytes[index + 3] === 0x73 &&
      bytes[index + 4] === 0x65
      ? index + 5
      : -1
  if (first === 0x6e)
    return bytes[index + 1] === 0x75 && bytes[index + 2] === 0x6c && bytes[index + 3] === 0x6c
      ? index + 4
      : -1
  return -1
}

/** Nesting this deep is left to `JSON.parse` (which has no such limit). */
const MAX_DEPTH = 512
/** Whether each open container is an object (1) or an array (2), innermost last. */
const open = new Uint8Array(MAX_DEPTH)

/** The index past the spaces at `index`. */
function skipSpaces(bytes: Uint8Array, index: number): number {
  let at = index
  while (isSpace(bytes[at])) at += 1
  return at
}

/**
 * The index after the JSON value at `index` (spaces before it skipped), checked all through, or -1 when
 * it is not valid JSON (or nests deeper than `MAX_DEPTH`). Walks without recursion: `open` holds the
 * containers around the current value.
 */
function skipValue(bytes: Uint8Array, index: number): number {
  let at = index
  let depth = 0
  for (;;) {
    // A value.
    at = skipSpaces(bytes, at)
    const first = bytes[at]
    if (first === QUOTE) at = skipString(bytes, at + 1)
    else if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
      at = skipSpaces(bytes, at + 1)
      if (bytes[at] === (first === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) at += 1
      else {
        if (depth === MAX_DEPTH) return -1
        open[depth] = first === OPEN_OBJECT ? 1 : 2
        depth += 1
        if (first === OPEN_OBJECT) {
          at = skipKey(bytes, at)
          if (at < 0) return -1
        }
        continue
      }
    } else if (first === 0x74 || first === 0x66 || first === 0x6e) at = skipLiteral(bytes, at)
    else at = skipNumber(bytes, at)
    if (at < 0) return -1
    // What follows it: a comma and the next value, or the end of containers.
    for (;;) {
      if (depth === 0) return at
      at = skipSpaces(bytes, at)
      const next = bytes[at]
      const inObject = open[depth - 1] === 1
      if (next === COMMA) {
        at += 1
        if (inObject) {
          at = skipKey(bytes, skipSpaces(bytes, at))
          if (at < 0) return -1
        }
        break
      }
      if (next !== (inObject ? CLOSE_OBJECT : CLOSE_ARRAY)) return -1
      at += 1
      depth -= 1
    }
  }
}

/** The index after `"key":` at `index` (spaces around the colon skipped), or -1. */
function skipKey(bytes: Uint8Array, index: number): number {
  if (bytes[index] !== QUOTE) return -1
  let at = skipString(bytes, index + 1)
  if (at < 0) return -1
  at = skipSpaces(bytes, at)
  return bytes[at] === COLON ? at + 1 : -1
}

/** Where the value `build` just built ends (so that it can return the value itself). */
let built = -1

/** The bytes of the line being picked, as a Buffer for decoding. */
let text: Buffer = Buffer.alloc(0)

/** The value at `index` built whole, as `JSON.parse` would; `built` is set to its end (-1: invalid). */
function buildWhole(bytes: Uint8Array, index: number): unknown {
  const start = skipSpaces(bytes, index)
  const end = skipValue(bytes, start)
  built = end
  if (end < 0) return undefined
  const first = bytes[start]
  if (first === QUOTE) {
    let escaped = false
    for (let at = start + 1; at < end - 1; at += 1)
      if (bytes[at] === BACKSLASH) {
        escaped = true
        break
      }
    // A string without escapes is its bytes between the quotes.
    return escaped ? JSON.parse(text.toString('utf8', start, end)) : text.toString('utf8', start + 1, end - 1)
  }
  if (first === 0x74) return true
  if (first === 0x66) return false
  if (first === 0x6e) return null
  return JSON.parse(
    text.toString(first === OPEN_OBJECT || first === OPEN_ARRAY ? 'utf8' : 'latin1', start, end),
  )
}

/**
 * The string whose opening quote is at `start`, as field `field` of `plan`; `built` is set to its end.
 * Plain ASCII (no escape) is compared with what the field held last and given again when the same.
 */
function buildString(bytes: Uint8Array, start: number, plan: FieldsPlan, field: number): unknown {
  let at = start + 1
  for (;;) {
    const byte = bytes[at] as number
    if (byte === QUOTE) break
    // An escape or a byte past ASCII: built as any value is.
    if (byte === BACKSLASH || byte >= 0x80) return buildWhole(bytes, start)
    // A control character, or the end of the line: not JSON.
    if (!(byte >= 0x20)) return invalid()
    at += 1
  }
  built = at + 1
  const last = plan.last[field]
  if (last !== undefined && last.length === at - start - 1) {
    let same = 0
    while (same < last.length && last.charCodeAt(same) === bytes[start + 1 + same]) same += 1
    if (same === last.length) return last
  }
  const value = text.toString('latin1', start + 1, at)
  plan.last[field] = value
  return value
}

/** The value at `index` built by `plan`; `built` is set to its end (-1: invalid). */
function build(bytes: Uint8Array, index: number, plan: Plan): unknown {
  if (plan === 'whole') return buildWhole(bytes, index)
  const start = skipSpaces(bytes, index)
  if (plan.kind === 'fields')
    return bytes[start] === OPEN_OBJECT ? buildFields(bytes, start, plan) : buildWhole(bytes, start)
  return bytes[start] === OPEN_ARRAY ? buildEach(bytes, start, plan.plan) : buildWhole(bytes, start)
}

/** The index in `plan` of the field whose name is the bytes between `start` and `end`, or -1. */
function fieldIndex(bytes: Uint8Array, start: number, end: number, plan: FieldsPlan): number {
  const candidates = plan.byLength[end - start]
  if (candidates === undefined) return -1
  for (const candidate of candidates) {
    const name = plan.bytes[candidate] as Uint8Array
    let at = 0
    while (at < name.length && name[at] === bytes[start + at]) at += 1
    if (at === name.length) return candidate
  }
  return -1
}

/** The object at `start` (its `{`) with only the fields `plan` names, each built by its own plan. */
function buildFields(bytes: Uint8Array, start: number, plan: FieldsPlan): unknown {
  const picked: Record<string, unknown> = {}
  let at = skipSpaces(bytes, start + 1)
  if (bytes[at] === CLOSE_OBJECT) {
    built = at + 1
    return picked
  }
  for (;;) {
    if (bytes[at] !== QUOTE) return invalid()
    const nameEnd = skipString(bytes, at + 1)
    if (nameEnd < 0) return invalid()
    let field = -1
    let escaped = false
    for (let index = at + 1; index < nameEnd - 1; index += 1)
      if (bytes[index] === BACKSLASH) {
        escaped = true
        break
      }
    if (escaped) field = plan.names.indexOf(JSON.parse(text.toString('utf8', at, nameEnd)))
    else field = fieldIndex(bytes, at + 1, nameEnd - 1, plan)
    at = skipSpaces(bytes, nameEnd)
    if (bytes[at] !== COLON) return invalid()
    at += 1
    if (field < 0) at = skipValue(bytes, at)
    else if (plan.plans[field] === 'whole' && bytes[skipSpaces(bytes, at)] === QUOTE) {
      picked[plan.names[field] as string] = buildString(bytes, skipSpaces(bytes, at), plan, field)
      at = built
    } else {
      // A name given twice keeps its last value, as JSON.parse keeps it.
      picked[plan.names[field] as string] = build(bytes, at, plan.plans[field] as Plan)
      at = built
    }
    if (at < 0) return invalid()
    at = skipSpaces(bytes, at)
    if (bytes[at] === COMMA) at = skipSpaces(bytes, at + 1)
    else if (bytes[at] === CLOSE_OBJECT) {
      built = at + 1
      return picked
    } else return invalid()
  }
}

/** The array at `start` (its `[`), each element built by `plan`. */
function buildEach(bytes: Uint8Array, start: number, plan: Plan): unknown {
  const elements: unknown[] = []
  let at = skipSpaces(bytes, start + 1)
  if (bytes[at] === CLOSE_ARRAY) {
    built = at + 1
    return elements
  }
  for (;;) {
    elements.push(build(bytes, at, plan))
    at = built
    if (at < 0) return invalid()
    at = skipSpaces(bytes, at)
    if (bytes[at] === COMMA) at += 1
    else if (bytes[at] === CLOSE_ARRAY) {
      built = at + 1
      return elements
    } else return invalid()
  }
}

function invalid(): undefined {
  built = -1
  return undefined
}

/**
 * The fields `picker` names of the JSON object that `line` holds (JSON spaces around it allowed), when
 * `line` is exactly one valid JSON object; undefined otherwise (the caller parses it whole to learn what
 * it is). `line` holds no line break but may be followed by one in the same buffer.
 */
export function pickJson(line: Buffer, picker: JsonPicker): Record<string, unknown> | undefined {
  const plan = picker.plan
  const start = skipSpaces(line, 0)
  if (line[start] !== OPEN_OBJECT || plan === 'whole' || plan.kind !== 'fields') return undefined
  text = line
  const value = buildFields(line, start, plan)
  text = EMPTY
  if (value === undefined || built < 0) return undefined
  // Only spaces may follow, up to the end of the line.
  let at = built
  while (at < line.length && isSpace(line[at])) at += 1
  return at === line.length ? (value as Record<string, unknown>) : undefined
}

const EMPTY = Buffer.alloc(0)
