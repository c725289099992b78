// The replies file (`serve --replies FILE`, `startCachelabMocks({ replies })`): JSON Lines, one rule per
// line, or a JSON array of rules, validated whole before anything is served. Every error names the file,
// the line of the rule and the field, as one line.

import { readFileSync } from 'node:fs'
import { CachelabError, unreadableFile } from '../../harness/errors.ts'
import { isRecord } from '../../harness/json-fields.ts'
import { CONVERSATION_KINDS, type ConversationKind } from '../wire/exchange.ts'
import {
  type ReasoningSpec,
  ReplyBook,
  type ReplyRule,
  type ScriptedAnswer,
  STOP_REASONS,
  type StopReason,
  type TextSpec,
  type ToolCallSpec,
} from './reply.ts'

type Json = Record<string, unknown>

/** A rule as written: every field optional, checked by `ruleOf`. */
export interface ReplyRuleInput {
  session?: string
  conversation?: string
  kind?: ConversationKind
  system?: string
  user?: string
  turn?: number
  step?: number
  text?: string | { tokens: number }
  tools?: Array<{ name?: string; arguments?: Record<string, unknown> | string }>
  reasoning?: number | string | { tokens?: number; text?: string; redacted?: boolean }
  stop?: StopReason
  refusal?: string
}

const FIELDS = [
  'session',
  'conversation',
  'kind',
  'system',
  'user',
  'turn',
  'step',
  'text',
  'tools',
  'reasoning',
  'stop',
  'refusal',
]

/** The API spellings users reach for, and the stop reason each one is. */
const STOP_SPELLINGS: Readonly<Record<string, StopReason>> = {
  stop: 'end',
  end_turn: 'end',
  length: 'max-tokens',
  max_tokens: 'max-tokens',
  incomplete: 'max-tokens',
  tool_calls: 'tool-use',
  tool_use: 'tool-use',
  content_filter: 'content-filter',
  pause_turn: 'pause-turn',
}

/** A validation failure at a field of a rule. */
class FieldError extends Error {
  readonly field: string
  constructor(field: string, reason: string) {
    super(reason)
    this.field = field
  }
}

function count(value: unknown, field: string, minimum: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum)
    throw new FieldError(field, `must be a whole number of at least ${minimum}, not ${JSON.stringify(value)}`)
  return value
}

function string(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new FieldError(field, `must be a string, not ${JSON.stringify(value)}`)
  return value
}

/** A text to find in the request: a string with at least one character. */
function needle(value: unknown, field: string): string {
  const text = string(value, field)
  if (text === '') throw new FieldError(field, 'must not be empty (leave the field out to match any text)')
  return text
}

function conversationKind(value: unknown): ConversationKind {
  if (typeof value === 'string' && (CONVERSATION_KINDS as readonly string[]).includes(value))
    return value as ConversationKind
  throw new FieldError(
    'kind',
    `must be one of ${CONVERSATION_KINDS.join(', ')}, not ${JSON.stringify(value)}`,
  )
}

function onlyFields(value: Json, known: readonly string[], field: string): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key))
      throw new FieldError(
        field === '' ? key : `${field}.${key}`,
        `unknown field (known: ${known.join(', ')})`,
      )
  }
}

function textSpec(value: unknown, field: string): TextSpec {
  if (typeof value === 'string') return { kind: 'literal', text: value }
  if (isRecord(value)) {
    onlyFields(value, ['tokens'], field)
    return { kind: 'tokens', tokens: count(value.tokens, `${field}.tokens`, 0) }
  }
  throw new FieldError(field, `must be a string or {"tokens": N}, not ${JSON.stringify(value)}`)
}

