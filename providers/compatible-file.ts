// A user's catalog file (`--catalog FILE`, CACHELAB_CATALOG): OpenAI-compatible providers in JSON, checked
// field by field, each problem an input error naming the file and the field. Pure: the caller reads the file.

import { CachelabError } from '../harness/errors.ts'
import { isRecord } from '../harness/json-fields.ts'
import { COMPATIBLE_ID_PATTERN } from '../harness/types.ts'
import type { Prices } from './catalog.ts'
import {
  type CatalogSource,
  type CompatibleCacheRules,
  type CompatibleModelSpec,
  type CompatibleProvider,
  type CompatibleProviderSpec,
  isReservedId,
  type RoutingKey,
  resolveCompatible,
  type UsageFields,
} from './compatible.ts'

type Raw = Record<string, unknown>

/** A problem at a field path, reported with the file by `parseCatalogFile`. */
class FieldProblem extends Error {}

function object(value: unknown, path: string): Raw {
  if (!isRecord(value)) throw new FieldProblem(`${path} must be an object`)
  return value
}

function text(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new FieldProblem(`${path} must be a non-empty string`)
  return value
}

function optionalText(value: unknown, path: string): string | undefined {
  return value === undefined ? undefined : text(value, path)
}

function whole(value: unknown, path: string, minimum: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum)
    throw new FieldProblem(`${path} must be a whole number from ${minimum}`)
  return value
}

function price(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new FieldProblem(`${path} must be a price in USD per million tokens (0 or more)`)
  return value
}

function list(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value) || value.length === 0) throw new FieldProblem(`${path} must be a non-empty array`)
  return value
}

function texts(value: unknown, path: string): string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value)) throw new FieldProblem(`${path} must be an array of strings`)
  return value.map((item, index) => text(item, `${path}[${index}]`))
}

/** Reject fields the format does not have: a misspelt rule would otherwise silently take its default. */
function known(value: Raw, path: string, fields: readonly string[]): void {
  for (const field of Object.keys(value)) {
    if (!fields.includes(field))
      throw new FieldProblem(`${path}.${field} is not a field (fields: ${fields.join(', ')})`)
  }
}

/** A dotted usage path: `prompt_tokens_details.cached_tokens`. */
function usagePath(value: unknown, path: string): string {
  const field = text(value, path)
  if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(field))
    throw new FieldProblem(
      `${path} must be a dotted field path under usage, such as prompt_tokens_details.cached_tokens`,
    )
  return field
}

/** `"none"`, `{"field": "prompt_cache_key"}` or `{"header": "x-grok-conv-id"}`. */
function routing(value: unknown, path: string): RoutingKey {
  if (value === 'none') return { kind: 'none' }
  if (isRecord(value) && Object.keys(value).length === 1) {
    if (value.field !== undefined) return { kind: 'body', field: text(value.field, `${path}.field`) }
    if (value.header !== undefined) {
      const name = text(value.header, `${path}.header`)
      if (!/^[A-Za-z0-9-]+$/.test(name)) throw new FieldProblem(`${path}.header must be a header name`)
      return { kind: 'header', name: name.toLowerCase() }
    }
  }
  throw new FieldProblem(`${path} must be "none", {"field": NAME} or {"header": NAME}`)
}

function usage(value: unknown, path: string): UsageFields {
  const fields = object(value, path)
  known(fields, path, ['cacheRead', 'cacheMiss', 'cacheWrite'])
  return {
    cacheRead: usagePath(fields.cacheRead, `${path}.cacheRead`),
    ...(fields.cacheMiss !== undefined
      ? { cacheMiss: usagePath(fields.cacheMiss, `${path}.cacheMiss`) }
      : {}),
    ...(fields.cacheWrite !== undefined
      ? { cacheWrite: usagePath(fields.cacheWrite, `${path}.cacheWrite`) }
      : {}),
  }
}

const NUMBERS = ['minimumTokens', 'granularityTokens', 'ttlSeconds'] as const

function cacheRules(value: unknown, path: string): CompatibleCacheRules {
  const rules = object(value, path)
  known(rules, path, [...NUMBERS, 'routing', 'usage', 'writes'])
  if (rules.writes !== 'free' && rules.writes !== 'billed')
    throw new FieldProblem(`${path}.writes must be "free" or "billed"`)
  return {
    minimumTokens: whole(rules.minimumTokens, `${path}.minimumTokens`, 0),
    granularityTokens: whole(rules.granularityTokens, `${path}.granularityTokens`, 1),
    ttlSeconds: whole(rules.ttlSeconds, `${path}.ttlSeconds`, 1),
    routing: routing(rules.routing, `${path}.routing`),
    usage: usage(rules.usage, `${path}.usage`),
    writes: rules.writes,
  }
}

function prices(value: unknown, path: string, writes: CompatibleCacheRules['writes']): Prices {
  const given = object(value, path)
  known(given, path, ['input', 'cacheRead', 'cacheWrite', 'output'])
  if (writes === 'billed' && given.cacheWrite === undefined)
    throw new FieldProblem(`${path}.cacheWrite is needed: the provider's cache.writes is "billed"`)
  return {
    input: price(given.input, `${path}.input`),
    cacheRead: price(given.cacheRead, `${path}.cacheRead`),
    ...(given.cacheWrite !== undefined
      ? { cacheWrite5m: price(given.cacheWrite, `${path}.cacheWrite`) }
      : {}),
    output: price(given.output, `${path}.output`),
  }
}

