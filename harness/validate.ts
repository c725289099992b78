// Shape validation of session log lines read from disk: each known event type's data is checked field
// by field, so a hand-edited or foreign log fails with a reason instead of deep inside a projection.

import { isRecord } from './json-fields.ts'
import { KNOWN_EVENT_TYPES, SURFACE_EVENT_TYPES } from './session.ts'
import { COMPATIBLE_ID_PATTERN, PROVIDER_IDS, type SessionEvent } from './types.ts'

type Check = (value: unknown, path: string) => string | undefined

const num: Check = (value, path) =>
  typeof value === 'number' && Number.isFinite(value) ? undefined : `${path} must be a number`
/** A whole number of zero or more: seqs, turns, steps, attempts, token counts, pixels. */
const count: Check = (value, path) =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0
    ? undefined
    : `${path} must be a whole number of zero or more`
const str: Check = (value, path) => (typeof value === 'string' ? undefined : `${path} must be a string`)
const bool: Check = (value, path) => (typeof value === 'boolean' ? undefined : `${path} must be a boolean`)
const any: Check = () => undefined
const yes: Check = (value, path) => (value === true ? undefined : `${path} must be true when present`)
const oneOf =
  (...values: string[]): Check =>
  (value, path) =>
    typeof value === 'string' && values.includes(value)
      ? undefined
      : `${path} must be one of ${values.join(', ')}`
const arrayOf =
  (item: Check): Check =>
  (value, path) => {
    if (!Array.isArray(value)) return `${path} must be an array`
    for (const [index, element] of value.entries()) {
      const problem = item(element, `${path}[${index}]`)
      if (problem !== undefined) return problem
    }
    return undefined
  }
const optional =
  (check: Check): Check =>
  (value, path) =>
    value === undefined ? undefined : check(value, path)
const shape =
  (fields: Record<string, Check>): Check =>
  (value, path) => {
    if (!isRecord(value)) return `${path} must be an object`
    for (const [key, check] of Object.entries(fields)) {
      const problem = check(value[key], `${path}.${key}`)
      if (problem !== undefined) return problem
    }
    return undefined
  }
const union =
  (discriminant: string, variants: Record<string, Check>): Check =>
  (value, path) => {
    if (!isRecord(value)) return `${path} must be an object`
    const tag = value[discriminant]
    const check = typeof tag === 'string' ? variants[tag] : undefined
    if (check === undefined)
      return `${path}.${discriminant} must be one of ${Object.keys(variants).join(', ')}`
    return check(value, path)
  }

const text = shape({ type: oneOf('text'), text: str })
const image = shape({
  type: oneOf('image'),
  id: str,
  mediaType: oneOf('image/png', 'image/jpeg'),
  data: str,
  width: count,
  height: count,
})
const toolCall = shape({ type: oneOf('tool-call'), callId: str, name: str, arguments: str })
const userMessage = shape({ role: oneOf('user'), content: arrayOf(union('type', { text, image })) })
const assistantMessage = shape({
  role: oneOf('assistant'),
  content: arrayOf(union('type', { text, 'tool-call': toolCall })),
})
const systemMessage = shape({ role: oneOf('system'), text: str })
const developerMessage = shape({ role: oneOf('developer'), text: str })
const toolResultMessage = shape({
  role: oneOf('tool'),
  callId: str,
  name: str,
  text: str,
  isError: optional(yes),
})
const message = union('role', {
  user: userMessage,
  assistant: assistantMessage,
  system: systemMessage,
  developer: developerMessage,
  tool: toolResultMessage,
})
const usage = shape({
  input: count,
  uncached: count,
  cacheRead: optional(count),
  cacheWrite: optional(count),
  cacheWrite5m: optional(count),
  cacheWrite1h: optional(count),
  output: count,
  reasoning: optional(count),
})
const toolSchema = shape({
  name: str,
  description: str,
  parameters: shape({}),
  deferLoading: optional(yes),
})
/** A built-in provider, or one of the form of a compatible provider's id (the harness does not know the catalog). */
const provider: Check = (value, path) =>
  typeof value === 'string' &&
  ((PROVIDER_IDS as readonly string[]).includes(value) || COMPATIBLE_ID_PATTERN.test(value))
    ? undefined
    : `${path} must be one of ${PROVIDER_IDS.join(', ')} or a compatible provider's id`