function toolCalls(value: unknown): ToolCallSpec[] {
  if (!Array.isArray(value)) throw new FieldError('tools', 'must be a list of {"name", "arguments"}')
  return value.map((call, index) => {
    const field = `tools[${index}]`
    if (!isRecord(call)) throw new FieldError(field, 'must be an object {"name", "arguments"}')
    onlyFields(call, ['name', 'arguments'], field)
    const spec: ToolCallSpec = {}
    if (call.name !== undefined) spec.name = string(call.name, `${field}.name`)
    if (isRecord(call.arguments)) spec.arguments = JSON.stringify(call.arguments)
    else if (typeof call.arguments === 'string') spec.arguments = call.arguments
    else if (call.arguments !== undefined)
      throw new FieldError(`${field}.arguments`, 'must be an object, or a string sent as written')
    return spec
  })
}

function reasoningSpec(value: unknown): ReasoningSpec | 'none' {
  if (typeof value === 'number') {
    const tokens = count(value, 'reasoning', 0)
    return tokens === 0 ? 'none' : { text: { kind: 'tokens', tokens }, redacted: false }
  }
  if (typeof value === 'string') return { text: { kind: 'literal', text: value }, redacted: false }
  if (!isRecord(value))
    throw new FieldError('reasoning', 'must be a token count, a text, or {"tokens" or "text", "redacted"}')
  onlyFields(value, ['tokens', 'text', 'redacted'], 'reasoning')
  if ((value.tokens === undefined) === (value.text === undefined))
    throw new FieldError('reasoning', 'needs exactly one of "tokens" and "text"')
  if (value.redacted !== undefined && typeof value.redacted !== 'boolean')
    throw new FieldError('reasoning.redacted', 'must be true or false')
  const text: TextSpec =
    value.text !== undefined
      ? { kind: 'literal', text: string(value.text, 'reasoning.text') }
      : { kind: 'tokens', tokens: count(value.tokens, 'reasoning.tokens', 1) }
  return { text, redacted: value.redacted === true }
}

function stopReason(value: unknown): StopReason {
  if (typeof value === 'string' && (STOP_REASONS as readonly string[]).includes(value))
    return value as StopReason
  const meant = typeof value === 'string' ? STOP_SPELLINGS[value] : undefined
  const hint = meant === undefined ? '' : ` (${JSON.stringify(value)} is "${meant}" here)`
  throw new FieldError('stop', `must be one of ${STOP_REASONS.join(', ')}${hint}`)
}

/** One rule from its JSON value; `origin` names where it was written. */
export function ruleOf(value: unknown, origin: string): ReplyRule {
  if (!isRecord(value)) throw new FieldError('', 'a rule must be a JSON object')
  onlyFields(value, FIELDS, '')
  const answer: ScriptedAnswer = { tools: value.tools === undefined ? [] : toolCalls(value.tools) }
  if (value.text !== undefined) answer.text = textSpec(value.text, 'text')
  if (value.reasoning !== undefined) answer.reasoning = reasoningSpec(value.reasoning)
  if (value.stop !== undefined) answer.stop = stopReason(value.stop)
  if (value.refusal !== undefined) {
    if (value.text !== undefined || answer.tools.length > 0)
      throw new FieldError('refusal', 'is the whole answer: it takes no "text" or "tools"')
    if (answer.stop !== undefined && answer.stop !== 'refusal')
      throw new FieldError('refusal', `ends the answer with stop "refusal", not "${answer.stop}"`)
    answer.text = { kind: 'literal', text: string(value.refusal, 'refusal') }
    answer.stop = 'refusal'
  }
  if (
    answer.text === undefined &&
    answer.tools.length === 0 &&
    answer.reasoning === undefined &&
    answer.stop === undefined
  )
    throw new FieldError('', 'says nothing to answer: give text, tools, reasoning, stop or refusal')
  const session = value.session === undefined ? '*' : string(value.session, 'session')
  if (session === '') throw new FieldError('session', 'must name a session, or be "*" for every session')
  return {
    session,
    ...(value.conversation !== undefined ? { conversation: needle(value.conversation, 'conversation') } : {}),
    ...(value.kind !== undefined ? { kind: conversationKind(value.kind) } : {}),
    ...(value.system !== undefined ? { system: needle(value.system, 'system') } : {}),
    ...(value.user !== undefined ? { user: needle(value.user, 'user') } : {}),
    ...(value.turn !== undefined ? { turn: count(value.turn, 'turn', 1) } : {}),
    ...(value.step !== undefined ? { step: count(value.step, 'step', 1) } : {}),
    answer,
    origin,
  }
}

