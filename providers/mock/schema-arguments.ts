// Values made up from a JSON schema, the same every time: tool-call arguments, and the JSON text of a
// structured-output answer. The first of what the schema allows (a const, a default, an example, an
// enum's first value), else a plain value of the type within its bounds; a path property gets a
// relative path. Enough for a client to parse and validate; not meant to be clever (a `pattern` is not
// followed: an optional property that has one is left out).

import { asRecord } from '../../harness/json-fields.ts'

type Schema = Record<string, unknown>

/** Schemas nested deeper than this become `null` (recursive `$ref`s end here). */
const MAX_DEPTH = 8

/** Properties that name a file: they get `README.md`, a file most workspaces have. */
const PATH_PROPERTY = /^(file_?path|path|filePath|absolute_path|file|filename)$/i
const PATH_VALUE = 'README.md'

/** A value the schema accepts, deterministic; `name` is the property it fills (it seeds plain strings). */
export function exampleValue(schema: unknown, root: unknown = schema, name = 'value', depth = 0): unknown {
  const record = resolve(asRecord(schema), asRecord(root))
  if (depth > MAX_DEPTH) return null
  if ('const' in record) return record.const
  if ('default' in record) return record.default
  if (Array.isArray(record.examples) && record.examples.length > 0) return record.examples[0]
  // OpenAPI's single `example` (Gemini's `responseSchema` is OpenAPI-style).
  if ('example' in record && record.example !== undefined) return record.example
  if (Array.isArray(record.enum) && record.enum.length > 0) return record.enum[0]
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = record[key]
    if (Array.isArray(options) && options.length > 0) {
      const chosen = options.find((option) => typeOf(asRecord(option)) !== 'null') ?? options[0]
      const { [key]: _options, ...rest } = record
      return exampleValue({ ...rest, ...asRecord(chosen) }, root, name, depth + 1)
    }
  }
  if (Array.isArray(record.allOf)) {
    const merged: Schema = {}
    const properties: Schema = { ...asRecord(record.properties) }
    const required: unknown[] = [...asArray(record.required)]
    for (const part of record.allOf) {
      const resolved = resolve(asRecord(part), asRecord(root))
      Object.assign(merged, resolved)
      Object.assign(properties, asRecord(resolved.properties))
      required.push(...asArray(resolved.required))
    }
    const { allOf: _parts, ...rest } = { ...record, ...merged }
    return exampleValue(
      { ...rest, properties, ...(required.length > 0 ? { required } : {}) },
      root,
      name,
      depth + 1,
    )
  }
  switch (typeOf(record)) {
    case 'object':
      return exampleObject(record, root, depth)
    case 'array': {
      const minimum = typeof record.minItems === 'number' ? record.minItems : 1
      const maximum = typeof record.maxItems === 'number' ? record.maxItems : Number.POSITIVE_INFINITY
      const count = Math.min(Math.max(minimum, 1), maximum)
      // Tuples (`prefixItems`) fill their positions, then `items`.
      const prefix = asArray(record.prefixItems)
      return Array.from({ length: Math.max(count, Math.min(prefix.length, maximum)) }, (_, index) =>
        exampleValue(index < prefix.length ? prefix[index] : record.items, root, name, depth + 1),
      )
    }
    case 'string':
      return exampleString(record, name)
    case 'integer':
      return exampleNumber(record, true)
    case 'number':
      return exampleNumber(record, false)
    case 'boolean':
      return false
    case 'null':
      return null
  }
}

/** The arguments of a call to a tool with this parameters schema, as the JSON text a model would write. */
export function exampleArguments(schema: unknown): string {
  const value = schema === undefined ? {} : exampleValue(schema)
  return JSON.stringify(typeof value === 'object' && value !== null ? value : {})
}

/** The JSON text of a structured-output answer: a value of the schema, or `{}` when none is given. */
export function exampleJson(schema: unknown): string {
  return JSON.stringify(schema === undefined ? {} : exampleValue(schema))
}

type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null'

/** The schema's type: the first that is not `null` of a list; any case (OpenAPI's `OBJECT`, `STRING`). */
function typeOf(schema: Schema): JsonType {
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).map((value) =>
    typeof value === 'string' ? value.toLowerCase() : value,
  )
  const type = types.find((value) => typeof value === 'string' && value !== 'null') ?? types[0]
  switch (type) {
    case 'object':
    case 'array':
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean':
    case 'null':
      return type
    default:
      return schema.properties !== undefined ? 'object' : schema.items !== undefined ? 'array' : 'string'
  }
}

/**
 * Required properties only, or, when the schema names none required, every property but those whose
 * string must match a `pattern` (a made-up value would not).
 */
function exampleObject(schema: Schema, root: unknown, depth: number): Record<string, unknown> {
  const properties = asRecord(schema.properties)
  const required = Array.isArray(schema.required)
    ? schema.required.map(String)
    : Object.keys(properties).filter(
        (key) => !('pattern' in resolve(asRecord(properties[key]), asRecord(root))),
      )
  const value: Record<string, unknown> = {}
  for (const key of required) value[key] = exampleValue(properties[key] ?? {}, root, key, depth + 1)
  return value
}

function exampleString(schema: Schema, name: string): string {
  switch (schema.format) {
    case 'date-time':
      return '2026-01-01T00:00:00Z'
    case 'date':
      return '2026-01-01'
    case 'time':
      return '00:00:00Z'
    case 'email':
      return 'user@example.com'
    case 'uri':
    case 'url':
      return 'https://example.com/'
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000'
  }
  let text = PATH_PROPERTY.test(name) ? PATH_VALUE : `example ${name}`
  if (typeof schema.minLength === 'number') text = text.padEnd(schema.minLength, 'x')
  if (typeof schema.maxLength === 'number') text = text.slice(0, schema.maxLength)
  return text
}

/**
 * The lowest number the bounds allow (1 when unbounded below), a multiple of `multipleOf` when one is
 * set; `exclusiveMinimum` as a number (2020-12) or as draft 4's flag on `minimum`.
 */
function exampleNumber(schema: Schema, integer: boolean): number {
  const number = (value: unknown) => (typeof value === 'number' ? value : undefined)
  const minimum = number(schema.minimum)
  const maximum = number(schema.maximum)
  const above = number(schema.exclusiveMinimum) ?? (schema.exclusiveMinimum === true ? minimum : undefined)
  const below = number(schema.exclusiveMaximum) ?? (schema.exclusiveMaximum === true ? maximum : undefined)
  const step = number(schema.multipleOf)
  let value = above !== undefined ? above + 1 : (minimum ?? 1)
  if (maximum !== undefined) value = Math.min(value, maximum)
  if (below !== undefined && value >= below)
    value = integer ? below - 1 : ((above ?? minimum ?? below - 2) + below) / 2
  if (integer) value = Math.ceil(value)
  if (step !== undefined && step > 0) value = Math.ceil(value / step) * step
  return value
}

/** A local `$ref` (`#/$defs/x`, `#/definitions/x`, `#`) resolved against the root schema; others stay. */
function resolve(schema: Schema, root: Schema): Schema {
  const ref = schema.$ref
  if (typeof ref !== 'string' || !(ref === '#' || ref.startsWith('#/'))) return schema
  let target: unknown = root
  for (const part of ref.slice(2).split('/').filter(Boolean))
    target = asRecord(target)[part.replace(/~1/g, '/').replace(/~0/g, '~')]
  return {
    ...asRecord(target),
    ...Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$ref')),
  }
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}
