// The request a DSH log holds: its model-visible surface (the message events folded by their surface
// operations) and its request header, rebuilt into the DeepSeek Chat Completions body DSH's own DeepSeek
// adapter sends — the agent loop's request assembly (header config, system, tools, the derived
// messages) and the adapter's serialization, as deepseek-harness builds them at b150a551.

import type { JsonValue, ToolCallBlock } from '../../../harness/types.ts'
import { type Fields, fieldsOf, listOf, textOf } from './fields.ts'
import type { TranscriptEvent } from './types.ts'

/** The deepseek-harness commit whose serialization the rebuilt body follows. */
export const DSH_SERIALIZER_REVISION = 'b150a551'

/** A `request/header` snapshot's `header`: the call config, adapter defaults, system prompt and tools. */
export interface DshHeader {
  config: Fields
  /** Which config fields the adapter supplied (`reasoningEffort`, `maxTokens`: true). */
  adapterDefaults: Fields
  /** The system prompt (absent for a system-less request). */
  system: string | undefined
  /** The tool schemas `{name, description, parameters}` in order; anything else when a snapshot tool replaced them. */
  tools: unknown
}

/** A DeepSeek Chat Completions message as DSH's adapter writes it. */
export type DshWireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | {
      role: 'assistant'
      content: string
      reasoning_content?: string
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>
    }
  | { role: 'tool'; tool_call_id: string; content: string }

/** One node of the surface: the event that placed it and the wire messages it serializes to. */
interface SurfaceNode {
  seq: number
  wire: readonly DshWireMessage[]
  /** The message held an image, which the rebuilt body leaves out. */
  image: boolean
  /** A `system/message` node's text ("" for an empty node, which keeps its place but sends nothing). */
  system?: string
}

/** A live system node of the surface, in surface order (generation C keeps the prompt there). */
export interface DshSystemNode {
  seq: number
  text: string
}

/** A header as read from a `request/header` event's data. */
export function readHeader(data: Fields): DshHeader {
  const header = fieldsOf(data.header)
  return {
    config: fieldsOf(header.config),
    adapterDefaults: fieldsOf(header.adapterDefaults),
    // DSH's canonical header drops an empty prompt and an empty tool list.
    system: textOf(header.system) || undefined,
    tools: Array.isArray(header.tools) && header.tools.length === 0 ? undefined : header.tools,
  }
}

/** A `{{name}}` value: the DSH snapshot tool put it where a volatile value was. */
function isPlaceholder(value: unknown): boolean {
  return typeof value === 'string' && /^\{\{\w+\}\}$/.test(value)
}

/** The text blocks of a content list joined, as the adapter flattens user and tool-result content. */
function flattenText(blocks: readonly unknown[]): string {
  return blocks
    .map(fieldsOf)
    .filter((block) => block.type === 'text')
    .map((block) => textOf(block.text) ?? '')
    .join('')
}

function hasImage(blocks: readonly unknown[]): boolean {
  return blocks.map(fieldsOf).some((block) => block.type === 'image' || hasImage(listOf(block.content)))
}

/** An assistant message's wire form: text ("" rather than null), reasoning passed back, tool calls. */
function assistantWire(content: readonly unknown[]): DshWireMessage {
  const blocks = content.map(fieldsOf)
  const reasoning = blocks
    .filter((block) => block.type === 'reasoning')
    .map((block) => textOf(block.text) ?? '')
    .join('')
  const calls = blocks
    .filter((block) => block.type === 'tool-call')
    .map((block) => ({
      id: textOf(block.id) ?? '',
      type: 'function' as const,
      function: { name: textOf(block.name) ?? '', arguments: textOf(block.arguments) ?? '' },
    }))
  return {
    role: 'assistant',
    content: flattenText(content),
    ...(reasoning.length > 0 ? { reasoning_content: reasoning } : {}),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  }
}

/** A system message's text: its text blocks joined (or its content, when that is a string). */
export function systemText(message: unknown): string {
  const content = fieldsOf(message).content
  return typeof content === 'string' ? content : flattenText(listOf(content))
}

/**
 * A DSH message's wire messages: a user message's text (when it has any, or no tool results), then one
 * `tool` message per tool result (empty output sent as `(no output)`); an assistant message as one; a
 * system message as one `system` message wherever it sits (DSH's DeepSeek adapter keeps its role), or
 * none when empty (generation C projects an empty system node to nothing).
 */
export function wireMessages(message: unknown): DshWireMessage[] {
  const fields = fieldsOf(message)
  const content = listOf(fields.content)
  if (fields.role === 'system') {
    const text = systemText(message)
    return text === '' ? [] : [{ role: 'system', content: text }]
  }
  if (fields.role === 'assistant') return [assistantWire(content)]
  const results = content.map(fieldsOf).filter((block) => block.type === 'tool-result')
  const text = flattenText(content)
  const wire: DshWireMessage[] = []
  if (text.length > 0 || results.length === 0) wire.push({ role: 'user', content: text })
  for (const result of results) {
    wire.push({
      role: 'tool',
      tool_call_id: textOf(result.toolCallId) ?? '',
      content: flattenText(listOf(result.content)) || '(no output)',
    })
  }
  return wire
}

