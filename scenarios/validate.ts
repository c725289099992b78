// Validation of scenarios from users' files: every field of the `Scenario` schema checked against a shape
// declared beside its type, so a typo or a wrong value is one line naming the field, never a crash mid-run.

import type {
  ImageOffloadPolicy,
  Policies,
  SeriesStartPolicy,
  SystemPromptPolicy,
} from '../harness/policies.ts'
import type { Arrival, Pace, ScriptAction, StepScript, TextSpec, ToolCallScript } from '../harness/script.ts'
import type {
  CallConfig,
  Fault,
  ImageBlock,
  ProviderId,
  PruneKeep,
  Route,
  TextBlock,
  ToolSchema,
} from '../harness/types.ts'
import type {
  AnthropicCacheRules,
  DeepSeekCacheRules,
  GeminiCacheRules,
  OpenAIBreakpointRules,
  OpenAIPrefixRules,
} from '../providers/catalog.ts'
import type { BreakpointStrategy, BuildOptions } from '../providers/types.ts'
import type { Claim, Scenario, Variant } from './types.ts'

/** One thing wrong with a value: where (`variants[1].policies.route`) and what. */
export interface Problem {
  path: string
  message: string
}

/** What a value must look like. Built with the helpers below, which tie each shape to its TypeScript type. */
export type Shape =
  | { kind: 'string'; nonEmpty?: true; pattern?: { regex: RegExp; says: string } }
  | { kind: 'number'; integer?: true; min?: number; max?: number }
  | { kind: 'boolean' }
  /** Only `true` (flags such as `isError?: true`). */
  | { kind: 'true' }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'array'; of: Shape; nonEmpty?: true }
  /** A plain object with exactly these fields; any other field is a problem (it is most likely a typo). */
  | { kind: 'object'; fields: Readonly<Record<string, Field>> }
  /** Objects told apart by a tag field (`kind`, `type`), each case with its own fields. */
  | { kind: 'union'; tag: string; cases: Readonly<Record<string, Readonly<Record<string, Field>>>> }
  /** One shape per kind of JavaScript value: `says` names what is accepted when none fits. */
  | { kind: 'either'; string?: Shape; number?: Shape; object?: Shape; array?: Shape; says: string }
  /** Any JSON object (tool parameters, call arguments). */
  | { kind: 'json-object' }
  | { kind: 'function' }
  /** A shape defined later: for recursive vocabularies (a followup arrival carries its own steps). */
  | { kind: 'lazy'; shape: () => Shape }

/** A field of an object shape. */
export interface Field {
  shape: Shape
  optional?: true
}

interface RequiredField extends Field {
  optional?: never
}

interface OptionalField extends Field {
  optional: true
}

/** A field shape for every key of `T`, optional exactly where `T`'s key is: a missing or extra key is a compile error. */
type Fields<T> = { [K in keyof T]-?: Record<never, never> extends Pick<T, K> ? OptionalField : RequiredField }

/** The cases of a union tagged by `Tag`, each with fields for everything but the tag. */
type Cases<U, Tag extends keyof U> = {
  [K in U[Tag] & string]: Fields<Omit<Extract<U, Record<Tag, K>>, Tag>>
}

const required = (shape: Shape): RequiredField => ({ shape })
const optional = (shape: Shape): OptionalField => ({ shape, optional: true })
const object = <T>(fields: Fields<T>): Shape => ({ kind: 'object', fields })
const union = <U, Tag extends keyof U & string>(tag: Tag, cases: Cases<U, Tag>): Shape => ({
  kind: 'union',
  tag,
  cases,
})
const arrayOf = (of: Shape, nonEmpty?: 'non-empty'): Shape =>
  nonEmpty === undefined ? { kind: 'array', of } : { kind: 'array', of, nonEmpty: true }
/** Every value of a string union, listed as object keys so that a value added to the type is a compile error here. */
const oneOf = <T extends string>(values: Record<T, true>): Shape => ({
  kind: 'enum',
  values: Object.keys(values),
})

