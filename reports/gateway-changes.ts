// What a gateway changed in one request that matters to a cache or to what the client is told: the body
// the client sent the gateway against the body the gateway sent upstream (marks, system, blocks, keys,
// tools, model, fields), and the usage the client was told against what the upstream request had. Pure;
// the pairing and the cost are gateway-rows.ts's.

import { asRecord } from '../harness/json-fields.ts'
import type { Usage } from '../harness/types.ts'
import { type BuiltInWireApi, bodyModel, bodyShape, type WireApi } from '../providers/types.ts'
import { systemText } from '../providers/wire/wire-text.ts'
import type { GatewayChangeKind } from './types.ts'

/** One side of a gateway: a request body and the API it was sent on. */
export interface WireSide {
  api: WireApi
  body: Record<string, unknown>
}

/** One change, with what it was in words (`prompt_cache_key "a" → "b"`). */
export interface GatewayChange {
  kind: GatewayChangeKind
  detail: string
}

type Body = Record<string, unknown>

/** How long a quoted text may be in a change's detail. */
const QUOTED = 40

function quoted(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return JSON.stringify(flat.length > QUOTED ? `${flat.slice(0, QUOTED)}…` : flat)
}

/**
 * Where each cache mark sits, named by what it marks (the block's text, a tool's name, `top-level` for
 * Anthropic's automatic mark), so marks compare across wires: a translated block keeps its text.
 */
export function cacheMarks(body: Body): string[] {
  const marks: string[] = []
  if (body.cache_control !== undefined && body.cache_control !== null) marks.push('top-level')
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item)
      return
    }
    if (typeof value !== 'object' || value === null) return
    const record = value as Body
    if (record.cache_control !== undefined && record.cache_control !== null) marks.push(markName(record))
    for (const [key, field] of Object.entries(record)) if (key !== 'cache_control') visit(field)
  }
  for (const key of ['tools', 'system', 'messages', 'input']) visit(body[key])
  return marks
}

function markName(block: Body): string {
  if (typeof block.text === 'string') return `text ${quoted(block.text)}`
  if (typeof block.name === 'string') return `tool ${block.name}`
  const fn = asRecord(block.function)
  if (typeof fn.name === 'string') return `tool ${fn.name}`
  if (typeof block.content === 'string') return `text ${quoted(block.content)}`
  return String(block.type ?? 'block')
}

/** The names of the declared tools, in order (Anthropic and Responses `name`, Chat `function.name`). */
export function toolNames(body: Body): string[] {
  const tools = Array.isArray(body.tools) ? body.tools : []
  return tools.map((tool) => {
    const record = asRecord(tool)
    const name = record.name ?? asRecord(record.function).name
    return typeof name === 'string' ? name : ''
  })
}

/** Content blocks of the conversation: a string content counts one, an array its items. */
function blockCount(body: Body): number {
  const items = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : []
  let count = 0
  for (const item of items) {
    const content = asRecord(item).content
    count += Array.isArray(content) ? content.length : 1
  }
  return count
}

/** Items of `left` not matched by one of `right` (a multiset difference). */
function without(left: readonly string[], right: readonly string[]): string[] {
  const rest = [...right]
  return left.filter((item) => {
    const index = rest.indexOf(item)
    if (index < 0) return true
    rest.splice(index, 1)
    return false
  })
}

