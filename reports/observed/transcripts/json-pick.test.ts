import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type JsonPick, JsonPicker, pickJson } from './json-pick.ts'

/** What `pickJson` should build: the pick applied to what JSON.parse built. */
function project(value: unknown, pick: JsonPick): unknown {
  if (pick === 'whole') return value
  if ('each' in pick)
    return Array.isArray(value) ? value.map((element) => project(element, pick.each)) : value
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
  const picked: Record<string, unknown> = {}
  for (const [name, field] of Object.entries(pick.fields))
    if (Object.hasOwn(value, name)) picked[name] = project((value as Record<string, unknown>)[name], field)
  return picked
}

/** JSON.parse's verdict on the bytes as UTF-8: the object, or undefined for anything else. */
function parsed(bytes: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'))
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

const PICK: JsonPick = {
  fields: {
    type: 'whole',
    a: 'whole',
    é: 'whole',
    message: { fields: { id: 'whole', content: { each: { fields: { type: 'whole', name: 'whole' } } } } },
  },
}
const picker = new JsonPicker(PICK)

/** JSON values whose objects often use the pick's names. */
const names = fc.constantFrom('type', 'a', 'é', 'message', 'id', 'content', 'name', 'other', '__proto__')
const values = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(names, tie('value'), { maxKeys: 5 }),
  ),
}))
const objects = fc.dictionary(names, values.value, { maxKeys: 6 })

/** Texts close to JSON: a valid object with a few bytes put in, taken out or changed. */
const SIGNIFICANT = [
  '"',
  '\\',
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  ' ',
  '\t',
  '\u0001',
  'u',
  '0',
  '-',
  '.',
  'e',
  'é',
  '\u2028',
]
const nearJson = fc
  .tuple(
    objects,
    fc.array(fc.tuple(fc.nat(), fc.nat(2), fc.constantFrom(...SIGNIFICANT)), { minLength: 1, maxLength: 3 }),
  )
  .map(([object, edits]) => {
    let text = JSON.stringify(object)
    for (const [at, kind, character] of edits) {
      const index = at % (text.length + 1)
      if (kind === 0) text = text.slice(0, index) + character + text.slice(index)
      else if (kind === 1) text = text.slice(0, index) + text.slice(index + 1)
      else text = text.slice(0, index) + character + text.slice(index + 1)
    }
    return text
  })

