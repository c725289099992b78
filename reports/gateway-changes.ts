// What a gateway changed in one request that matters to a cache: the body the client sent the gateway
// against the body the gateway sent upstream. Pure; the pairing and the cost are gateway-rows.ts's.

import { asRecord } from '../harness/json-fields.ts'
import { bodyShape, type WireApi } from '../providers/types.ts'
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
  const dropped = without(clientMarks, upstreamMarks)
  const added = without(upstreamMarks, clientMarks)
  if (dropped.length > 0 && added.length > 0)
    changes.push({
      kind: 'gateway-cache-marks-moved',
      detail: `from ${dropped.join(', ')} to ${added.join(', ')}`,
    })
  else if (dropped.length > 0)
    changes.push({ kind: 'gateway-cache-marks-dropped', detail: `${dropped.length}: ${dropped.join(', ')}` })
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
