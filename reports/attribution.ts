// Attribution: for a request that does not extend the previous request of its session, the first wire
// node where they diverge, the session event that produced it (through the wire provenance), and a
// cause; for a request that extends it but read less than it could, the provider-side cause.

import type { RequestHeader, Seq, SessionEvent, WireSources } from '../harness/types.ts'
import { firstDivergence } from '../providers/sim/counterfactual.ts'
import { describeNode } from '../providers/sim/prompt.ts'
import type { Prompt, SimTrace, WireNode } from '../providers/sim/types.ts'
import { bodyModel } from '../providers/types.ts'
import { configOf } from '../providers/wire/digest.ts'
import { changeAt, modelChange } from './break-change.ts'
import type { BreakCause, BreakChange } from './types.ts'

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
  /** What changed at the node, where the port held the two requests' content. */
  change?: BreakChange
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
    case 'contents':
      return sources.messages[node.index] ?? []
  }
}

function wireNodeJson(body: Record<string, unknown>, node: WireNode): string | undefined {
  // The system slot is `system` on Anthropic and `instructions` on Responses.
  // Gemini's is `systemInstruction.parts`.
  const geminiSystem = (body.systemInstruction as { parts?: unknown } | undefined)?.parts
  const part = node.part === 'system' ? (body.system ?? body.instructions ?? geminiSystem) : body[node.part]
  if (!Array.isArray(part)) return typeof part === 'string' ? part : undefined
  return JSON.stringify(part[node.index])
}

const nonEmpty = <T>(values: readonly T[] | undefined) => (values?.length === 0 ? undefined : values)

/**
 * The header parts a request sends after its tools, in wire order, each with the cause a change of it
 * names; empty parts compare as absent, as in the loop's header equality. Tools were compared node by
 * node before a header is asked, so a tools difference here is one the wire does not show. Config is
 * last: sampling settings are in no provider's cache key, so it is named only when nothing sent changed.
 */
const HEADER_PARTS: ReadonlyArray<{ cause: BreakCause; part: (header: RequestHeader) => unknown }> = [
  { cause: 'system-replace', part: (header) => (header.system === '' ? undefined : header.system) },
  { cause: 'prefix-drift', part: (header) => nonEmpty(header.messagePrefix) },
  { cause: 'after-slot', part: (header) => nonEmpty(header.afterSlot) },
  { cause: 'tools-changed', part: (header) => nonEmpty(header.tools) },
  { cause: 'config-changed', part: (header) => header.config },
]

/**
 * What a header changed against the header the previous request was built under: the first differing
 * part on the wire. A resume or series header that rewrote nothing a request sends falls back to
 * `config-changed` (request-level state), never to `prefix-drift`.
 */
function headerCause(previous: RequestHeader | undefined, current: RequestHeader): BreakCause {
  for (const { cause, part } of HEADER_PARTS) {
    const before = previous === undefined ? undefined : part(previous)
    if (JSON.stringify(before) !== JSON.stringify(part(current))) return cause
  }
  return 'config-changed'
}

/** Why the node produced by `event` differs, from the event's own nature (a header: from what it changed). */
function causeOf(event: SessionEvent | undefined, previousHeader: RequestHeader | undefined): BreakCause {
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
    case 'request/header':
      return headerCause(previousHeader, event.data.header)
    case 'image/offload':
      return 'image-offload'
    default:
      return 'history-rewrite'
  }
}

const isToolsPart = (node: WireNode | undefined) => node?.part === 'tools' || node?.part === 'response_format'

/** Every event seq a request was built from. */
function allSources(sources: WireSources): Seq[] {
  return [...sources.system, ...sources.tools, ...sources.messages.flat()]
}

/**
 * The request/header event a request was built under, wherever its sources name it (the first in
 * `allSources` order). Asked of every request: it walks the sources in place rather than copying a long
 * session's every source seq, and stops at the first header, which sits near the head.
 */
function headerSeqOf(sources: WireSources, events: (seq: Seq) => SessionEvent | undefined): Seq | undefined {
  const isHeader = (seq: Seq) => events(seq)?.type === 'request/header'
  const found = sources.system.find(isHeader) ?? sources.tools.find(isHeader)
  if (found !== undefined) return found
  for (const message of sources.messages) {
    const inMessage = message.find(isHeader)
    if (inMessage !== undefined) return inMessage
  }
  return undefined
}

/** The offload behind the first wire message whose JSON differs between the two requests, if any. */
function rewrittenByOffload(
  previous: AttributedRequest,
  current: AttributedRequest,
  offloads: (seq: Seq) => SessionEvent | undefined,
): SessionEvent | undefined {
  const messages = (body: Record<string, unknown>) =>
    (Array.isArray(body.messages)
      ? body.messages
      : Array.isArray(body.input)
        ? body.input
        : Array.isArray(body.contents)
          ? body.contents
          : []) as unknown[]
  const before = messages(previous.body)
  const now = messages(current.body)
  for (let index = 0; index < Math.min(before.length, now.length); index += 1) {
    if (JSON.stringify(before[index]) === JSON.stringify(now[index])) continue
    for (const seq of current.sources.messages[index] ?? []) {
      const offload = offloads(seq)
      if (offload !== undefined) return offload
    }
  }
  return undefined
}

