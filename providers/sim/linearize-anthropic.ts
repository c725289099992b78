// Linearizing an Anthropic Messages body into the order the provider caches it: tool definitions, then
// system blocks, then every message content block. Request settings that invalidate a level are folded
// into the frame of that level's first segment, so changing them breaks the prefix exactly there.

import { asRecord } from '../../harness/json-fields.ts'
import { identicalPrefix } from '../../harness/lineage.ts'
import type { Route } from '../../harness/types.ts'
import type { BillingBlock, ThinkingHistory } from '../catalog.ts'
import { anthropicImageTokens, pngSize, UNKNOWN_IMAGE_TOKENS } from './image.ts'
import { PromptBuilder, type RunState, type SegmentDraft } from './prompt.ts'
import type { TokenCounter } from './tokens.ts'
import { sameSegment } from './trie.ts'
import { type Breakpoint, type Prompt, type Segment, SimulatorRejection, type WireNode } from './types.ts'

type Body = Record<string, unknown>

/** Tokens framing a message (role markers), charged on its first block. An estimate, not published. */
const MESSAGE_FRAMING = 3
/** Tokens framing a tool_use block beyond its name and input (id and structure). An estimate. */
const TOOL_USE_FRAMING = 3
/** Tokens framing a tool_result block beyond its content (id and structure). An estimate. */
const TOOL_RESULT_FRAMING = 3
/** The assistant turn opener after the last block: billed as input, never cached. An estimate. */
const PRIMING = 3

/** Lifetimes of the two `cache_control` TTL options, in seconds. */
export type TtlTable = { '5m': number; '1h': number }

const DEFAULT_TTLS: TtlTable = { '5m': 300, '1h': 3600 }

/** A linearized Anthropic request with what breakpoint placement needs beyond the prompt. */
export interface AnthropicLayout {
  /** The segments, with the explicit `cache_control` markers as breakpoints. */
  prompt: Prompt
  /** Per segment: whether it may carry a breakpoint (not thinking, not empty text, not a string system). */
  eligible: boolean[]
  /** The top-level `cache_control` marker (automatic caching), when the body has one. */
  automatic: Breakpoint | undefined
  /** Indices of the segments carrying an explicit marker, in order. */
  marked: number[]
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const asString = (value: unknown): string => (typeof value === 'string' ? value : '')

/** The API's 400 for a request it refuses, in Anthropic's error shape. */
export function invalidRequest(message: string): SimulatorRejection {
  return new SimulatorRejection(400, message, {
    type: 'error',
    error: { type: 'invalid_request_error', message },
  })
}

/**
 * Refuse a `role: "system"` message inside `messages` on a model whose route reads the system prompt only
 * at the head: the API's 400, in the wording it answered with in 2026 (anthropics/claude-code#61412).
 * Models with the `in-history` route accept such messages and read them.
 */
export function checkSystemRoles(messages: readonly unknown[], route: Route, from = 0): void {
  switch (route) {
    case 'in-history':
      return
    case 'unsupported':
      for (let index = from; index < messages.length; index += 1) {
        if (asRecord(messages[index]).role === 'system')
          throw invalidRequest("role 'system' is not supported on this model")
      }
      return
  }
}

/** Claude Code's billing block: a system text block `x-anthropic-billing-header: cc_version=…; …`. */
export function isBillingBlock(block: unknown): boolean {
  const record = asRecord(block)
  return record.type === 'text' && asString(record.text).startsWith('x-anthropic-billing-header:')
}

/** A copy of a JSON value without any `cache_control` field: markers never change cached content. */
export function withoutMarkers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutMarkers)
  if (typeof value !== 'object' || value === null) return value
  const copy: Body = {}
  for (const [key, field] of Object.entries(value)) {
    if (key !== 'cache_control') copy[key] = withoutMarkers(field)
  }
  return copy
}

/** The breakpoint a `cache_control` value asks for; a TTL other than `5m` or `1h` is the API's 400. */
export function markerBreakpoint(
  marker: unknown,
  explicit: boolean,
  ttls: TtlTable = DEFAULT_TTLS,
): Breakpoint | undefined {
  if (marker === undefined || marker === null) return undefined
  const record = asRecord(marker)
  const ttl = record.ttl ?? '5m'
  if (record.type !== 'ephemeral' || (ttl !== '5m' && ttl !== '1h')) {
    throw invalidRequest(
      `cache_control: expected {"type": "ephemeral", "ttl": "5m" | "1h"}, got ${JSON.stringify(marker)}`,
    )
  }
  return { ttl, ttlSeconds: ttls[ttl], explicit }
}

/** Whether any image block appears anywhere in the messages, tool results included. */
function hasImage(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasImage)
  const record = asRecord(value)
  if (record.type === 'image') return true
  return Array.isArray(record.content) && record.content.some(hasImage)
}

