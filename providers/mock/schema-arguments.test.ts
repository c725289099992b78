import ajvModule from 'ajv/dist/2020.js'
import { describe, expect, it } from 'vitest'
import { exampleArguments, exampleJson, exampleValue } from './schema-arguments.ts'

// A real JSON Schema validator (2020-12), so "valid" means what a client's own validation means. Agents'
// schemas carry keywords of their own (`encrypted`), and formats are not what these tests check.
const ajv = new ajvModule.default({ strict: false, validateFormats: false })

/** The validator's complaints about a value, none when the schema accepts it. */
function problems(schema: object, value: unknown): string[] {
  const validate = ajv.compile(schema)
  return validate(value)
    ? []
    : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`)
}

/** The input schemas of real agents' tools (descriptions left out), as they declare them. */
const AGENT_TOOLS: Record<string, object> = {
  'Claude Code Read': {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: {
      file_path: { type: 'string' },
      offset: { type: 'integer', minimum: 0, maximum: 9007199254740991 },
      limit: { type: 'integer', exclusiveMinimum: 0, maximum: 9007199254740991 },
      pages: { type: 'string' },
    },
    required: ['file_path'],
    additionalProperties: false,
  },
  'Claude Code Bash': {
    type: 'object',
    properties: {
      command: { type: 'string' },
      timeout: { type: 'number' },
      run_in_background: { type: 'boolean' },
    },
    required: ['command'],
    additionalProperties: false,
  },
  'Claude Code Agent': {
    type: 'object',
    properties: {
      description: { type: 'string' },
      prompt: { type: 'string' },
      subagent_type: { type: 'string' },
      model: { type: 'string', enum: ['sonnet', 'opus', 'haiku'] },
      run_in_background: { type: 'boolean' },
    },
    required: ['description', 'prompt'],
    additionalProperties: false,
  },
  'Claude Code Workflow (no required properties, one with a pattern)': {
    type: 'object',
    properties: {
      script: { type: 'string', maxLength: 524288 },
      name: { type: 'string' },
      args: {},
      resumeFromRunId: { type: 'string', pattern: '^wf_[a-z0-9-]{6,}$' },
    },
    additionalProperties: false,
  },
  'Claude Code ReportFindings': {
    type: 'object',
    properties: {
      findings: {
        maxItems: 32,
        type: 'array',
        items: {
          type: 'object',
          properties: {
            file: { type: 'string' },
            line: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
            summary: { type: 'string' },
            short_summary: { type: 'string', maxLength: 60 },
            severity: { type: 'string', enum: ['important', 'pre_existing', 'nit'] },
          },
          required: ['file', 'summary'],
          additionalProperties: false,
        },
      },
    },
    required: ['findings'],
    additionalProperties: false,
  },
  'Codex shell': {
    type: 'object',
    properties: {
      command: { type: 'array', items: { type: 'string' } },
      workdir: { type: 'string' },
      timeout_ms: { type: 'number' },
    },
    required: ['command'],
    additionalProperties: false,
  },
  'Codex exec_command': {
    type: 'object',
    properties: {
      cmd: { type: 'string' },
      sandbox_permissions: { type: 'string', enum: ['use_default', 'require_escalated'] },
      yield_time_ms: { type: 'number' },
    },
    required: ['cmd'],
    additionalProperties: false,
  },
  'Codex apply_patch (function form)': {
    type: 'object',
    properties: { input: { type: 'string' } },
    required: ['input'],
    additionalProperties: false,
  },
  'Codex request_user_input_async': {
    type: 'object',
    properties: {
      questions: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          properties: {
            options: { type: 'array', items: { type: 'string' }, minItems: 1 },
            title: { type: 'string' },
          },
          required: ['title'],
          additionalProperties: false,
        },
      },
    },
    required: ['questions'],
    additionalProperties: false,
  },
  'Codex spawn_agent': {
    type: 'object',
    properties: {
      task_name: { type: 'string' },
      message: { type: 'string', encrypted: true },
      fork_turns: { type: 'string' },
    },
    required: ['task_name', 'message'],
    additionalProperties: false,
  },
  'Gemini CLI read_file': {
    type: 'object',
    properties: {
      file_path: { type: 'string' },
      start_line: { type: 'integer', minimum: 1 },
      end_line: { type: 'integer', minimum: 1 },
    },
    required: ['file_path'],
  },
}

describe('arguments made up from a tool schema', () => {
  it.each(Object.entries(AGENT_TOOLS))('are valid against %s', (_name, schema) => {
    expect(problems(schema, JSON.parse(exampleArguments(schema)))).toEqual([])
  })

  it('fill the required properties, each with a value of its type', () => {
    const schema = {
      type: 'object',
      properties: {
        query: { type: 'string' },
        limit: { type: 'integer', minimum: 5 },
        recursive: { type: 'boolean' },
        note: { type: 'string' },
      },
      required: ['query', 'limit', 'recursive'],
    }
    expect(JSON.parse(exampleArguments(schema))).toEqual({
      query: 'example query',
      limit: 5,
      recursive: false,
    })
  })

  it('point a path property at README.md, a relative path most workspaces have', () => {
    expect(JSON.parse(exampleArguments(AGENT_TOOLS['Claude Code Read']))).toEqual({ file_path: 'README.md' })
    expect(exampleValue({ type: 'string' }, undefined, 'path')).toBe('README.md')
    expect(exampleValue({ type: 'string' }, undefined, 'pathname')).toBe('example pathname')
  })

  it('fill every property when the schema names none required, but one whose string has a pattern', () => {
    const schema = { type: 'object', properties: { query: { type: 'string' }, page: { type: 'number' } } }
    expect(JSON.parse(exampleArguments(schema))).toEqual({ query: 'example query', page: 1 })
    expect(
      Object.keys(
        JSON.parse(
          exampleArguments(
            AGENT_TOOLS['Claude Code Workflow (no required properties, one with a pattern)'] ?? {},
          ),
        ),
      ),
    ).not.toContain('resumeFromRunId')
  })

  it('take a const, a default, an example or the first enum value before making one up', () => {
    expect(exampleValue({ type: 'string', enum: ['fast', 'slow'] })).toBe('fast')
    expect(exampleValue({ type: 'integer', default: 7 })).toBe(7)
    expect(exampleValue({ type: 'string', examples: ['src/index.ts'] })).toBe('src/index.ts')
    expect(exampleValue({ type: 'string', example: 'openapi' })).toBe('openapi')
    expect(exampleValue({ const: 'v1' })).toBe('v1')
  })

  it('keep numbers within exclusive bounds and on their multiple', () => {
    expect(exampleValue({ type: 'integer', exclusiveMinimum: 0 })).toBe(1)
    expect(exampleValue({ type: 'integer', minimum: 3, exclusiveMinimum: true })).toBe(4)
    expect(exampleValue({ type: 'number', exclusiveMaximum: 1, minimum: 0 })).toBe(0)
    expect(exampleValue({ type: 'integer', minimum: 7, multipleOf: 5 })).toBe(10)
    const bounded = { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 }
    expect(problems(bounded, exampleValue(bounded))).toEqual([])
  })

  it('follow nested objects, arrays, unions and local references', () => {
    const schema = {
      type: 'object',
      $defs: { range: { type: 'object', properties: { start: { type: 'integer' } }, required: ['start'] } },
      properties: {
        edits: { type: 'array', minItems: 2, items: { $ref: '#/$defs/range' } },
        mode: { anyOf: [{ type: 'null' }, { type: 'string', format: 'date' }] },
        kind: { oneOf: [{ const: 'a' }, { const: 'b' }] },
        label: { type: ['null', 'string'], minLength: 16 },
        none: { type: 'array', items: { type: 'string' }, maxItems: 0 },
      },
      required: ['edits', 'mode', 'kind', 'label', 'none'],
    }
    const value = JSON.parse(exampleArguments(schema))
    expect(value).toEqual({
      edits: [{ start: 1 }, { start: 1 }],
      mode: '2026-01-01',
      kind: 'a',
      label: 'example labelxxx',
      none: [],
    })
    expect(problems(schema, value)).toEqual([])
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

/** A Gemini OpenAPI-style schema with its upper-case types in JSON Schema's lower case, to validate against. */
function lowerTypes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(lowerTypes)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value).map(([key, entry]) => [
      key,
      key === 'type' && typeof entry === 'string' ? entry.toLowerCase() : lowerTypes(entry),
    ]),
  )
}

describe('the JSON text of a structured-output answer', () => {
  it("parses as Gemini CLI's router expects: a reasoning and one of its model choices", () => {
    const router = {
      type: 'object',
      properties: {
        reasoning: { type: 'string' },
        model_choice: { type: 'string', enum: ['flash', 'pro'] },
      },
      required: ['reasoning', 'model_choice'],
    }
    const value = JSON.parse(exampleJson(router))
    expect(value).toEqual({ reasoning: 'example reasoning', model_choice: 'flash' })
    expect(problems(router, value)).toEqual([])
  })

  it('reads OpenAPI-style upper-case types (Gemini responseSchema)', () => {
    const schema = {
      type: 'OBJECT',
      properties: {
        next_speaker: { type: 'STRING', enum: ['user', 'model'] },
        count: { type: 'INTEGER' },
        tags: { type: 'ARRAY', items: { type: 'STRING' } },
        nested: { type: 'OBJECT', properties: { ok: { type: 'BOOLEAN' } }, required: ['ok'] },
      },
      required: ['next_speaker', 'count', 'tags', 'nested'],
    }
    const value = JSON.parse(exampleJson(schema))
    expect(value).toEqual({ next_speaker: 'user', count: 1, tags: ['example tags'], nested: { ok: false } })
    expect(problems(lowerTypes(schema) as object, value)).toEqual([])
  })

  it('is {} for any JSON object, and a plain value for a schema of one', () => {
    expect(exampleJson(undefined)).toBe('{}')
    expect(exampleJson({ type: 'string', enum: ['yes', 'no'] })).toBe('"yes"')
    expect(exampleJson({ type: 'array', prefixItems: [{ type: 'integer' }, { type: 'string' }] })).toBe(
      '[1,"example value"]',
    )
  })
})
