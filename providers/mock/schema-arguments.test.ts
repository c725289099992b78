import { describe, expect, it } from 'vitest'
import { exampleArguments, exampleValue } from './schema-arguments.ts'

describe('arguments made up from a tool schema', () => {
  it('fill the required properties, each with a value of its type', () => {
    const schema = {
      type: 'object',
      properties: {
        path: { type: 'string' },
        limit: { type: 'integer', minimum: 5 },
        recursive: { type: 'boolean' },
        note: { type: 'string' },
      },
      required: ['path', 'limit', 'recursive'],
    }
    expect(JSON.parse(exampleArguments(schema))).toEqual({ path: 'example path', limit: 5, recursive: false })
  })

  it('fill every property when the schema names none required', () => {
    const schema = { type: 'object', properties: { query: { type: 'string' }, page: { type: 'number' } } }
    expect(JSON.parse(exampleArguments(schema))).toEqual({ query: 'example query', page: 1 })
  })

  it('take a const, a default, an example or the first enum value before making one up', () => {
    expect(exampleValue({ type: 'string', enum: ['fast', 'slow'] })).toBe('fast')
    expect(exampleValue({ type: 'integer', default: 7 })).toBe(7)
    expect(exampleValue({ type: 'string', examples: ['src/index.ts'] })).toBe('src/index.ts')
    expect(exampleValue({ const: 'v1' })).toBe('v1')
  })

  it('follow nested objects, arrays, unions and local references', () => {
    const schema = {
      type: 'object',
      $defs: { range: { type: 'object', properties: { start: { type: 'integer' } }, required: ['start'] } },
      properties: {
        edits: { type: 'array', minItems: 2, items: { $ref: '#/$defs/range' } },
        mode: { anyOf: [{ type: 'null' }, { type: 'string', format: 'date' }] },
      },
      required: ['edits', 'mode'],
    }
    expect(JSON.parse(exampleArguments(schema))).toEqual({
      edits: [{ start: 1 }, { start: 1 }],
      mode: '2026-01-01',
    })
  })

  it('end a recursive schema instead of looping', () => {
    const schema = {
      type: 'object',
      $defs: {
        node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } }, required: ['child'] },
      },
      properties: { root: { $ref: '#/$defs/node' } },
      required: ['root'],
    }
    expect(() => exampleArguments(schema)).not.toThrow()
  })

  it('are an empty object for a tool without parameters, and the same every time', () => {
    expect(exampleArguments(undefined)).toBe('{}')
    const schema = { type: 'object', properties: { a: { type: 'string' } } }
    expect(exampleArguments(schema)).toBe(exampleArguments(schema))
  })
})