/** An assistant message's answer in cachelab's vocabulary (text and tool calls) and its reasoning. */
export function answerOf(message: unknown): {
  content: Array<{ type: 'text'; text: string } | ToolCallBlock>
  reasoning: string | undefined
} {
  const blocks = listOf(fieldsOf(message).content).map(fieldsOf)
  const content: Array<{ type: 'text'; text: string } | ToolCallBlock> = []
  let reasoning = ''
  for (const block of blocks) {
    if (block.type === 'text') content.push({ type: 'text', text: textOf(block.text) ?? '' })
    if (block.type === 'tool-call')
      content.push({
        type: 'tool-call',
        callId: textOf(block.id) ?? '',
        name: textOf(block.name) ?? '',
        arguments: textOf(block.arguments) ?? '',
      })
    if (block.type === 'reasoning') reasoning += textOf(block.text) ?? ''
  }
  return { content, reasoning: reasoning === '' ? undefined : reasoning }
}

/**
 * The thinking fields the adapter derives from the header's effort: `off` turns thinking off; `low`,
 * `high`, `max` turn it on at that effort. Without an effort the adapter's configured default applies,
 * which the log does not hold.
 */
function thinkingFields(effort: unknown): { fields: Fields; estimated?: string } {
  if (effort === 'off') return { fields: { thinking: { type: 'disabled' } } }
  if (effort === 'low' || effort === 'high' || effort === 'max')
    return { fields: { thinking: { type: 'enabled' }, reasoning_effort: effort } }
  return {
    fields: {},
    estimated:
      effort === undefined
        ? "thinking fields: the adapter's configured default is not logged (none sent)"
        : `thinking fields: effort ${JSON.stringify(effort)} is not one DSH's DeepSeek adapter takes (none sent)`,
  }
}

/** The header's part of a body (everything but the messages after the system slot), with what it estimates. */
interface Head {
  system: DshWireMessage | undefined
  fields: Fields
  estimated: string[]
}

function headOf(header: DshHeader): Head {
  const { config } = header
  const estimated: string[] = []
  const thinking = thinkingFields(config.reasoningEffort)
  if (thinking.estimated !== undefined) estimated.push(thinking.estimated)
  if (isPlaceholder(header.system)) estimated.push('the system prompt is a snapshot placeholder')
  let tools: unknown[] | undefined
  if (Array.isArray(header.tools)) {
    tools = header.tools.map((value) => {
      const tool = fieldsOf(value)
      return {
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.parameters },
      }
    })
  } else if (header.tools !== undefined) {
    estimated.push('the tool schemas are a snapshot placeholder (none sent)')
  }
  const fields: Fields = {
    model: config.model,
    stream: true,
    stream_options: { include_usage: true },
    ...thinking.fields,
    ...(tools !== undefined && tools.length > 0 ? { tools } : {}),
    ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
    ...(config.maxTokens !== undefined ? { max_tokens: config.maxTokens } : {}),
    ...(config.stop !== undefined ? { stop: config.stop } : {}),
  }
  const system: DshWireMessage | undefined =
    header.system === undefined ? undefined : { role: 'system', content: header.system }
  return { system, fields, estimated }
}

/**
 * The surface and header of one DSH log, folded event by event, and the body of the next request.
 * Wire messages are built once per surface node and shared by every body that repeats them, so a
 * session's bodies cost one array of references each and the simulator reuses its linearization.
 */
export class DshRequestBuilder {
  private nodes: SurfaceNode[] = []
  private head: Head | undefined

  /** The header the next requests are built under. */
  setHeader(header: DshHeader): void {
    this.head = headOf(header)
  }

  /** A message event appended at the tail of the surface. */
  append(seq: number, message: unknown): void {
    this.nodes.push(this.nodeOf(seq, message))
  }

  /**
   * A message event replacing the surface nodes from `start` through `end` (both seqs, positions on the
   * surface). Returns why it cannot, when either is not on the surface or `start` comes after `end`.
   */
  replace(seq: number, start: number, end: number, message: unknown): string | undefined {
    const first = this.nodes.findIndex((node) => node.seq === start)
    const last = this.nodes.findIndex((node) => node.seq === end)
    if (first === -1 || last === -1 || first > last)
      return `a surface replacement of ${start}..${end} that is not a range of the surface`
    this.nodes.splice(first, last - first + 1, this.nodeOf(seq, message))
    return undefined
  }