/** Whether any document block turns citations on. */
function hasCitations(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasCitations)
  const record = asRecord(value)
  if (record.type === 'document' && asRecord(record.citations).enabled === true) return true
  return Array.isArray(record.content) && record.content.some(hasCitations)
}

/**
 * The settings whose change invalidates `messages` but keeps `tools` and `system` (tool choice,
 * thinking, effort, image presence), and those that also invalidate `system` (speed, citations).
 */
function levelContexts(
  body: Body,
  images: boolean,
  citations: boolean,
): { system: string; messages: string } {
  return {
    system: JSON.stringify({ speed: body.speed ?? null, citations }),
    messages: JSON.stringify({
      tool_choice: body.tool_choice ?? null,
      thinking: body.thinking ?? null,
      effort: asRecord(body.output_config).effort ?? null,
      images,
    }),
  }
}

function imageTokens(source: Body): number {
  const size = source.type === 'base64' ? pngSize(asString(source.data)) : undefined
  return size === undefined ? UNKNOWN_IMAGE_TOKENS : anthropicImageTokens(size)
}

/** What identifies an image: its payload (base64 data, URL or file id), never tokenized as text. */
function imageIdentity(source: Body): string {
  return `${asString(source.type)}|${asString(source.media_type)}|${asString(source.data ?? source.url ?? source.file_id)}`
}

/** A tool_result's content as text plus the identity and tokens of any images in it. */
function toolResultContent(content: unknown): { text: string; images: string; imageTokens: number } {
  if (typeof content === 'string') return { text: content, images: '', imageTokens: 0 }
  const texts: string[] = []
  const images: string[] = []
  let tokens = 0
  for (const value of asArray(content)) {
    const part = asRecord(value)
    if (part.type === 'text') texts.push(asString(part.text))
    else if (part.type === 'image') {
      const source = asRecord(part.source)
      images.push(imageIdentity(source))
      tokens += imageTokens(source)
    } else texts.push(JSON.stringify(withoutMarkers(part)))
  }
  return { text: texts.join('\n'), images: images.join('\u0002'), imageTokens: tokens }
}

/** Accumulates segments with their eligibility and the pending level context. */
class Layout {
  builder: PromptBuilder
  eligible: boolean[] = []
  /** Indices of the segments carrying an explicit `cache_control` marker. */
  marked: number[] = []
  private readonly counter: TokenCounter
  private readonly ttls: TtlTable
  /** Context folded into the next segment's frame (the first of its level). */
  pending = ''

  constructor(counter: TokenCounter, scale: number, ttls: TtlTable) {
    this.builder = new PromptBuilder(counter, scale)
    this.counter = counter
    this.ttls = ttls
  }

  tokens(text: string): number {
    return this.counter.count(text)
  }

  add(draft: SegmentDraft, marker: unknown, eligible: boolean): void {
    const breakpoint = markerBreakpoint(marker, true, this.ttls)
    const frame = this.pending === '' ? draft.frame : `${this.pending}\u0003${draft.frame}`
    this.pending = ''
    if (breakpoint !== undefined) this.marked.push(this.builder.mark())
    this.builder.add({ ...draft, frame, ...(breakpoint !== undefined ? { breakpoint } : {}) })
    this.eligible.push(eligible)
  }
}

/** One content block of a message (or of a system array) as a segment. */
function addBlock(layout: Layout, role: string, value: unknown, framing: number, node: WireNode): void {
  const block = asRecord(value)
  const type = asString(block.type)
  const frame = `${role}|${type}`
  switch (type) {
    case 'text': {
      const text = asString(block.text)
      const extra = block.citations === undefined ? '' : JSON.stringify(block.citations)
      layout.add({ frame: `${frame}|${extra}`, text, framing, node }, block.cache_control, text !== '')
      return
    }
    case 'image': {
      const source = asRecord(block.source)
      layout.add(
        {
          frame: `${frame}\u0002${imageIdentity(source)}`,
          text: '',
          framing,
          node,
          contentTokens: imageTokens(source),
        },
        block.cache_control,
        true,
      )
      return
    }
    case 'tool_use': {
      const name = asString(block.name)
      layout.add(
        {
          frame: `${frame}|${asString(block.id)}|${name}`,
          text: JSON.stringify(block.input ?? {}),
          framing: framing + TOOL_USE_FRAMING + layout.tokens(name),
          node,
          runKind: 'tool-use',
        },
        block.cache_control,
        true,
      )
      return
    }
    case 'tool_result': {
      const content = toolResultContent(block.content)
      layout.add(
        {
          frame: `${frame}|${asString(block.tool_use_id)}|${block.is_error === true}\u0002${content.images}`,
          text: content.text,
          framing: framing + TOOL_RESULT_FRAMING,
          node,
          contentTokens: content.imageTokens,
          runKind: 'tool-result',
        },
        block.cache_control,
        true,
      )
      return
    }
    case 'thinking':
      // Thinking blocks are cached as part of the prefix but cannot carry a breakpoint.
      layout.add(
        { frame: `${frame}|${asString(block.signature)}`, text: asString(block.thinking), framing, node },
        undefined,
        false,
      )
      return
    case 'redacted_thinking':
      layout.add({ frame, text: asString(block.data), framing, node }, undefined, false)
      return
    default:
      layout.add(
        { frame, text: JSON.stringify(withoutMarkers(block)), framing, node },
        block.cache_control,
        true,
      )
      return
  }
}