/** Every cache-relevant change from the client's request to the gateway's upstream request, in a fixed order. */
export function gatewayChanges(client: WireSide, upstream: WireSide): GatewayChange[] {
  const changes: GatewayChange[] = []
  const from = bodyShape(client.api)
  const to = bodyShape(upstream.api)
  if (from !== to) changes.push({ kind: 'gateway-wire-translated', detail: `${from} → ${to}` })

  const clientMarks = cacheMarks(client.body)
  const upstreamMarks = cacheMarks(upstream.body)
  const marksDropped = without(clientMarks, upstreamMarks)
  const added = without(upstreamMarks, clientMarks)
  if (marksDropped.length > 0 && added.length > 0)
    changes.push({
      kind: 'gateway-cache-marks-moved',
      detail: `from ${marksDropped.join(', ')} to ${added.join(', ')}`,
    })
  else if (marksDropped.length > 0)
    changes.push({
      kind: 'gateway-cache-marks-dropped',
      detail: `${marksDropped.length}: ${marksDropped.join(', ')}`,
    })
  else if (added.length > 0)
    changes.push({ kind: 'gateway-cache-marks-added', detail: `${added.length}: ${added.join(', ')}` })

  const clientSystem = systemText(client.api, client.body)
  const upstreamSystem = systemText(upstream.api, upstream.body)
  if (clientSystem !== upstreamSystem) {
    const prefixed = clientSystem !== '' && upstreamSystem.endsWith(clientSystem)
    changes.push(
      prefixed
        ? {
            kind: 'gateway-system-prefixed',
            detail: `${quoted(upstreamSystem.slice(0, upstreamSystem.length - clientSystem.length))} before the client's`,
          }
        : { kind: 'gateway-system-rewritten', detail: `${quoted(clientSystem)} → ${quoted(upstreamSystem)}` },
    )
  }

  // Block counts compare on one wire only: a translation regroups blocks (tool results become messages).
  if (from === to) {
    const sent = blockCount(client.body)
    const forwarded = blockCount(upstream.body)
    if (forwarded < sent)
      changes.push({ kind: 'gateway-blocks-stripped', detail: `${sent - forwarded} of ${sent} blocks` })
    if (forwarded > sent)
      changes.push({ kind: 'gateway-blocks-injected', detail: `${forwarded - sent} blocks added to ${sent}` })
  }

  const clientKey = client.body.prompt_cache_key
  const upstreamKey = upstream.body.prompt_cache_key
  if (clientKey !== upstreamKey) {
    if (clientKey === undefined)
      changes.push({
        kind: 'gateway-cache-key-set',
        detail: `prompt_cache_key ${JSON.stringify(upstreamKey)}`,
      })
    else if (upstreamKey === undefined && to === from)
      changes.push({
        kind: 'gateway-cache-key-dropped',
        detail: `prompt_cache_key ${JSON.stringify(clientKey)}`,
      })
    else if (upstreamKey !== undefined)
      changes.push({
        kind: 'gateway-cache-key-overwritten',
        detail: `prompt_cache_key ${JSON.stringify(clientKey)} → ${JSON.stringify(upstreamKey)}`,
      })
  }

  const clientModel = bodyModel(client.body)
  const upstreamModel = bodyModel(upstream.body)
  if (clientModel !== undefined && upstreamModel !== undefined && clientModel !== upstreamModel)
    changes.push({ kind: 'gateway-model-changed', detail: `model ${clientModel} → ${upstreamModel}` })

  const dropped = droppedFields(client, upstream)
  if (dropped.length > 0) changes.push({ kind: 'gateway-fields-dropped', detail: dropped.join(', ') })

  const clientTools = toolNames(client.body)
  const upstreamTools = toolNames(upstream.body)
  if (clientTools.join('\n') !== upstreamTools.join('\n')) {
    const same =
      without(clientTools, upstreamTools).length === 0 && without(upstreamTools, clientTools).length === 0
    changes.push(
      same
        ? { kind: 'gateway-tools-reordered', detail: `${clientTools.join(',')} → ${upstreamTools.join(',')}` }
        : {
            kind: 'gateway-tools-changed',
            detail: `removed ${without(clientTools, upstreamTools).join(',') || 'none'}, added ${without(upstreamTools, clientTools).join(',') || 'none'}`,
          },
    )
  }
  return changes
}

/** The request families whose fields compare: Anthropic Messages, and the Chat Completions bodies. */
type Family = 'messages' | 'chat'

const FAMILY: Partial<Record<BuiltInWireApi, Family>> = {
  'anthropic-messages': 'messages',
  'openai-chat': 'chat',
  'deepseek-chat': 'chat',
}

/**
 * The fields of one family's request that carry a field of another's, where the name differs: the
 * client's field is dropped when none of them is upstream. A field not listed is carried by its own name.
 * Fields the other API lacks (Anthropic's `context_management`, `top_k`; Chat's `n`, `seed`) have no
 * carrier but their name, which the other body never holds: a gateway that translates drops them.
 */
const CARRIERS: Readonly<Record<`${Family}>${Family}`, Readonly<Record<string, readonly string[]>>>> = {
  'messages>messages': {},
  'chat>chat': {
    max_tokens: ['max_tokens', 'max_completion_tokens'],
    max_completion_tokens: ['max_tokens', 'max_completion_tokens'],
  },
  'messages>chat': {
    system: ['messages'],
    max_tokens: ['max_tokens', 'max_completion_tokens'],
    stop_sequences: ['stop'],
    // OpenAI's Chat takes an effort; DeepSeek's and the compatible ones' take `thinking` itself.
    thinking: ['reasoning_effort', 'thinking'],
    output_config: ['reasoning_effort', 'verbosity', 'response_format'],
    metadata: ['metadata', 'user', 'safety_identifier'],
    tool_choice: ['tool_choice', 'parallel_tool_calls'],
  },
  'chat>messages': {
    messages: ['messages', 'system'],
    max_tokens: ['max_tokens'],
    max_completion_tokens: ['max_tokens'],
    stop: ['stop_sequences'],
    reasoning_effort: ['thinking', 'output_config'],
    verbosity: ['output_config'],
    response_format: ['output_config'],
    user: ['metadata'],
    safety_identifier: ['metadata'],
    parallel_tool_calls: ['tool_choice'],
    // Anthropic's stream always carries usage.
    stream_options: ['stream'],
  },
}

