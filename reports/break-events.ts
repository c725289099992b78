// The session event behind a break, as the report shows it beside its seq: the event's type and a short
// description read from the session log, so "event 12" says what happened without opening the log.

import { unreachable } from '../harness/errors.ts'
import type { Message, SessionEvent } from '../harness/types.ts'
import { type SessionKey, sessionKeyString } from './session-key.ts'
import { countText } from './text-table.ts'
import type { StepRow } from './types.ts'

/** The event a break names, described. */
export interface BreakEvent extends SessionKey {
  /** The event's seq in its session log (the step row's `breakEventSeq`). */
  seq: number
  /** The event type, e.g. `system/message`. */
  type: SessionEvent['type']
  /** A short phrase: what the event did, with a quoted excerpt where it carries text. */
  description: string
}

/** Longest excerpt of an event's text, in characters. */
const EXCERPT_LENGTH = 48

/**
 * The events that the session's break rows name, described; one per seq. Only those, so a report holds
 * a few lines per session rather than its whole log.
 */
export function breakEventsOf(
  key: SessionKey,
  rows: readonly StepRow[],
  events: readonly SessionEvent[],
): BreakEvent[] {
  const seqs = new Set<number>()
  for (const row of rows) if (row.breakEventSeq !== undefined) seqs.add(row.breakEventSeq)
  if (seqs.size === 0) return []
  const bySeq = new Map(events.map((event) => [event.seq, event]))
  // The key's fields alone: a step row passed as the key must not ride along.
  const { scenario, variant, provider } = key
  return [...seqs].flatMap((seq) => {
    const event = bySeq.get(seq)
    return event === undefined
      ? []
      : [{ scenario, variant, provider, seq, type: event.type, description: describeEvent(event, bySeq) }]
  })
}

/** A lookup of described events by session and seq. */
export function breakEventIndex(
  events: readonly BreakEvent[],
): (key: SessionKey, seq: number) => BreakEvent | undefined {
  const index = new Map(events.map((event) => [`${sessionKeyString(event)}\u0000${event.seq}`, event]))
  return (key, seq) => index.get(`${sessionKeyString(key)}\u0000${seq}`)
}

/** What one event did, in a few words; `bySeq` resolves the events a compaction or offload points at. */
export function describeEvent(
  event: SessionEvent,
  bySeq: ReadonlyMap<number, SessionEvent> = new Map(),
): string {
  switch (event.type) {
    case 'session/start':
      return 'session started'
    case 'turn/start':
      return `turn ${event.data.turn} started`
    case 'turn/end':
      return `turn ${event.data.turn} ended (${event.data.reason})`
    case 'step/start':
      return `step ${event.data.turn}.${event.data.step} started`
    case 'step/end':
      return `step ${event.data.turn}.${event.data.step} ended`
    case 'user/message': {
      const source = event.data.source
      const who = source.kind === 'plugin' ? `plugin ${source.plugin}` : 'user'
      return `${replacing(event)}${who} message ${excerpt(messageText(event.data.message))}`
    }
    case 'system/message':
      return `${replacing(event)}system prompt ${excerpt(event.data.message.text)}`
    case 'developer/message':
      return `${replacing(event)}developer message ${excerpt(event.data.message.text)}`
    case 'assistant/message':
      return `${replacing(event)}assistant message ${excerpt(messageText(event.data.message))}`
    case 'assistant/attempt':
      return `attempt ${event.data.attempt} failed (${event.data.error.type})`
    case 'tool/call':
      return `call to ${event.data.name}`
    case 'tool/result':
      return `${replacing(event)}result of ${event.data.message.name}, ${characters(event.data.message.text)}`
    case 'request/header':
      return headerDescription(event, bySeq)
    case 'request/context':
      return `context ${event.data.provider} ${event.data.model} (${event.data.systemPromptUpdate === 'in-history' ? 'in-history' : 'unsupported'} route)`
    case 'compaction/start':
      return `${event.data.kind} compaction started${event.data.replayPrefix === true ? ' (replaying the prefix)' : ''}`
    case 'compaction/summary':
      return `summary replaced ${event.data.shadowedSeqs.length} ${event.data.shadowedSeqs.length === 1 ? 'event' : 'events'}`
    case 'compaction/prune': {
      const [targetSeq] = event.data.shadowedSeqs
      const target = targetSeq === undefined ? undefined : bySeq.get(targetSeq)
      const what = target?.type === 'tool/result' ? `result of ${target.data.message.name}` : 'tool result'
      return `pruned the ${what} (event ${targetSeq ?? '?'}) to its ${event.data.keep}`
    }
    case 'compaction/end':
      return 'compaction ended'
    case 'image/offload': {
      const images = event.data.targets.reduce((total, target) => total + target.imageIds.length, 0)
      return `offloaded ${images} ${images === 1 ? 'image' : 'images'} (${event.data.mode})`
    }
    case 'session/end-seed':
      return 'end of the seeded history'
    default:
      return unreachable(event)
  }
}