describe('pickJson', () => {
  it('builds the named fields as JSON.parse builds them, and only those', () => {
    const line = Buffer.from(
      JSON.stringify({
        type: 'user',
        toolUseResult: { stdout: 'x'.repeat(1000) },
        message: { id: 'm1', role: 'user', content: [{ type: 'tool_result', content: 'y' }, 'z'] },
      }),
    )
    expect(pickJson(line, picker)).toEqual({
      type: 'user',
      message: { id: 'm1', content: [{ type: 'tool_result' }, 'z'] },
    })
  })

  it('builds a value of another kind than the pick expects whole', () => {
    const line = Buffer.from('{"message":{"content":"typed by the user"},"a":[1,{"b":2}]}')
    expect(pickJson(line, picker)).toEqual({ message: { content: 'typed by the user' }, a: [1, { b: 2 }] })
  })

  it('keeps the last of a name given twice, and reads escaped names and strings', () => {
    const line = Buffer.from('{"type":"a","\\u0074ype":"b\\n\\u00e9","\\u00e9":1,"é":2}')
    expect(pickJson(line, picker)).toEqual({ type: 'b\né', é: 2 })
  })

  it('gives a field the same string again when its line holds the same plain text as the last', () => {
    const own = new JsonPicker({ fields: { type: 'whole' } })
    const first = pickJson(Buffer.from('{"type":"assistant"}'), own)
    const again = pickJson(Buffer.from('{"type": "assistant" }'), own)
    const other = pickJson(Buffer.from('{"type":"assistanT"}'), own)
    const longer = pickJson(Buffer.from('{"type":"assistants"}'), own)
    const escaped = pickJson(Buffer.from('{"type":"assist\\u0061nt"}'), own)
    expect([first?.type, again?.type, other?.type, longer?.type, escaped?.type]).toEqual([
      'assistant',
      'assistant',
      'assistanT',
      'assistants',
      'assistant',
    ])
  })

  it('leaves to JSON.parse every line that is not one valid JSON object', () => {
    for (const text of [
      '',
      '   ',
      '[1]',
      '"text"',
      '{"a":1}{"a":2}',
      '{"a":1',
      '{"a":"x\ty"}',
      '{"a":01}',
      '{"a":1.}',
      '{"a":"\\x"}',
      '{"a":"\\u12"}',
      '{"a":tru}',
      '{"a":1,}',
      '{,"a":1}',
      '\uFEFF{"a":1}',
      `{"a":${'['.repeat(600)}${']'.repeat(600)}}`,
    ])
      expect(pickJson(Buffer.from(text), picker), text).toBeUndefined()
  })

  it('accepts spaces around the object and inside it', () => {
    expect(pickJson(Buffer.from(' \t{ "a" : [ 1 , 2 ] , "b" : { } }\t '), picker)).toEqual({ a: [1, 2] })
  })

  it('stops at the end of the line though bytes follow it in the same buffer', () => {
    const buffer = Buffer.from('{"a":"open\n{"a":"x"}')
    expect(pickJson(buffer.subarray(0, 10), picker)).toBeUndefined()
    expect(pickJson(Buffer.from('{"a":1}\n').subarray(0, 7), picker)).toEqual({ a: 1 })
  })

  it('gives for any JSON object what JSON.parse gives, projected', () => {
    fc.assert(
      fc.property(objects, fc.constantFrom('', ' ', '\t'), (object, space) => {
        const line = Buffer.from(`${space}${JSON.stringify(object, null, space === '' ? undefined : space)}`)
        expect(pickJson(line, picker)).toEqual(project(JSON.parse(line.toString()), PICK))
      }),
      { numRuns: 500 },
    )
  })

  it('accepts a text exactly when JSON.parse reads it as an object', () => {
    fc.assert(
      fc.property(nearJson, (text) => {
        const line = Buffer.from(text)
        const whole = parsed(line)
        const picked = pickJson(line, picker)
        if (whole === undefined) expect(picked).toBeUndefined()
        // A valid object may still be left to JSON.parse (deep nesting), never the other way round.
        else if (picked !== undefined) expect(picked).toEqual(project(whole, PICK))
      }),
      { numRuns: 2000 },
    )
  })

  it('decides on raw bytes, invalid UTF-8 included, as JSON.parse decides on their decoding', () => {
    const byte = fc.constantFrom(
      0x22,
      0x5c,
      0x7b,
      0x7d,
      0x3a,
      0x2c,
      0x61,
      0x20,
      0x00,
      0x1f,
      0x80,
      0xc3,
      0xa9,
      0xff,
      0xe2,
    )
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 12 }), (middle) => {
        const line = Buffer.concat([Buffer.from('{"a":"'), Buffer.from(middle), Buffer.from('"}')])
        const whole = parsed(line)
        const picked = pickJson(line, picker)
        if (whole === undefined) expect(picked).toBeUndefined()
        else expect(picked).toEqual(project(whole, PICK))
      }),
      { numRuns: 2000 },
    )
  })

  it('reads numbers by JSON grammar', () => {
    const number = fc.stringMatching(/^-?(0|[1-9][0-9]{0,3}|0[0-9])(\.[0-9]{0,2})?([eE][+-]?[0-9]{0,2})?$/)
    fc.assert(
      fc.property(number, (text) => {
        const line = Buffer.from(`{"a":${text}}`)
        const whole = parsed(line)
        expect(pickJson(line, picker)).toEqual(whole === undefined ? undefined : project(whole, PICK))
      }),
      { numRuns: 1000 },
    )
  })
})