/**
 * The client's fields that nothing upstream carries, in the client's order: by name on one wire, through
 * `CARRIERS` across a translation. Empty across wires it has no table for (it would only guess).
 */
export function droppedFields(client: WireSide, upstream: WireSide): string[] {
  const from = FAMILY[bodyShape(client.api)]
  const to = FAMILY[bodyShape(upstream.api)]
  if (from === undefined || to === undefined) return []
  const carriers = CARRIERS[`${from}>${to}`]
  return Object.keys(client.body).filter((field) => {
    if (field === 'model' || client.body[field] === undefined || client.body[field] === null) return false
    const names = carriers[field] ?? [field]
    return !names.some((name) => upstream.body[name] !== undefined && upstream.body[name] !== null)
  })
}

/** What the upstream request had, as the gateway got it and as the provider counted it. */
export interface UpstreamUsage {
  api: WireApi
  body: Record<string, unknown>
  /** The usage the provider reported to the gateway; absent when it reported none. */
  usage: Usage | undefined
  /** The provider's count where the gateway got none: the simulator's (serving it, or predicting a live one). */
  counted: { input: number; output: number } | undefined
}

/**
 * The usage changes across a gateway for a request both sides answered: the client told nothing, or every
 * count 0, while the upstream request had tokens. `told` is the usage the client received.
 */
export function usageChanges(told: Usage | undefined, upstream: UpstreamUsage): GatewayChange[] {
  const had = upstream.usage ?? upstream.counted
  if (had === undefined || had.input === 0) return []
  const where =
    upstream.usage !== undefined
      ? 'reported to the gateway'
      : `not reported to the gateway${unaskedStreamUsage(upstream) ? ': streamed without stream_options.include_usage' : ''}`
  // Not reported, the count is the simulator's: what it served, or its prediction of a live provider.
  const counter = upstream.usage !== undefined ? '' : " by the simulator's count"
  const upstreamText = `upstream had ${had.input} input and ${had.output} output tokens${counter} (${where})`
  if (told === undefined)
    return [{ kind: 'gateway-usage-dropped', detail: `no usage to the client, ${upstreamText}` }]
  if (told.input === 0 && told.output === 0)
    return [{ kind: 'gateway-usage-zeroed', detail: `usage all 0 to the client, ${upstreamText}` }]
  return []
}

/** The kinds `check` names beside its verdict: what the gateway did that no row's numbers show. */
const NOTED: readonly GatewayChangeKind[] = [
  'gateway-usage-zeroed',
  'gateway-usage-dropped',
  'gateway-model-changed',
  'gateway-fields-dropped',
]

/** How many distinct details a note lists. */
const NOTED_DETAILS = 3

/**
 * Lines for `check` from changes.csv's `changes` cells (one per pair, `kind: detail; kind: detail`): per
 * kind of `NOTED`, on how many requests and what (a usage change without its per-request counts).
 */
export function gatewayNotes(cells: readonly string[]): string[] {
  const found = new Map<GatewayChangeKind, { count: number; details: Set<string> }>()
  for (const cell of cells) {
    for (const text of cell.split(/; (?=gateway-)/)) {
      const split = text.indexOf(': ')
      const kind = (split < 0 ? text : text.slice(0, split)) as GatewayChangeKind
      if (!NOTED.includes(kind)) continue
      const detail = split < 0 ? '' : text.slice(split + 2)
      const entry = found.get(kind) ?? { count: 0, details: new Set<string>() }
      entry.count += 1
      entry.details.add(kind.startsWith('gateway-usage-') ? usageGist(detail) : detail)
      found.set(kind, entry)
    }
  }
  return NOTED.flatMap((kind) => {
    const entry = found.get(kind)
    if (entry === undefined) return []
    const details = [...entry.details]
    const listed = details.slice(0, NOTED_DETAILS).join(' | ')
    const more = details.length > NOTED_DETAILS ? ` (+${details.length - NOTED_DETAILS} more)` : ''
    return [`${kind} on ${entry.count} of ${cells.length} requests: ${listed}${more}`]
  })
}

/** A usage change's detail without the request's own counts: what happened, and why where known. */
function usageGist(detail: string): string {
  return detail.replace(
    /upstream had \d+ input and \d+ output tokens/,
    'while the upstream request had tokens',
  )
}

/** A Chat Completions stream that did not ask for its usage: the provider sends none. */
function unaskedStreamUsage(upstream: UpstreamUsage): boolean {
  return (
    FAMILY[bodyShape(upstream.api)] === 'chat' &&
    upstream.body.stream === true &&
    asRecord(upstream.body.stream_options).include_usage !== true
  )
}