/** A header event: why it was written and what differs from the header before it. */
function headerDescription(
  event: SessionEvent<'request/header'>,
  bySeq: ReadonlyMap<number, SessionEvent>,
): string {
  const { header, reason } = event.data
  let previous: SessionEvent<'request/header'> | undefined
  for (let seq = event.seq - 1; seq >= 0 && previous === undefined; seq -= 1) {
    const candidate = bySeq.get(seq)
    if (candidate?.type === 'request/header') previous = candidate
  }
  const series = event.data.startsSeries === true ? ', new series' : ''
  if (previous === undefined) {
    // No header before it: say what this one carries.
    const parts = [
      header.system === undefined ? undefined : 'system prompt',
      header.tools === undefined
        ? undefined
        : `${header.tools.length} ${header.tools.length === 1 ? 'tool' : 'tools'}`,
      header.messagePrefix === undefined ? undefined : 'session prefix',
      header.afterSlot === undefined ? undefined : 'after-slot',
    ].filter((part) => part !== undefined)
    return `${reason} header${series}${parts.length === 0 ? '' : ` with ${parts.join(', ')}`}`
  }
  const before = previous.data.header
  const changes: string[] = []
  if (before.system !== header.system) changes.push('system prompt changed')
  const toolNames = (tools: typeof header.tools) => (tools ?? []).map((tool) => tool.name)
  const added = toolNames(header.tools).filter((name) => !toolNames(before.tools).includes(name))
  const removed = toolNames(before.tools).filter((name) => !toolNames(header.tools).includes(name))
  if (added.length + removed.length > 0)
    changes.push(
      `tools ${[...added.map((name) => `+${name}`), ...removed.map((name) => `−${name}`)].join(' ')}`,
    )
  else if (JSON.stringify(before.tools) !== JSON.stringify(header.tools))
    changes.push('tool definitions changed')
  for (const field of ['model', 'maxTokens', 'temperature'] as const) {
    if (before.config[field] !== header.config[field])
      changes.push(
        `${field} ${String(before.config[field] ?? 'unset')} → ${String(header.config[field] ?? 'unset')}`,
      )
  }
  if (JSON.stringify(before.messagePrefix) !== JSON.stringify(header.messagePrefix))
    changes.push('session prefix changed')
  if (JSON.stringify(before.afterSlot) !== JSON.stringify(header.afterSlot))
    changes.push('after-slot changed')
  return `${reason} header${series}${changes.length === 0 ? '' : `: ${changes.join('; ')}`}`
}

/** "replacing events 4–9: " for a surface replacement, nothing for an append. */
function replacing(event: SessionEvent): string {
  const operation = event.surfaceOp
  if (operation === undefined || operation === 'append') return ''
  return operation.startSeq === operation.endSeq
    ? `rewrote event ${operation.startSeq} as `
    : `rewrote events ${operation.startSeq}–${operation.endSeq} as `
}

function messageText(message: Message): string {
  switch (message.role) {
    case 'system':
    case 'developer':
    case 'tool':
      return message.text
    case 'user':
      return message.content
        .map((block) => (block.type === 'text' ? block.text : `[image ${block.width}×${block.height}]`))
        .join(' ')
    case 'assistant':
      return message.content
        .map((block) => (block.type === 'text' ? block.text : `[call ${block.name}]`))
        .join(' ')
    default:
      return unreachable(message)
  }
}

/** The start of a text on one line, quoted, with its length when cut. */
function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  if (flat.length <= EXCERPT_LENGTH) return `“${flat}”`
  return `“${flat.slice(0, EXCERPT_LENGTH - 1).trimEnd()}…” (${characters(text)})`
}

function characters(text: string): string {
  return `${countText(text.length)} characters`
}
