// Attribution: for a request that does not extend the previous request of its session, the first wire
// node where they diverge, the session event that produced it (through the wire provenance), and a
// cause; for a request that extends it but read less than it could, the provider-side cause.

import type { Seq, SessionEvent, WireSources } from '../harness/types.ts'
import { describeNode } from '../providers/sim/prompt.ts'
import { sameSegment } from '../providers/sim/trie.ts'
import type { Prompt, SimTrace, WireNode } from '../providers/sim/types.ts'
import type { BreakCause } from './types.ts'

/** What attribution needs to know about one request. */
export interface AttributedRequest {
  prompt: Prompt
  body: Record<string, unknown>
  sources: WireSources
  trace: SimTrace
}

/** The break of one request, if any. */
export interface Attribution {
  node?: string
  eventSeq?: Seq
  cause: BreakCause
}

/** Index of the first segment where `current` stops extending `previous`; undefined when it extends it. */
export function firstDivergence(previous: Prompt, current: Prompt): number | undefined {
  const limit = previous.segments.length
  const start = current.base?.segments === previous.segments ? Math.min(current.base.count, limit) : 0
  for (let index = start; index < limit; index += 1) {
    const before = previous.segments[index]
    const now = current.segments[index]
    if (before !== now && !sameSegment(before, now)) return index
  }
  return undefined
}

function sourcesOf(node: WireNode, sources: WireSources): Seq[] {
  switch (node.part) {
    case 'tools':
    case 'response_format':
      return sources.tools
    case 'system':
      return sources.system
    case 'messages':
    case 'input':
      return sources.messages[node.index] ?? []
  }
}

function wireNodeJson(body: Record<string, unknown>, node: WireNode): string | undefined {
  // The system slot is `system` on Anthropic and `instructions` on Responses.
  const part = node.part === 'system' ? (body.system ?? body.instructions) : body[node.part]
  if (!Array.isArray(part)) return typeof part === 'string' ? part : undefined
  return JSON.stringify(part[node.index])
}

/** Why the node produced by `event` differs, from the event's own nature. */
function causeOf(event: SessionEvent | undefined): BreakCause {
  if (event === undefined) return 'history-rewrite'
  const replaced = event.surfaceOp !== undefined && event.surfaceOp !== 'append'
  switch (event.type) {
    case 'system/message':
      return 'system-replace'
    case 'tool/result':
      return replaced ? 'tool-result-prune' : 'history-rewrite'
    case 'user/message':
      if (event.data.source.kind === 'plugin' && event.data.source.plugin === 'compaction')
        return 'compaction-summary'
      return 'history-rewrite'
    case 'request/header': {
      const reason = event.data.reason
      return reason === 'resume' || event.data.header.sessionPrefix !== undefined
        ? 'prefix-drift'
        : 'config-changed'
    }
    case 'image/offload':
      return 'image-offload'
    default:
      return 'history-rewrite'
  }
}

/**
 * The client-side break between two consecutive requests of a session, or undefined when `current`
 * extends `previous` on the same model.
 */
export function clientBreak(
  previous: AttributedRequest,
  current: AttributedRequest,
  events: (seq: Seq) => SessionEvent | undefined,
  offloads: (seq: Seq) => SessionEvent | undefined,
): Attribution | undefined {
  if (previous.body.model !== current.body.model) {
    const seq =
      current.sources.tools[0] ??
      current.sources.messages.flat().find((value) => events(value)?.type === 'request/header')
    return { node: 'model', ...(seq !== undefined ? { eventSeq: seq } : {}), cause: 'config-changed' }
  }
  const index = firstDivergence(previous.prompt, current.prompt)
  if (index === undefined) return undefined
  const segment = current.prompt.segments[index] ?? previous.prompt.segments[index]
  if (segment === undefined) return undefined
  const node = segment.node
  const label = describeNode(node)
  const seqs = sourcesOf(node, current.sources)
  const seq = seqs.length === 0 ? undefined : Math.max(...seqs)
  if (node.part === 'tools' || node.part === 'response_format') {
    return { node: label, ...(seq !== undefined ? { eventSeq: seq } : {}), cause: 'tools-changed' }
  }
  const previousNode = previous.prompt.segments[index]?.node
  const previousSeqs = previousNode === undefined ? [] : sourcesOf(previousNode, previous.sources)
  // The previous request ended with request-only messages that history has since overtaken.
  if (previousSeqs.length > 0 && previousSeqs.every((value) => events(value)?.type === 'request/header')) {
    const event = seq === undefined ? undefined : events(seq)
    if (event?.type !== 'request/header') {
      const headerSeq = previousSeqs[0] as number
      return { node: label, eventSeq: headerSeq, cause: 'after-slot' }
    }
  }
  // Same wire node, different prompt: a request-level setting folded into the prefix changed.
  if (
    previousNode !== undefined &&
    wireNodeJson(previous.body, previousNode) === wireNodeJson(current.body, node)
  ) {
    const offload = seq === undefined ? undefined : offloads(seq)
    if (offload !== undefined) return { node: label, eventSeq: offload.seq, cause: 'image-offload' }
    return { node: label, ...(seq !== undefined ? { eventSeq: seq } : {}), cause: 'config-changed' }
  }
  const offload = seq === undefined ? undefined : offloads(seq)
  if (offload !== undefined && events(seq as number)?.type === 'user/message') {
    return { node: label, eventSeq: offload.seq, cause: 'image-offload' }
  }
  const event = seq === undefined ? undefined : events(seq)
  return { node: label, ...(seq !== undefined ? { eventSeq: seq } : {}), cause: causeOf(event) }
}