/** Whether a content block is a model's reasoning (thinking or its redacted form). */
function isThinking(block: unknown): boolean {
  const type = asRecord(block).type
  return type === 'thinking' || type === 'redacted_thinking'
}

/**
 * Index of the latest message that opens a user turn: a user message that is not only tool results.
 * Thinking before it belongs to earlier turns; thinking after it to the current (tool-use) turn.
 */
export function latestUserTurn(messages: readonly unknown[]): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = asRecord(messages[index])
    if (message.role !== 'user') continue
    const content = message.content
    const onlyResults =
      Array.isArray(content) &&
      content.length > 0 &&
      content.every((block) => asRecord(block).type === 'tool_result')
    if (!onlyResults) return index
  }
  return -1
}

/**
 * A message's content: a string is one segment; an array is one segment per block. With `stripThinking`
 * its thinking blocks are left out, as the API leaves an earlier turn's thinking out of the prompt.
 */
function addMessage(layout: Layout, message: Body, index: number, stripThinking = false): void {
  const role = asString(message.role)
  const node: WireNode = { part: 'messages', index }
  if (typeof message.content === 'string') {
    // The API reads a string as one text block (same identity); it cannot carry cache_control, but
    // automatic caching may still land on it.
    layout.add(
      { frame: `${role}|text|`, text: message.content, framing: MESSAGE_FRAMING, node },
      undefined,
      message.content !== '',
    )
    return
  }
  const blocks = asArray(message.content)
  if (blocks.length === 0) {
    layout.add({ frame: `${role}|empty`, text: '', framing: MESSAGE_FRAMING, node }, undefined, false)
    return
  }
  let framing = MESSAGE_FRAMING
  for (const [block, value] of blocks.entries()) {
    if (stripThinking && role === 'assistant' && isThinking(value)) continue
    addBlock(layout, role, value, framing, { ...node, block })
    framing = 0
  }
}

/**
 * The previous body linearized: its head (tools and system) segments, its messages, where each message's
 * segments start, the run state there, and the image and citation flags of each message prefix. The next
 * request of a session repeats most of it and takes those messages' segments over unchanged. Its lists
 * but the prompt, `eligible` and `marked` (which a layout returns) are this module's own: the next call
 * cuts them back to what it shares and extends them in place.
 */
interface LastLayout {
  key: string
  /** The route its messages passed `checkSystemRoles` under (none when they were not checked). */
  checked: Route | undefined
  /** The latest user turn of its messages: thinking before it was stripped (under `stripped`). */
  userTurn: number
  /** The level context folded into the first message segment's frame. */
  pending: string
  head: readonly Segment[]
  messages: unknown[]
  /** The list `messages` was copied from (its successor's claim is about it). */
  source?: readonly unknown[]
  /** Where each message's segments start in `prompt` (one more entry: where the messages end). */
  starts: number[]
  runs: RunState[]
  prompt: Prompt
  eligible: boolean[]
  marked: number[]
  images: boolean[]
  citations: boolean[]
}

let lastLayout: LastLayout = emptyLayout()

function emptyLayout(): LastLayout {
  return {
    key: '',
    checked: undefined,
    userTurn: -1,
    pending: '',
    head: [],
    messages: [],
    starts: [0],
    runs: [],
    prompt: { segments: [], cumulative: [], trailing: 0, total: 0 },
    eligible: [],
    marked: [],
    images: [false],
    citations: [false],
  }
}

/**
 * Linearize a Messages body: `tools` → `system` → `messages`, one segment per entry or block. With the
 * model's `route`, a body the API refuses for it throws its 400 first (a simulation passes it; a what-if
 * linearization of any body does not). Under `stripped` thinking history, the thinking blocks of turns
 * before the latest user turn are not part of the prompt.
 */
