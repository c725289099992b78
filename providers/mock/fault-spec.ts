// The written forms of faults, checked with errors that name what is wrong: the header form
// (`429;retry-after-ms=10`, also a rule's `fault` in a schedule file), the object form (the `Fault` type),
// and a schedule file (a JSON array of rules, `{"faults": [...]}`, or one JSON rule per line).

import { readFileSync } from 'node:fs'
import { CachelabError, unreadableFile } from '../../harness/errors.ts'
import { isRecord } from '../../harness/json-fields.ts'
import type { Fault, ProviderId } from '../../harness/types.ts'
import { isProviderId, knownProviderIds } from '../compatible.ts'
import type { FaultRule, HeaderFault } from './faults.ts'

type FaultKind = Fault['kind']

/** The names the header form accepts for each kind: the kind itself and the status it answers with. */
const KIND_NAMES: Readonly<Record<string, FaultKind>> = {
  'rate-limit': 'rate-limit',
  '429': 'rate-limit',
  overloaded: 'overloaded',
  '529': 'overloaded',
  '503': 'overloaded',
  'server-error': 'server-error',
  '500': 'server-error',
  'stream-cut': 'stream-cut',
  'stream-error': 'stream-error',
}

const KINDS_TEXT = '429 (rate-limit), 529 or 503 (overloaded), 500 (server-error), stream-cut, stream-error'

/** The fields of each kind's object form, as written in the header form, with whether one is required. */
const PARAMETERS: Readonly<
  Record<FaultKind, Readonly<Record<string, { field: string; required: boolean; unit: string }>>>
> = {
  'rate-limit': {
    'retry-after-ms': { field: 'retryAfterMs', required: false, unit: 'milliseconds' },
    'retry-after': { field: 'retryAfterSeconds', required: false, unit: 'seconds' },
  },
  overloaded: {},
  'server-error': {},
  'stream-cut': { 'after-frames': { field: 'afterFrames', required: true, unit: 'frames' } },
  'stream-error': {},
}

const RULE_FIELDS = ['session', 'request', 'sessionRequest', 'provider', 'fault', 'times']