const at = (node: string, eventSeq: Seq | undefined, cause: BreakCause): Attribution => ({
  node,
  ...(eventSeq !== undefined ? { eventSeq } : {}),
  cause,
})

/**
 * The client-side break between two consecutive requests of a session, or undefined when `current`
 * extends `previous` on the same model, with what changed at its node.
 */
export function clientBreak(
  previous: AttributedRequest,
  current: AttributedRequest,
  events: (seq: Seq) => SessionEvent | undefined,
  offloads: (seq: Seq) => SessionEvent | undefined,
): Attribution | undefined {
  const model = bodyModel(current.body)
  if (bodyModel(previous.body) !== model) {
    const found = at('model', headerSeqOf(current.sources, events), 'config-changed')
    return { ...found, change: modelChange(bodyModel(previous.body), model) }
  }
  const index = firstDivergence(previous.prompt, current.prompt)
  if (index === undefined) return undefined
  const found = divergedAt(previous, current, index, events, offloads)
  if (found?.node === undefined) return found
  const settings = { previous: configOf(previous.body), current: configOf(current.body) }
  const content = { previous: previous.prompt, current: current.prompt }
  return { ...found, change: changeAt(content, index, found.node, settings) }
}

/** The break at segment `index`, where `current` first stops extending `previous`: its node, event and cause. */
function divergedAt(
  previous: AttributedRequest,
  current: AttributedRequest,
  index: number,
  events: (seq: Seq) => SessionEvent | undefined,
  offloads: (seq: Seq) => SessionEvent | undefined,
): Attribution | undefined {
  const isHeader = (seq: Seq) => events(seq)?.type === 'request/header'
  // The header the previous request was built under, as its wire names it. A request that sent nothing
  // from its header had every header part empty, which is what an absent header compares as.
  const previousHeaderSeq = headerSeqOf(previous.sources, events)
  const previousHeaderEvent = previousHeaderSeq === undefined ? undefined : events(previousHeaderSeq)
  const previousHeader =
    previousHeaderEvent?.type === 'request/header' ? previousHeaderEvent.data.header : undefined
  const causeAt = (seq: Seq | undefined) =>
    causeOf(seq === undefined ? undefined : events(seq), previousHeader)
  const segment = current.prompt.segments[index] ?? previous.prompt.segments[index]
  if (segment === undefined) return undefined
  const node = segment.node
  const label = describeNode(node)
  const seqs = sourcesOf(node, current.sources)
  const seq = seqs.length === 0 ? undefined : Math.max(...seqs)
  const previousNode = previous.prompt.segments[index]?.node
  // A tool added, changed or removed. A removed last tool leaves the next part at its index: the node is
  // the tool that is gone, and the event the header that dropped it.
  if (isToolsPart(node)) return at(label, seq, 'tools-changed')
  if (previousNode !== undefined && isToolsPart(previousNode)) {
    return at(describeNode(previousNode), headerSeqOf(current.sources, events), 'tools-changed')
  }
  const previousSeqs = previousNode === undefined ? [] : sourcesOf(previousNode, previous.sources)
  // A request-only part is a message built from the header alone, or (Bedrock's Converse, which merges
  // consecutive same-role turns) a message the header's part was merged into.
  if (previousNode !== undefined && previousSeqs.length > 0 && previousSeqs.some(isHeader)) {
    // The previous request ended with request-only messages that history has since overtaken.
    const trailing = previous.sources.messages
      .slice(previousNode.index)
      .every((sources) => sources.length > 0 && sources.some(isHeader))
    if (trailing && !(seq !== undefined && isHeader(seq))) {
      return at(label, previousSeqs[0], 'after-slot')
    }
    // A request-only message at the head (a session prefix) that the current header no longer sends.
    if (!trailing && !(seq !== undefined && isHeader(seq))) {
      const headerSeq = headerSeqOf(current.sources, events)
      return at(label, headerSeq, causeAt(headerSeq))
    }
  }
  // Same wire node, different prompt: a request-wide setting folded into the prefix changed (whether
  // any images are present, a tool choice). Blame an image offload that rewrote a later message, else
  // the header or, failing that, the newest event the request gained.
  if (
    previousNode !== undefined &&
    wireNodeJson(previous.body, previousNode) === wireNodeJson(current.body, node)
  ) {
    const offload = rewrittenByOffload(previous, current, offloads)
    if (offload !== undefined) return at(label, offload.seq, 'image-offload')
    const before = new Set(allSources(previous.sources))
    const gained = allSources(current.sources).filter((value) => !before.has(value))
    const blamed = gained.find(isHeader) ?? (gained.length > 0 ? Math.max(...gained) : seq)
    return at(label, blamed, 'config-changed')
  }
  const offload = seq === undefined ? undefined : offloads(seq)
  if (offload !== undefined && events(seq as number)?.type === 'user/message') {
    return at(label, offload.seq, 'image-offload')
  }
  return at(label, seq, causeAt(seq))
}