const STRING: Shape = { kind: 'string' }
const TEXT: Shape = { kind: 'string', nonEmpty: true }
const BOOLEAN: Shape = { kind: 'boolean' }
const TRUE: Shape = { kind: 'true' }
const COUNT: Shape = { kind: 'number', integer: true, min: 0 }
const POSITIVE_COUNT: Shape = { kind: 'number', integer: true, min: 1 }
const SECONDS: Shape = { kind: 'number', min: 0 }
const JSON_OBJECT: Shape = { kind: 'json-object' }
const FUNCTION: Shape = { kind: 'function' }

/** Scenario and variant names become file names (`<scenario>.<variant>.<provider>.jsonl`) and CSV cells. */
const NAME: Shape = {
  kind: 'string',
  pattern: {
    regex: /^[A-Za-z0-9][A-Za-z0-9_-]*$/,
    says: 'letters, digits, - and _, starting with a letter or digit',
  },
}

/** The providers' own rule for tool names. */
const TOOL_NAME: Shape = {
  kind: 'string',
  pattern: {
    regex: /^[A-Za-z0-9_-]{1,64}$/,
    says: 'at most 64 letters, digits, - and _ (the providers refuse others)',
  },
}

const PROVIDER = oneOf<ProviderId>({
  anthropic: true,
  'openai-chat': true,
  'openai-responses': true,
  deepseek: true,
  bedrock: true,
  gemini: true,
})

const TEXT_SPEC: Shape = {
  kind: 'either',
  string: STRING,
  object: object<Exclude<TextSpec, string>>({ tokens: required(COUNT), seed: optional(STRING) }),
  says: 'text, or { tokens: N } for N tokens of filler',
}

const TOOL: Shape = object<ToolSchema>({
  name: required(TOOL_NAME),
  description: required(STRING),
  parameters: required(JSON_OBJECT),
  deferLoading: optional(TRUE),
})

const CONTENT_BLOCK: Shape = union<TextBlock | ImageBlock, 'type'>('type', {
  text: { text: required(STRING) },
  image: {
    id: required(TEXT),
    mediaType: required(oneOf<ImageBlock['mediaType']>({ 'image/png': true, 'image/jpeg': true })),
    data: required(TEXT),
    width: required(POSITIVE_COUNT),
    height: required(POSITIVE_COUNT),
  },
})

const TOOL_CALL: Shape = object<ToolCallScript>({
  name: required(TOOL_NAME),
  arguments: required(JSON_OBJECT),
  result: required(TEXT_SPEC),
  isError: optional(TRUE),
})

const STEP: Shape = object<StepScript>({
  text: optional(TEXT_SPEC),
  toolCalls: optional(arrayOf(TOOL_CALL)),
  cancel: optional(TRUE),
  arrivals: optional(arrayOf({ kind: 'lazy', shape: () => ARRIVAL })),
})

const ARRIVAL: Shape = union<Arrival, 'delivery'>('delivery', {
  steer: { text: required(TEXT_SPEC) },
  followup: { text: required(TEXT_SPEC), steps: required(arrayOf(STEP, 'non-empty')) },
  inject: { text: required(TEXT_SPEC), plugin: required(TEXT) },
})

const FAULT: Shape = union<Fault, 'kind'>('kind', {
  'rate-limit': { retryAfterMs: optional(COUNT), retryAfterSeconds: optional(COUNT) },
  overloaded: {},
  'server-error': {},
  'stream-cut': { afterFrames: required(COUNT) },
  'stream-error': {},
})

const PRUNE_KEEP = oneOf<PruneKeep>({ head: true, middle: true, tail: true })