function model(value: unknown, path: string, writes: CompatibleCacheRules['writes']): CompatibleModelSpec {
  const entry = object(value, path)
  known(entry, path, ['model', 'prices', 'route', 'cache', 'assumptions'])
  if (entry.route !== undefined && entry.route !== 'in-history' && entry.route !== 'unsupported')
    throw new FieldProblem(`${path}.route must be "in-history" or "unsupported"`)
  let cache: CompatibleModelSpec['cache']
  if (entry.cache !== undefined) {
    const numbers = object(entry.cache, `${path}.cache`)
    known(numbers, `${path}.cache`, NUMBERS)
    cache = {}
    for (const name of NUMBERS) {
      if (numbers[name] !== undefined)
        cache[name] = whole(numbers[name], `${path}.cache.${name}`, name === 'minimumTokens' ? 0 : 1)
    }
  }
  const assumptions = texts(entry.assumptions, `${path}.assumptions`)
  return {
    model: text(entry.model, `${path}.model`),
    prices: prices(entry.prices, `${path}.prices`, writes),
    ...(entry.route !== undefined ? { route: entry.route } : {}),
    ...(cache !== undefined ? { cache } : {}),
    ...(assumptions !== undefined ? { assumptions } : {}),
  }
}

function source(value: unknown, path: string): CatalogSource {
  const given = object(value, path)
  known(given, path, ['url', 'date', 'says'])
  return {
    url: text(given.url, `${path}.url`),
    date: text(given.date, `${path}.date`),
    says: text(given.says, `${path}.says`),
  }
}

function environmentName(value: unknown, path: string): string {
  const name = text(value, path)
  if (!/^[A-Z_][A-Z0-9_]*$/.test(name)) throw new FieldProblem(`${path} must be an environment variable name`)
  return name
}

function provider(value: unknown, path: string): CompatibleProviderSpec {
  const given = object(value, path)
  known(given, path, [
    'id',
    'name',
    'baseURL',
    'keyVariable',
    'baseURLVariable',
    'defaultModel',
    'cache',
    'models',
    'sources',
    'assumptions',
  ])
  const id = text(given.id, `${path}.id`)
  if (!COMPATIBLE_ID_PATTERN.test(id))
    throw new FieldProblem(`${path}.id must be lower case letters, digits and dashes, starting with a letter`)
  if (isReservedId(id)) throw new FieldProblem(`${path}.id ${id} is a built-in provider`)
  const baseURL = text(given.baseURL, `${path}.baseURL`)
  let url: URL
  try {
    url = new URL(baseURL)
  } catch {
    throw new FieldProblem(`${path}.baseURL must be an http(s) URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new FieldProblem(`${path}.baseURL must be an http(s) URL`)
  const cache = cacheRules(given.cache, `${path}.cache`)
  const models = list(given.models, `${path}.models`).map((entry, index) =>
    model(entry, `${path}.models[${index}]`, cache.writes),
  )
  const defaultModel = optionalText(given.defaultModel, `${path}.defaultModel`)
  if (defaultModel !== undefined && !models.some((entry) => entry.model === defaultModel))
    throw new FieldProblem(`${path}.defaultModel ${defaultModel} is not one of its models`)
  const assumptions = texts(given.assumptions, `${path}.assumptions`)
  return {
    id,
    name: text(given.name, `${path}.name`),
    baseURL: baseURL.replace(/\/$/, ''),
    keyVariable: environmentName(given.keyVariable, `${path}.keyVariable`),
    baseURLVariable: environmentName(given.baseURLVariable, `${path}.baseURLVariable`),
    ...(defaultModel !== undefined ? { defaultModel } : {}),
    cache,
    models,
    sources:
      given.sources === undefined
        ? []
        : list(given.sources, `${path}.sources`).map((entry, index) =>
            source(entry, `${path}.sources[${index}]`),
          ),
    ...(assumptions !== undefined ? { assumptions } : {}),
  }
}

/**
 * The providers a catalog file describes (`{"providers": [...]}`), resolved; `file` names it in errors.
 * A malformed file or field is an input error (exit 2) naming the file and the field.
 */
export function parseCatalogFile(json: string, file: string): CompatibleProvider[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch (error) {
    throw new CachelabError('input', `${file}: not JSON (${(error as Error).message})`)
  }
  try {
    const root = object(parsed, 'the file')
    known(root, '(root)', ['providers'])
    const specs = list(root.providers, 'providers').map((entry, index) =>
      provider(entry, `providers[${index}]`),
    )
    const seen = new Set<string>()
    for (const [index, spec] of specs.entries()) {
      if (seen.has(spec.id)) throw new FieldProblem(`providers[${index}].id ${spec.id} appears twice`)
      seen.add(spec.id)
    }
    return specs.map((spec) => resolveCompatible(spec, file))
  } catch (error) {
    if (error instanceof FieldProblem) throw new CachelabError('input', `${file}: ${error.message}`)
    throw error
  }
}