/** The input error of a rule: `file:line: field: reason`. */
function inputError(origin: string, error: unknown): CachelabError {
  if (error instanceof FieldError)
    return new CachelabError(
      'input',
      `${origin}: ${error.field === '' ? '' : `${error.field}: `}${error.message}`,
    )
  return new CachelabError('input', `${origin}: ${(error as Error).message}`)
}

/** The 1-based line where each element of a JSON text's top-level array starts. */
function elementLines(text: string): number[] {
  const lines: number[] = []
  let depth = 0
  let line = 1
  let inString = false
  let escaped = false
  let expecting = false
  for (const character of text) {
    if (character === '\n') line += 1
    if (inString) {
      if (escaped) escaped = false
      else if (character === '\\') escaped = true
      else if (character === '"') inString = false
      continue
    }
    if (/\s/.test(character)) continue
    if (depth === 1 && expecting && character !== ']') {
      lines.push(line)
      expecting = false
    }
    if (character === '"') inString = true
    else if (character === '[' || character === '{') {
      depth += 1
      if (depth === 1 && character === '[') expecting = true
    } else if (character === ']' || character === '}') depth -= 1
    else if (character === ',' && depth === 1) expecting = true
  }
  return lines
}

/**
 * Parse a replies file: JSON Lines (`.jsonl`, `.ndjson`; blank lines skipped) or a JSON array of rules.
 * Throws an input error naming the file, line and field of the first bad rule.
 */
export function parseReplies(text: string, file: string): ReplyBook {
  const rules: ReplyRule[] = []
  if (/\.(jsonl|ndjson)$/i.test(file)) {
    for (const [index, line] of text.split(/\r?\n/).entries()) {
      if (line.trim() === '') continue
      const origin = `${file}:${index + 1}`
      let value: unknown
      try {
        value = JSON.parse(line)
      } catch (error) {
        throw new CachelabError('input', `${origin}: not JSON (${(error as Error).message})`)
      }
      try {
        rules.push(ruleOf(value, origin))
      } catch (error) {
        throw inputError(origin, error)
      }
    }
    return new ReplyBook(rules)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new CachelabError(
      'input',
      `${file}: not JSON (${(error as Error).message}); a .jsonl file holds one rule per line`,
    )
  }
  if (!Array.isArray(value)) throw new CachelabError('input', `${file}: must be a JSON array of rules`)
  const lines = elementLines(text)
  for (const [index, element] of value.entries()) {
    const origin = `${file}:${lines[index] ?? 1}`
    try {
      rules.push(ruleOf(element, origin))
    } catch (error) {
      throw inputError(origin, error)
    }
  }
  return new ReplyBook(rules)
}

/** Read and parse a replies file; an unreadable file is an input error. */
export function readReplies(path: string): ReplyBook {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw unreadableFile(
      `--replies ${path}`,
      error,
      'check the path, or write the replies file (docs/providers.md, What the mock model answers)',
    )
  }
  return parseReplies(text, path)
}

/** Rules given in code (`startCachelabMocks({ replies: [...] })`), validated as a file's are. */
export function repliesFromRules(rules: readonly ReplyRuleInput[]): ReplyBook {
  return new ReplyBook(
    rules.map((rule, index) => {
      const origin = `replies[${index}]`
      try {
        return ruleOf(rule, origin)
      } catch (error) {
        throw inputError(origin, error)
      }
    }),
  )
}