const SCRIPT_ACTION: Shape = union<ScriptAction, 'kind'>('kind', {
  turn: {
    user: required({
      kind: 'either',
      string: STRING,
      object: TEXT_SPEC,
      array: arrayOf(CONTENT_BLOCK, 'non-empty'),
      says: 'text, { tokens: N }, or an array of text and image blocks',
    }),
    steps: required(arrayOf(STEP, 'non-empty')),
  },
  idle: { seconds: required(SECONDS) },
  'set-system': { text: required(TEXT_SPEC) },
  'set-tools': { tools: required(arrayOf(TOOL)) },
  'set-config': {
    config: required(
      object<Partial<Omit<CallConfig, 'provider'>>>({
        model: optional(TEXT),
        maxTokens: optional(POSITIVE_COUNT),
        temperature: optional({ kind: 'number', min: 0, max: 2 }),
      }),
    ),
  },
  'set-prefix-source': { text: required(TEXT_SPEC) },
  inject: { text: required(TEXT_SPEC), plugin: required(TEXT) },
  compact: { retainNodes: required(COUNT), summaryTokens: required(POSITIVE_COUNT) },
  prune: {
    thresholdChars: required(COUNT),
    keepChars: required(COUNT),
    skipLastNodes: required(COUNT),
    keep: optional(PRUNE_KEEP),
  },
  'pressure-prune': {
    contextTokens: required(POSITIVE_COUNT),
    thresholdChars: required(COUNT),
    keepChars: required(COUNT),
    skipLastNodes: required(COUNT),
    keep: optional(PRUNE_KEEP),
  },
  restart: {},
  fault: { fault: required(FAULT) },
  'start-series': {},
})

const SCRIPT: Shape = arrayOf(SCRIPT_ACTION, 'non-empty')

const ACTION_KIND = oneOf<ScriptAction['kind']>({
  turn: true,
  idle: true,
  'set-system': true,
  'set-tools': true,
  'set-config': true,
  'set-prefix-source': true,
  inject: true,
  compact: true,
  prune: true,
  'pressure-prune': true,
  restart: true,
  fault: true,
  'start-series': true,
})

const POLICIES: Shape = object<Partial<Policies>>({
  systemPrompt: optional(oneOf<SystemPromptPolicy>({ header: true, surface: true })),
  route: optional(oneOf<Route>({ 'in-history': true, unsupported: true })),
  seriesStart: optional(oneOf<SeriesStartPolicy>({ consolidate: true, 'keep-live': true })),
  sessionPrefix: optional(
    oneOf<Policies['sessionPrefix']>({ off: true, frozen: true, 'after-slot': true, opener: true }),
  ),
  toolUpdates: optional(
    oneOf<NonNullable<Policies['toolUpdates']>>({
      unsupported: true,
      'addition-only': true,
      'in-history': true,
    }),
  ),
  pruneKeep: optional(PRUNE_KEEP),
  summaryReplayPrefix: optional(BOOLEAN),
  imageOffload: optional(oneOf<ImageOffloadPolicy>({ quantized: true, 'per-request': true })),
  imageLimit: optional(POSITIVE_COUNT),
  imageQuantum: optional(POSITIVE_COUNT),
})

const BUILD: Shape = object<Partial<Omit<BuildOptions, 'stream'>>>({
  promptCacheKey: optional(TEXT),
  retention: optional(oneOf<NonNullable<BuildOptions['retention']>>({ in_memory: true, '24h': true })),
  cacheTtl: optional(oneOf<NonNullable<BuildOptions['cacheTtl']>>({ '30m': true })),
  breakpoints: optional(
    oneOf<BreakpointStrategy>({
      automatic: true,
      'last-message': true,
      'system-and-last': true,
      rolling: true,
      none: true,
    }),
  ),
  anthropicTtl: optional(oneOf<NonNullable<BuildOptions['anthropicTtl']>>({ '5m': true, '1h': true })),
  geminiCacheTtlSeconds: optional(POSITIVE_COUNT),
})