const isWhole = (value: unknown, min: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= min

/** Thrown by the parsers below: the message says what is wrong, without saying where (the caller does). */
class SpecProblem extends Error {}

/**
 * Read the `x-cachelab-fault` header: a kind (`429`, `rate-limit`, `529`, `503`, `overloaded`, `500`,
 * `server-error`, `stream-cut`, `stream-error`) then `;name=value` parameters: `retry-after-ms`,
 * `retry-after` (rate limit), `after-frames` (stream cut, required), `times` (any kind). Throws an input
 * error that says what is wrong.
 */
export function parseFaultHeader(text: string): HeaderFault {
  try {
    const { fault, times } = parseFaultText(text, true)
    return { fault, times: times ?? 1, text }
  } catch (error) {
    if (error instanceof SpecProblem) throw new CachelabError('input', error.message)
    throw error
  }
}

function parseFaultText(text: string, allowTimes: boolean): { fault: Fault; times?: number } {
  const [head = '', ...parts] = text.split(';').map((part) => part.trim())
  const kind = Object.hasOwn(KIND_NAMES, head.toLowerCase()) ? KIND_NAMES[head.toLowerCase()] : undefined
  if (kind === undefined)
    throw new SpecProblem(`unknown fault ${JSON.stringify(head)} (expected ${KINDS_TEXT})`)
  const accepted = PARAMETERS[kind]
  const values: Record<string, number> = {}
  let times: number | undefined
  for (const part of parts) {
    if (part === '') continue
    const equals = part.indexOf('=')
    const name = (equals < 0 ? part : part.slice(0, equals)).trim().toLowerCase()
    const value = equals < 0 ? '' : part.slice(equals + 1).trim()
    const number = /^\d+$/.test(value) ? Number(value) : Number.NaN
    if (name === 'times' && allowTimes) {
      if (!(number >= 1))
        throw new SpecProblem(`times must be a whole number from 1, not ${JSON.stringify(value)}`)
      times = number
      continue
    }
    const parameter = Object.hasOwn(accepted, name) ? accepted[name] : undefined
    if (parameter === undefined) {
      const names = [...Object.keys(accepted), ...(allowTimes ? ['times'] : [])]
      throw new SpecProblem(
        `${kind} takes ${names.length === 0 ? 'no parameter' : names.join(', ')}, not ${JSON.stringify(name)}${!allowTimes && name === 'times' ? ' (in a schedule, times is a field of the rule)' : ''}`,
      )
    }
    if (Number.isNaN(number))
      throw new SpecProblem(
        `${name} must be a whole number of ${parameter.unit}, not ${JSON.stringify(value)}`,
      )
    values[parameter.field] = number
  }
  return {
    fault: buildFault(kind, values, (field) => headerName(kind, field)),
    ...(times !== undefined ? { times } : {}),
  }
}

/** The header form's name of an object field. */
function headerName(kind: FaultKind, field: string): string {
  return Object.entries(PARAMETERS[kind]).find(([, parameter]) => parameter.field === field)?.[0] ?? field
}

/** A fault of `kind` from its checked field values; a missing required field is a problem. */
function buildFault(
  kind: FaultKind,
  values: Record<string, number>,
  nameOf: (field: string) => string,
): Fault {
  for (const parameter of Object.values(PARAMETERS[kind])) {
    if (parameter.required && values[parameter.field] === undefined)
      throw new SpecProblem(`${kind} needs ${nameOf(parameter.field)} (a whole number of ${parameter.unit})`)
  }
  switch (kind) {
    case 'rate-limit':
      return {
        kind,
        ...(values.retryAfterMs !== undefined ? { retryAfterMs: values.retryAfterMs } : {}),
        ...(values.retryAfterSeconds !== undefined ? { retryAfterSeconds: values.retryAfterSeconds } : {}),
      }
    case 'stream-cut':
      return { kind, afterFrames: values.afterFrames ?? 0 }
    case 'overloaded':
    case 'server-error':
    case 'stream-error':
      return { kind }
  }
}

/** A fault in its object form (`{"kind": "rate-limit", "retryAfterMs": 10}`), checked field by field. */
function parseFaultObject(value: Record<string, unknown>): Fault {
  const kind =
    typeof value.kind === 'string' && Object.hasOwn(PARAMETERS, value.kind)
      ? (value.kind as FaultKind)
      : undefined
  if (kind === undefined)
    throw new SpecProblem(
      `fault.kind must be one of rate-limit, overloaded, server-error, stream-cut, stream-error`,
    )
  const fields = Object.values(PARAMETERS[kind])
  const values: Record<string, number> = {}
  for (const [name, field] of Object.entries(value)) {
    if (name === 'kind') continue
    const parameter = fields.find((candidate) => candidate.field === name)
    if (parameter === undefined) {
      const names = fields.map((candidate) => candidate.field)
      throw new SpecProblem(
        `fault: ${kind} takes ${names.length === 0 ? 'no field but kind' : `kind, ${names.join(', ')}`}, not ${JSON.stringify(name)}`,
      )
    }
    if (!isWhole(field, 0))
      throw new SpecProblem(
        `fault.${name} must be a whole number of ${parameter.unit}, not ${JSON.stringify(field)}`,
      )
    values[name] = field
  }
  return buildFault(kind, values, (field) => `fault.${field}`)
}

/** One rule of a schedule, checked: unknown fields are refused (most likely a typo). */
function parseRule(value: unknown): FaultRule {
  if (!isRecord(value)) throw new SpecProblem('a rule must be a JSON object')
  for (const name of Object.keys(value)) {
    if (!RULE_FIELDS.includes(name))
      throw new SpecProblem(`unknown field ${JSON.stringify(name)} (a rule has ${RULE_FIELDS.join(', ')})`)
  }
  const { session, request, sessionRequest, provider, fault, times } = value
  if (session !== undefined && (typeof session !== 'string' || session === ''))
    throw new SpecProblem('session must be a session id, or * for any session')
  if (request !== undefined && !isWhole(request, 1))
    throw new SpecProblem('request must be a whole number from 1 (the n-th request overall)')
  if (sessionRequest !== undefined && !isWhole(sessionRequest, 1))
    throw new SpecProblem('sessionRequest must be a whole number from 1 (the n-th request of the session)')
  if (provider !== undefined && (typeof provider !== 'string' || !isProviderId(provider)))
    throw new SpecProblem(`provider must be one of ${knownProviderIds().join(', ')}`)
  if (times !== undefined && !isWhole(times, 1)) throw new SpecProblem('times must be a whole number from 1')
  let parsed: Fault
  if (typeof fault === 'string') {
    try {
      parsed = parseFaultText(fault, false).fault
    } catch (error) {
      if (error instanceof SpecProblem) throw new SpecProblem(`fault: ${error.message}`)
      throw error
    }
  } else if (isRecord(fault)) {
    parsed = parseFaultObject(fault)
  } else {
    throw new SpecProblem(
      'fault is required: "429;retry-after-ms=10" or {"kind": "rate-limit", "retryAfterMs": 10}',
    )
  }
  return {
    ...(session !== undefined ? { session: session as string } : {}),
    ...(request !== undefined ? { request: request as number } : {}),
    ...(sessionRequest !== undefined ? { sessionRequest: sessionRequest as number } : {}),
    ...(provider !== undefined ? { provider: provider as ProviderId } : {}),
    fault: parsed,
    ...(times !== undefined ? { times: times as number } : {}),
  }
}

/**
 * Check rules given in process (`startCachelabMocks({ faults })`): the same checks as a schedule file,
 * so a rule from plain JavaScript fails at start, naming the rule, rather than never matching.
 */
export function checkFaultRules(rules: readonly unknown[], label = 'faults'): FaultRule[] {
  return rules.map((rule, index) => {
    try {
      return parseRule(rule)
    } catch (error) {
      if (error instanceof SpecProblem)
        throw new CachelabError('input', `${label}: rule ${index + 1}: ${error.message}`)
      throw error
    }
  })
}

/**
 * Read a schedule file's text: a JSON array of rules, an object `{"faults": [...]}`, one rule object, or
 * JSON lines (one rule per line). Throws an input error naming the file, the rule or line, and the problem.
 */
export function parseFaultSchedule(text: string, file: string): FaultRule[] {
  const trimmed = text.trim()
  if (trimmed === '') throw new CachelabError('input', `${file}: holds no fault rule`)
  let document: unknown
  let wholeError: string | undefined
  try {
    document = JSON.parse(trimmed)
  } catch (error) {
    wholeError = (error as Error).message
  }
  if (wholeError === undefined) {
    const rules = isRecord(document) && 'faults' in document ? document.faults : document
    if (isRecord(document) && 'faults' in document && Object.keys(document).length > 1)
      throw new CachelabError('input', `${file}: an object with "faults" holds nothing else`)
    const list = Array.isArray(rules) ? rules : isRecord(rules) && rules === document ? [rules] : undefined
    if (list === undefined)
      throw new CachelabError(
        'input',
        `${file}: expected a JSON array of rules, {"faults": [...]}, or one rule per line`,
      )
    if (list.length === 0) throw new CachelabError('input', `${file}: holds no fault rule`)
    return checkFaultRules(list, file)
  }
  if (trimmed.startsWith('[')) throw new CachelabError('input', `${file}: not valid JSON: ${wholeError}`)
  const rules: FaultRule[] = []
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    if (line.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (error) {
      throw new CachelabError(
        'input',
        `${file}:${index + 1}: not valid JSON (a schedule is a JSON array, or one JSON rule per line): ${(error as Error).message}`,
      )
    }
    try {
      rules.push(parseRule(value))
    } catch (error) {
      if (error instanceof SpecProblem)
        throw new CachelabError('input', `${file}:${index + 1}: ${error.message}`)
      throw error
    }
  }
  return rules
}

/** The rules of a `--faults` file, checked; an unreadable or invalid file is an input error (exit 2). */
export function readFaultSchedule(file: string): FaultRule[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw unreadableFile(
      `--faults ${file}`,
      error,
      'check the path, or write the schedule (docs/serve.md, Faults and virtual time)',
    )
  }
  return parseFaultSchedule(text, `--faults ${file}`)
}