export function linearizeAnthropic(
  body: Body,
  counter: TokenCounter,
  scale: number,
  ttls: TtlTable = DEFAULT_TTLS,
  route?: Route,
  thinkingHistory: ThinkingHistory = 'kept',
  billingBlock: BillingBlock = 'cached',
): AnthropicLayout {
  const messages = asArray(body.messages)
  // Messages the previous body had in the same places (the same objects): their content is the same.
  const same = identicalPrefix(messages, lastLayout.messages, lastLayout.source)
  // Those passed the same route's check already.
  if (route !== undefined) checkSystemRoles(messages, route, lastLayout.checked === route ? same : 0)
  const key = `${scale}|${ttls['5m']}|${ttls['1h']}|${thinkingHistory}|${billingBlock}`
  const previous = lastLayout
  const last = previous.key === key ? previous : undefined
  // Its lists are cut back and extended below: reset first, so a throw leaves none half updated.
  lastLayout = emptyLayout()
  const seen = previous.messages
  seen.length = same
  for (let index = same; index < messages.length; index += 1) seen.push(messages[index])
  const strip = thinkingHistory === 'stripped'
  const userTurn = strip ? latestUserTurn(messages) : -1
  let shared = 0
  if (last !== undefined) {
    shared = same
    // A new user turn strips the thinking of the messages it now follows: those are linearized again.
    if (userTurn !== last.userTurn) shared = Math.min(shared, Math.max(0, Math.min(userTurn, last.userTurn)))
  }
  // Which messages prefixes hold an image or turn citations on: the shared part is known already.
  const images = last?.images ?? [false]
  const citations = last?.citations ?? [false]
  images.length = shared + 1
  citations.length = shared + 1
  for (let index = shared; index < messages.length; index += 1) {
    images.push((images[index] ?? false) || hasImage(messages[index]))
    citations.push((citations[index] ?? false) || hasCitations(messages[index]))
  }
  const contexts = levelContexts(body, images[messages.length] ?? false, citations[messages.length] ?? false)

  const layout = new Layout(counter, scale, ttls)
  for (const [index, tool] of asArray(body.tools).entries()) {
    // A deferred tool is rendered where history announces it, not in the tools prefix.
    if (asRecord(tool).defer_loading === true) continue
    layout.add(
      {
        frame: 'tool',
        text: JSON.stringify(withoutMarkers(tool)),
        framing: 0,
        node: { part: 'tools', index },
      },
      asRecord(tool).cache_control,
      true,
    )
  }
  layout.pending = `system:${contexts.system}`
  if (typeof body.system === 'string' && body.system !== '') {
    layout.add(
      {
        frame: 'system|text|',
        text: body.system,
        framing: MESSAGE_FRAMING,
        node: { part: 'system', index: 0 },
      },
      undefined,
      false,
    )
  } else {
    let first = true
    for (const [index, block] of asArray(body.system).entries()) {
      // The provider removes the billing block before it processes the prompt: nothing of it is cached or billed.
      if (billingBlock === 'stripped' && isBillingBlock(block)) continue
      addBlock(layout, 'system', block, first ? MESSAGE_FRAMING : 0, { part: 'system', index })
      first = false
    }
  }
  // With no system, the system-level context joins the messages-level one on the first message segment.
  layout.pending =
    layout.pending === ''
      ? `messages:${contexts.messages}`
      : `${layout.pending}\u0003messages:${contexts.messages}`
  const head = layout.builder.since(0)
  const headSame =
    last !== undefined &&
    head.length === last.head.length &&
    head.every(
      (segment, index) =>
        sameSegment(segment, last.head[index]) &&
        segment.breakpoint?.ttl === last.head[index]?.breakpoint?.ttl,
    )
  // Messages the previous body had in the same place, under the same head and level contexts, are taken
  // over with the head in one slice (the head's content is the same).
  const pending = layout.pending
  if (last === undefined || !headSame || last.pending !== pending) shared = 0
  let starts: number[] = []
  let runs: RunState[] = []
  if (shared > 0 && last !== undefined) {
    const end = last.starts[shared] ?? last.prompt.segments.length
    layout.builder = PromptBuilder.from(last.prompt, end, counter, scale, last.runs[shared])
    layout.eligible = last.eligible.slice(0, end)
    layout.marked = last.marked.filter((index) => index < end)
    layout.pending = ''
    starts = last.starts
    runs = last.runs
    starts.length = shared
    runs.length = shared
  }
  for (let index = shared; index < messages.length; index += 1) {
    starts[index] = layout.builder.mark()
    runs[index] = layout.builder.runState()
    addMessage(layout, asRecord(messages[index]), index, strip && index < userTurn)
  }
  starts[messages.length] = layout.builder.mark()
  runs[messages.length] = layout.builder.runState()
  const prompt = layout.builder.build(PRIMING)
  lastLayout = {
    key,
    checked: route,
    userTurn,
    pending,
    head,
    messages: seen,
    source: messages,
    starts,
    runs,
    prompt,
    eligible: layout.eligible,
    marked: layout.marked,
    images,
    citations,
  }
  return {
    prompt,
    eligible: layout.eligible,
    automatic: markerBreakpoint(body.cache_control, false, ttls),
    marked: layout.marked,
  }
}