// A variant's `rules` override the simulated model's cache rules, whichever provider that model is on, so
// the fields of every kind are accepted; `kind` itself is not, since it would swap the simulator.
const ANTHROPIC_RULES: Fields<Partial<Omit<AnthropicCacheRules, 'kind'>>> = {
  minTokens: optional(COUNT),
  lookback: optional(POSITIVE_COUNT),
  collapseToolRuns: optional(BOOLEAN),
  maxBreakpoints: optional(POSITIVE_COUNT),
  ttlSeconds: optional(
    object<AnthropicCacheRules['ttlSeconds']>({ '5m': required(SECONDS), '1h': required(SECONDS) }),
  ),
  thinkingHistory: optional(oneOf<AnthropicCacheRules['thinkingHistory']>({ stripped: true, kept: true })),
  billingBlock: optional(oneOf<AnthropicCacheRules['billingBlock']>({ stripped: true, cached: true })),
}
const OPENAI_PREFIX_RULES: Fields<Partial<Omit<OpenAIPrefixRules, 'kind'>>> = {
  minTokens: optional(COUNT),
  increment: optional(POSITIVE_COUNT),
  routingTokens: optional(COUNT),
  machines: optional(POSITIVE_COUNT),
  overflowRpm: optional(SECONDS),
  idleEvictionSeconds: optional(SECONDS),
  idleEvictionMaxSeconds: optional(SECONDS),
  extendedRetentionSeconds: optional(SECONDS),
  extendedRetention: optional(BOOLEAN),
  defaultRetention: optional(oneOf<OpenAIPrefixRules['defaultRetention']>({ in_memory: true, '24h': true })),
}
const OPENAI_BREAKPOINT_RULES: Fields<Partial<Omit<OpenAIBreakpointRules, 'kind'>>> = {
  minTokens: optional(COUNT),
  maxWritesPerRequest: optional(POSITIVE_COUNT),
  readHorizon: optional(POSITIVE_COUNT),
  ttlSeconds: optional(SECONDS),
  routingTokens: optional(COUNT),
  machines: optional(POSITIVE_COUNT),
}
const GEMINI_RULES: Fields<Partial<Omit<GeminiCacheRules, 'kind' | 'minimums'>>> = {
  minTokens: optional(COUNT),
  increment: optional(POSITIVE_COUNT),
  implicitRetentionSeconds: optional(SECONDS),
  implicitMissRate: optional({ kind: 'number', min: 0, max: 1 }),
  explicitDefaultTtlSeconds: optional(SECONDS),
}
const DEEPSEEK_RULES: Fields<Partial<Omit<DeepSeekCacheRules, 'kind' | 'readGranularitySource'>>> = {
  mode: optional(oneOf<DeepSeekCacheRules['mode']>({ units: true, legacy: true })),
  intervalTokens: optional(COUNT),
  legacyUnitTokens: optional(POSITIVE_COUNT),
  evictionSeconds: optional(SECONDS),
  persistDelaySeconds: optional(SECONDS),
  readGranularityTokens: optional(COUNT),
}

/**
 * The rules fields of every kind. `ttlSeconds` is an object on Anthropic and a number on OpenAI GPT-5.6+:
 * either is accepted, and the simulator of the model the scenario runs on reads its own.
 */
const RULES: Shape = {
  kind: 'object',
  fields: {
    ...OPENAI_PREFIX_RULES,
    ...OPENAI_BREAKPOINT_RULES,
    ...DEEPSEEK_RULES,
    ...GEMINI_RULES,
    ...ANTHROPIC_RULES,
    ttlSeconds: optional({
      kind: 'either',
      number: SECONDS,
      object: ANTHROPIC_RULES.ttlSeconds.shape,
      says: "seconds (OpenAI GPT-5.6+), or { '5m': seconds, '1h': seconds } (Anthropic)",
    }),
  },
}

const VARIANT: Shape = object<Variant>({
  name: required(NAME),
  policies: optional(POLICIES),
  build: optional(BUILD),
  skip: optional(arrayOf(ACTION_KIND)),
  script: optional(SCRIPT),
  rules: optional(RULES),
})

