// Arguments for a tool call made up from the tool's JSON schema, the same every time: the first of what
// the schema allows (a const, a default, an example, an enum's first value), else a plain value of the
// type within its bounds. Enough for a client to parse and validate the call; not meant to be clever.

type Schema = Record<string, unknown>

/** Schemas nested deeper than this become `null` (recursive `$ref`s end here). */
const MAX_DEPTH = 8

const asRecord = (value: unknown): Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Schema) : {}

/** A value the schema accepts, deterministic; `name` is the property it fills (it seeds plain strings). */
export function exampleValue(schema: unknown, root: unknown = schema, name = 'value', depth = 0): unknown {
  const record = resolve(asRecord(schema), asRecord(root))
  if (depth > MAX_DEPTH) return null
  if ('const' in record) return record.const
  if ('default' in record) return record.default
  if (Array.isArray(record.examples) && record.examples.length > 0) return record.examples[0]
  if (Array.isArray(record.enum) && record.enum.length > 0) return record.enum[0]
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = record[key]
    if (Array.isArray(options) && options.length > 0) {
      const chosen = options.find((option) => asRecord(option).type !== 'null') ?? options[0]
      return exampleValue(chosen, root, name, depth + 1)
    }
  }
  if (Array.isArray(record.allOf)) {
    const merged: Schema = { type: 'object' }
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
      const count = typeof record.minItems === 'number' ? Math.max(record.minItems, 1) : 1
      return Array.from({ length: count }, () => exampleValue(record.items, root, name, depth + 1))
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

type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null'

function typeOf(schema: Schema): JsonType {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
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

/** Required properties only, or every property when the schema names none required. */
function exampleObject(schema: Schema, root: unknown, depth: number): Record<string, unknown> {
  const properties = asRecord(schema.properties)
  const required = Array.isArray(schema.required) ? schema.required.map(String) : Object.keys(properties)
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
  let text = `example ${name}`
  if (typeof schema.minLength === 'number') text = text.padEnd(schema.minLength, 'x')
  if (typeof schema.maxLength === 'number') text = text.slice(0, schema.maxLength)
  return text
}

function exampleNumber(schema: Schema, integer: boolean): number {
  const minimum = typeof schema.minimum === 'number' ? schema.minimum : undefined
  const exclusive = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : undefined
  const maximum = typeof schema.maximum === 'number' ? schema.maximum : undefined
  let value = minimum ?? (exclusive !== undefined ? exclusive + 1 : 1)
  if (maximum !== undefined) value = Math.min(value, maximum)
  return integer ? Math.ceil(value) : value
}

/** A local `$ref` (`#/$defs/x`, `#/definitions/x`) resolved against the root schema; others stay. */
function resolve(schema: Schema, root: Schema): Schema {
  const ref = schema.$ref
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema
  let target: unknown = root
  for (const part of ref.slice(2).split('/'))
    target = asRecord(target)[part.replace(/~1/g, '/').replace(/~0/g, '~')]
  return {
    ...asRecord(target),
    ...Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$ref')),
  }
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}
