// What a field's JSON value is, in the words each API's type errors use, and the checks every API's field
// rules share (an integer in a range, a number in a range). The rules themselves, with their wordings,
// live in the API's own file.

/** The JSON kind of a value as a schema validator tells them apart (an integer is a number without a fraction). */
export type JsonKind = 'string' | 'integer' | 'decimal' | 'boolean' | 'array' | 'object' | 'null'

export function jsonKind(value: unknown): JsonKind {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return 'array'
  switch (typeof value) {
    case 'string':
      return 'string'
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'decimal'
    case 'boolean':
      return 'boolean'
    default:
      return 'object'
  }
}

/** A kind with its article, as OpenAI's messages name it ("an integer", "a string"). */
export function withArticle(kind: JsonKind): string {
  return kind === 'null' ? 'null' : `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`
}

/** The largest signed 32-bit integer: the bound of an `int32` proto field and of OpenAI's integer fields. */
export const INT32_MAX = 2_147_483_647

/** A set field that is a number (finite: JSON has no infinities). */
export const isNumber = (value: unknown): value is number => typeof value === 'number'

/** A set field that is an integer and a safe one (1e308 is an integer to JavaScript, not to any API). */
export const isInteger = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value)