const CLAIM: Shape = object<Claim>({
  id: required(NAME),
  text: required(TEXT),
  variants: required(arrayOf(TEXT, 'non-empty')),
  providers: optional(arrayOf(PROVIDER, 'non-empty')),
  check: required(FUNCTION),
})

/** The whole scenario schema of `scenarios/types.ts`. */
export const SCENARIO_SHAPE: Shape = object<Scenario>({
  name: required(NAME),
  demonstrates: required(TEXT),
  variants: required(arrayOf(VARIANT, 'non-empty')),
  system: required(TEXT_SPEC),
  tools: required(arrayOf(TOOL)),
  prefixSource: optional(TEXT_SPEC),
  pace: optional(
    object<Partial<Pace>>({ turnGapSeconds: optional(SECONDS), toolSeconds: optional(SECONDS) }),
  ),
  maxTokens: optional(POSITIVE_COUNT),
  providers: optional(arrayOf(PROVIDER, 'non-empty')),
  script: required(SCRIPT),
  claims: required(arrayOf(CLAIM)),
})

/** Every problem of `value` against `shape`, paths starting at `path`. */
export function problemsOf(shape: Shape, value: unknown, path: string): Problem[] {
  const problem = (message: string): Problem[] => [{ path, message }]
  switch (shape.kind) {
    case 'string':
      if (typeof value !== 'string') return problem(`expected a string, got ${describe(value)}`)
      if (shape.nonEmpty === true && value.trim() === '') return problem('must not be empty')
      if (shape.pattern !== undefined && !shape.pattern.regex.test(value))
        return problem(`${JSON.stringify(value)} is not a valid name (${shape.pattern.says})`)
      return []
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value))
        return problem(`expected a number, got ${describe(value)}`)
      if (shape.integer === true && !Number.isInteger(value))
        return problem(`expected a whole number, got ${value}`)
      if (shape.min !== undefined && value < shape.min)
        return problem(`must be at least ${shape.min}, got ${value}`)
      if (shape.max !== undefined && value > shape.max)
        return problem(`must be at most ${shape.max}, got ${value}`)
      return []
    case 'boolean':
      return typeof value === 'boolean' ? [] : problem(`expected true or false, got ${describe(value)}`)
    case 'true':
      return value === true ? [] : problem(`expected true (or leave it out), got ${describe(value)}`)
    case 'enum':
      return typeof value === 'string' && shape.values.includes(value)
        ? []
        : problem(`unknown value ${describe(value)} (expected one of: ${shape.values.join(', ')})`)
    case 'array': {
      if (!Array.isArray(value)) return problem(`expected an array, got ${describe(value)}`)
      if (shape.nonEmpty === true && value.length === 0) return problem('must not be empty')
      return value.flatMap((item, index) => problemsOf(shape.of, item, `${path}[${index}]`))
    }
    case 'object':
      if (!isPlainObject(value)) return problem(`expected an object, got ${describe(value)}`)
      return fieldProblems(shape.fields, value, path)
    case 'union': {
      if (!isPlainObject(value)) return problem(`expected an object, got ${describe(value)}`)
      const tag = value[shape.tag]
      const known = Object.keys(shape.cases)
      const fields = typeof tag === 'string' && Object.hasOwn(shape.cases, tag) ? shape.cases[tag] : undefined
      if (fields === undefined)
        return [
          {
            path: join(path, shape.tag),
            message:
              tag === undefined
                ? `missing (expected one of: ${known.join(', ')})`
                : `unknown value ${describe(tag)} (expected one of: ${known.join(', ')})`,
          },
        ]
      return fieldProblems({ ...fields, [shape.tag]: { shape: { kind: 'string' } } }, value, path)
    }
    case 'either': {
      const branch = Array.isArray(value)
        ? shape.array
        : isPlainObject(value)
          ? shape.object
          : typeof value === 'string'
            ? shape.string
            : typeof value === 'number'
              ? shape.number
              : undefined
      if (branch === undefined) return problem(`expected ${shape.says}, got ${describe(value)}`)
      return problemsOf(branch, value, path)
    }
    case 'json-object':
      if (!isPlainObject(value)) return problem(`expected an object, got ${describe(value)}`)
      return jsonProblems(value, path)
    case 'function':
      return typeof value === 'function' ? [] : problem(`expected a function, got ${describe(value)}`)
    case 'lazy':
      return problemsOf(shape.shape(), value, path)
  }
}