  /** The live `system/message` nodes, in surface order (empty ones included). */
  systemNodes(): DshSystemNode[] {
    return this.nodes.flatMap((node) =>
      node.system === undefined ? [] : [{ seq: node.seq, text: node.system }],
    )
  }

  /** The body of a request sent now, or undefined before any header. */
  build(): { body: Record<string, unknown>; estimated: string } | undefined {
    const head = this.head
    if (head === undefined) return undefined
    const messages: DshWireMessage[] = head.system === undefined ? [] : [head.system]
    let image = false
    for (const node of this.nodes) {
      messages.push(...node.wire)
      image ||= node.image
    }
    const estimated = [
      `serialized as deepseek-harness ${DSH_SERIALIZER_REVISION} does (the logging release may differ)`,
      ...head.estimated,
      ...(image ? ['image parts left out (attachments are not in the log)'] : []),
    ]
    return { body: { ...head.fields, messages }, estimated: estimated.join('; ') }
  }

  private nodeOf(seq: number, message: unknown): SurfaceNode {
    const wire = wireOf(message)
    const system = fieldsOf(message).role === 'system' ? systemText(message) : undefined
    return {
      seq,
      wire,
      image: hasImage(listOf(fieldsOf(message).content)),
      ...(system !== undefined ? { system } : {}),
    }
  }
}

/**
 * Wire messages by the message object they serialize: a log's re-derivation (`--policy`) folds the same
 * events into a second surface, and sharing the wire objects lets a comparison of the two bodies stop at
 * reference equality and the simulators reuse their linearization.
 */
const WIRE_BY_MESSAGE = new WeakMap<object, readonly DshWireMessage[]>()

function wireOf(message: unknown): readonly DshWireMessage[] {
  if (typeof message !== 'object' || message === null) return wireMessages(message)
  let wire = WIRE_BY_MESSAGE.get(message)
  if (wire === undefined) {
    wire = wireMessages(message)
    WIRE_BY_MESSAGE.set(message, wire)
  }
  return wire
}

/** How two values print in a change detail: short scalars as JSON, anything else by kind. */
function shown(value: unknown): string {
  if (value === undefined) return 'unset'
  const json = JSON.stringify(value as JsonValue)
  return json.length <= 40 ? json : typeof value === 'string' ? 'a string' : 'a value'
}

/** A tool's name, for a change detail. */
const toolName = (tool: unknown) => textOf(fieldsOf(tool).name) ?? '?'

/** What changed in the tool list, in names: added, removed, changed schemas, or the order alone. */
function toolsDetail(before: readonly unknown[], after: readonly unknown[]): string {
  const schemas = new Map(before.map((tool) => [toolName(tool), JSON.stringify(tool)]))
  const names = new Set(after.map(toolName))
  const added = after.map(toolName).filter((name) => !schemas.has(name))
  const removed = [...schemas.keys()].filter((name) => !names.has(name))
  const changed = after
    .filter((tool) => schemas.has(toolName(tool)) && schemas.get(toolName(tool)) !== JSON.stringify(tool))
    .map(toolName)
  const parts = [
    ...(added.length > 0 ? [`added ${added.join(', ')}`] : []),
    ...(removed.length > 0 ? [`removed ${removed.join(', ')}`] : []),
    ...(changed.length > 0 ? [`changed ${changed.join(', ')}`] : []),
  ]
  return parts.length > 0 ? parts.join('; ') : 'reordered'
}

/**
 * The events a new header shows against the one in force: the system prompt, the tool list, and the
 * config apart from provider and model (a model change is reported from the requests' own models).
 */
export function headerChanges(before: DshHeader, after: DshHeader): TranscriptEvent[] {
  const events: TranscriptEvent[] = []
  if (before.system !== after.system) {
    const from = before.system ?? ''
    const to = after.system ?? ''
    let index = 0
    while (index < from.length && index < to.length && from[index] === to[index]) index += 1
    events.push({
      kind: 'system-change',
      detail: `${from.length} → ${to.length} characters, first difference at character ${index}`,
    })
  }
  if (JSON.stringify(before.tools) !== JSON.stringify(after.tools)) {
    events.push({ kind: 'tools-change', detail: toolsDetail(listOf(before.tools), listOf(after.tools)) })
  }
  const changed: string[] = []
  const keys = new Set([...Object.keys(before.config), ...Object.keys(after.config)])
  for (const key of keys) {
    if (key === 'provider' || key === 'model') continue
    const from = before.config[key]
    const to = after.config[key]
    if (JSON.stringify(from) !== JSON.stringify(to)) changed.push(`${key} ${shown(from)} → ${shown(to)}`)
  }
  if (JSON.stringify(before.adapterDefaults) !== JSON.stringify(after.adapterDefaults))
    changed.push('adapter defaults')
  if (changed.length > 0) events.push({ kind: 'config-change', detail: changed.join(', ') })
  return events
}