const header = shape({
  config: shape({ provider, model: str, maxTokens: optional(count), temperature: optional(num) }),
  adapterDefaults: optional(shape({ maxTokens: optional(yes) })),
  system: optional(str),
  tools: optional(arrayOf(toolSchema)),
  messagePrefix: optional(arrayOf(message)),
  afterSlot: optional(arrayOf(message)),
  retiredTools: optional(arrayOf(str)),
})
const turnStep = { turn: count, step: count }
const seqRange = shape({ start: count, end: count })
const attemptError = shape({ status: optional(count), type: str, message: str, retryable: bool })

const DATA_CHECKS: Record<string, Check> = {
  'session/start': shape({ formatVersion: count, sessionId: str }),
  'turn/start': shape({ turn: count }),
  'turn/end': shape({ turn: count, reason: oneOf('completed', 'error', 'max-steps', 'aborted') }),
  'step/start': shape(turnStep),
  'step/end': shape(turnStep),
  'user/message': shape({
    turn: count,
    message: userMessage,
    source: union('kind', { user: any, plugin: shape({ plugin: str }) }),
  }),
  'system/message': shape({ ...turnStep, message: systemMessage }),
  'developer/message': shape({ ...turnStep, message: developerMessage, headerSeq: optional(count) }),
  'assistant/message': shape({
    ...turnStep,
    attempt: count,
    message: assistantMessage,
    usage: optional(usage),
    latencyMs: optional(num),
  }),
  'assistant/attempt': shape({
    ...turnStep,
    attempt: count,
    error: attemptError,
    latencyMs: optional(num),
  }),
  'tool/call': shape({ ...turnStep, callId: str, name: str, arguments: str }),
  'tool/result': shape({ ...turnStep, message: toolResultMessage }),
  'request/header': shape({
    header,
    reason: oneOf('initial', 'resume', 'change', 'series'),
    startsSeries: optional(bool),
  }),
  'request/context': shape({ provider, model: str, systemPromptUpdate: optional(oneOf('in-history')) }),
  'compaction/start': shape({
    compactionId: str,
    kind: oneOf('summary', 'prune'),
    replayPrefix: optional(bool),
  }),
  'compaction/summary': shape({
    compactionId: str,
    shadowedRange: seqRange,
    shadowedSeqs: arrayOf(count),
    shadowedTokenCount: optional(count),
  }),
  'compaction/prune': shape({
    compactionId: str,
    shadowedRange: seqRange,
    shadowedSeqs: arrayOf(count),
    shadowedTokenCount: optional(count),
    keep: oneOf('head', 'middle', 'tail'),
  }),
  'compaction/end': shape({ compactionId: str }),
  'image/offload': shape({
    mode: oneOf('quantized', 'per-request'),
    targets: arrayOf(shape({ seq: count, imageIds: arrayOf(str) })),
  }),
  'session/end-seed': shape({ inherited: optional(yes) }),
}

const surfaceOp: Check = (value, path) => {
  if (value === 'append') return undefined
  if (!isRecord(value)) return `${path} must be "append" or a replace object`
  return shape({ op: oneOf('replace'), startSeq: count, endSeq: count })(value, path)
}

/** Check that a parsed log line is a well-formed event; returns it typed, or a reason it is not. */
export function checkEventShape(value: unknown): { event: SessionEvent } | { problem: string } {
  if (!isRecord(value)) return { problem: 'a log line must be a JSON object' }
  const envelope = shape({ seq: count, time: num, type: str })(value, 'event')
  if (envelope !== undefined) return { problem: envelope }
  const type = value.type as string
  if (!KNOWN_EVENT_TYPES.has(type)) {
    if (value.ignorable === true) return { event: value as unknown as SessionEvent }
    return { problem: `unknown event type ${JSON.stringify(type)} (not marked ignorable)` }
  }
  const dataCheck = DATA_CHECKS[type]
  const problem = dataCheck?.(value.data, 'data')
  if (problem !== undefined) return { problem }
  if (SURFACE_EVENT_TYPES.has(type as SessionEvent['type'])) {
    const opProblem =
      surfaceOp(value.surfaceOp, 'surfaceOp') ??
      optional(arrayOf(count))(value.sourceEventSeqs, 'sourceEventSeqs')
    if (opProblem !== undefined) return { problem: opProblem }
  }
  return { event: value as unknown as SessionEvent }
}