/** Missing required fields, fields the shape does not know, and each present field's own problems. */
function fieldProblems(
  fields: Readonly<Record<string, Field>>,
  value: Record<string, unknown>,
  path: string,
): Problem[] {
  const problems: Problem[] = []
  for (const [name, field] of Object.entries(fields)) {
    const present = Object.hasOwn(value, name) && value[name] !== undefined
    if (!present) {
      if (field.optional !== true) problems.push({ path: join(path, name), message: 'missing' })
      continue
    }
    problems.push(...problemsOf(field.shape, value[name], join(path, name)))
  }
  for (const name of Object.keys(value)) {
    if (!Object.hasOwn(fields, name))
      problems.push({
        path: join(path, name),
        message: `unknown field (known: ${Object.keys(fields).join(', ')})`,
      })
  }
  return problems
}

/** Values that do not survive JSON: they could not be sent on the wire as they are. */
function jsonProblems(value: unknown, path: string): Problem[] {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return []
  if (typeof value === 'number')
    return Number.isFinite(value) ? [] : [{ path, message: `not a JSON number: ${value}` }]
  if (Array.isArray(value)) return value.flatMap((item, index) => jsonProblems(item, `${path}[${index}]`))
  if (isPlainObject(value))
    return Object.entries(value).flatMap(([key, item]) => jsonProblems(item, join(path, key)))
  return [{ path, message: `not a JSON value: ${describe(value)}` }]
}

/**
 * The problems of one scenario from a user's file: the schema, then what the schema cannot say: variant
 * names and claim ids unique, claims reading only variants the scenario declares.
 */
export function scenarioProblems(value: unknown): Problem[] {
  const problems = problemsOf(SCENARIO_SHAPE, value, '')
  if (problems.length > 0 || !isPlainObject(value)) return problems
  const scenario = value as unknown as Scenario
  const variantNames = scenario.variants.map((variant) => variant.name)
  problems.push(...duplicates(variantNames, (index) => `variants[${index}].name`, 'variant'))
  problems.push(
    ...duplicates(
      scenario.claims.map((claim) => claim.id),
      (index) => `claims[${index}].id`,
      'claim id',
    ),
  )
  for (const [index, claim] of scenario.claims.entries()) {
    for (const [position, variant] of claim.variants.entries()) {
      if (!variantNames.includes(variant))
        problems.push({
          path: `claims[${index}].variants[${position}]`,
          message: `${JSON.stringify(variant)} is not a variant of this scenario (variants: ${variantNames.join(', ')})`,
        })
    }
  }
  return problems
}

function duplicates(names: readonly string[], pathOf: (index: number) => string, what: string): Problem[] {
  return names.flatMap((name, index) =>
    names.indexOf(name) < index
      ? [
          {
            path: pathOf(index),
            message: `duplicate ${what} ${JSON.stringify(name)} (also at ${pathOf(names.indexOf(name))})`,
          },
        ]
      : [],
  )
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function join(path: string, name: string): string {
  const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name)
  if (path === '') return key
  return key.startsWith('"') ? `${path}[${key}]` : `${path}.${key}`
}

/** A value as a message names it: its JSON for small values, its kind otherwise. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value)
  const text = JSON.stringify(value)
  return text.length > 40 ? `${text.slice(0, 37)}...` : text
}
