// A Bedrock Converse body as the Anthropic Messages body it stands for, so the Anthropic linearization
// and breakpoint machinery serve both: a `cachePoint` block becomes `cache_control` on the block before
// it, Converse blocks become Messages blocks, and where each Messages block came from is kept to name
// wire nodes in Converse's own indices. Bedrock's checkpoint rules are checked here, in its error shape.

import { asRecord } from '../../harness/json-fields.ts'
import { builtFrom, identicalPrefix } from '../../harness/lineage.ts'
import type { BedrockCacheRules } from '../catalog.ts'
import { type Prompt, type Segment, SimulatorRejection, type WireNode } from './types.ts'

type Body = Record<string, unknown>

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const asString = (value: unknown): string => (typeof value === 'string' ? value : '')

/** Bedrock's 400, with the `ValidationException` type its `x-amzn-ErrorType` header carries. */
export function validationException(message: string): SimulatorRejection {
  return new SimulatorRejection(400, message, { message })
}

/** A Messages body and, per Messages position, the Converse index it came from. */
export interface ConverseTranslation {
  body: Body
  /** Per Messages tool: its index in `toolConfig.tools` (cache points take indices too). */
  tools: number[]
  /** Per Messages system block: its index in `system`. */
  system: number[]
  /** Per message, per Messages block: its index in the Converse message's `content`. */
  blocks: number[][]
}

/** One translated message, memoized per Converse message object (a session resends the same objects). */
interface TranslatedMessage {
  message: Body
  blocks: number[]
}

const translatedMessages = new WeakMap<object, TranslatedMessage>()

/** A cache point's marker; its checks (type, TTL, place) are the caller's. */
function cacheControl(point: unknown): Body {
  const ttl = asRecord(point).ttl
  return typeof ttl === 'string' ? { type: 'ephemeral', ttl } : { type: 'ephemeral' }
}

/** A Converse tool-result content item as a Messages tool_result content part. */
function toolResultPart(value: unknown): Body {
  const part = asRecord(value)
  if (typeof part.text === 'string') return { type: 'text', text: part.text }
  if (part.json !== undefined) return { type: 'text', text: JSON.stringify(part.json) }
  if (part.image !== undefined) return imageBlock(part.image)
  return { type: 'text', text: JSON.stringify(part) }
}

function imageBlock(value: unknown): Body {
  const image = asRecord(value)
  const source = asRecord(image.source)
  return {
    type: 'image',
    source: { type: 'base64', media_type: `image/${asString(image.format)}`, data: asString(source.bytes) },
  }
}

/** One Converse content block as a Messages block (undefined for a cache point). */
function messagesBlock(value: unknown): Body | undefined {
  const block = asRecord(value)
  if (block.cachePoint !== undefined) return undefined
  if (typeof block.text === 'string') return { type: 'text', text: block.text }
  if (block.image !== undefined) return imageBlock(block.image)
  if (block.toolUse !== undefined) {
    const use = asRecord(block.toolUse)
    return { type: 'tool_use', id: asString(use.toolUseId), name: asString(use.name), input: use.input ?? {} }
  }
  if (block.toolResult !== undefined) {
    const result = asRecord(block.toolResult)
    return {
      type: 'tool_result',
      tool_use_id: asString(result.toolUseId),
      content: asArray(result.content).map(toolResultPart),
      ...(result.status === 'error' ? { is_error: true } : {}),
    }
  }
  if (block.reasoningContent !== undefined) {
    const reasoning = asRecord(block.reasoningContent)
    if (reasoning.redactedContent !== undefined)
      return { type: 'redacted_thinking', data: asString(reasoning.redactedContent) }
    const text = asRecord(reasoning.reasoningText)
    return { type: 'thinking', thinking: asString(text.text), signature: asString(text.signature) }
  }
  // Documents, videos, guard content, citations: cached as their JSON, keyed by their Converse name.
  const [key] = Object.keys(block)
  return { type: key ?? 'unknown', value: block[key ?? ''] ?? null }
}

/**
 * A list of Converse blocks (a message's content, `system`) as Messages blocks, each cache point marking
 * the block before it; `indices` gives each Messages block's Converse index.
 */
function translateBlocks(
  values: readonly unknown[],
  convert: (value: unknown) => Body | undefined,
): { blocks: Body[]; indices: number[] } {
  const blocks: Body[] = []
  const indices: number[] = []
  for (const [index, value] of values.entries()) {
    const point = asRecord(value).cachePoint
    const block = convert(value)
    if (block !== undefined) {
      blocks.push(block)
      indices.push(index)
    } else if (point !== undefined && blocks.length > 0) {
      const last = blocks.length - 1
      blocks[last] = { ...blocks[last], cache_control: cacheControl(point) }
    }
  }
  return { blocks, indices }
}

function translateMessage(value: unknown): TranslatedMessage {
  const key = typeof value === 'object' && value !== null ? value : undefined
  const known = key === undefined ? undefined : translatedMessages.get(key)
  if (known !== undefined) return known
  const message = asRecord(value)
  const { blocks, indices } = translateBlocks(asArray(message.content), messagesBlock)
  const translated = { message: { role: asString(message.role), content: blocks }, blocks: indices }
  if (key !== undefined) translatedMessages.set(key, translated)
  return translated
}

/** The Converse tool choice as Messages' `tool_choice` (it folds into the messages-level context). */
function toolChoice(value: unknown): Body | undefined {
  const choice = asRecord(value)
  if (choice.auto !== undefined) return { type: 'auto' }
  if (choice.any !== undefined) return { type: 'any' }
  if (choice.tool !== undefined) return { type: 'tool', name: asString(asRecord(choice.tool).name) }
  return undefined
}

/** Translate a Converse body (the SDK's command input: `modelId` and the request fields). */
export function translateConverse(body: Body): ConverseTranslation {
  const toolConfig = asRecord(body.toolConfig)
  const tools: Body[] = []
  const toolIndices: number[] = []
  for (const [index, value] of asArray(toolConfig.tools).entries()) {
    const entry = asRecord(value)
    if (entry.cachePoint !== undefined) {
      const last = tools.length - 1
      if (last >= 0) tools[last] = { ...tools[last], cache_control: cacheControl(entry.cachePoint) }
      continue
    }
    const spec = asRecord(entry.toolSpec)
    tools.push({
      name: asString(spec.name),
      description: asString(spec.description),
      input_schema: asRecord(spec.inputSchema).json ?? {},
    })
    toolIndices.push(index)
  }
  const system = translateBlocks(asArray(body.system), (value) => {
    const block = asRecord(value)
    if (block.cachePoint !== undefined) return undefined
    return typeof block.text === 'string' ? { type: 'text', text: block.text } : messagesBlock(value)
  })
  const messages = translateMessages(asArray(body.messages))
  const thinking = asRecord(body.additionalModelRequestFields).thinking
  const choice = toolChoice(toolConfig.toolChoice)
  return {
    body: {
      model: asString(body.modelId),
      ...(tools.length > 0 ? { tools } : {}),
      ...(system.blocks.length > 0 ? { system: system.blocks } : {}),
      messages: messages.messages,
      ...(choice !== undefined ? { tool_choice: choice } : {}),
      ...(thinking !== undefined ? { thinking } : {}),
    },
    tools: toolIndices,
    system: system.indices,
    blocks: messages.blocks,
  }
}

/**
 * The previous body's Converse messages and their translations: the next request repeats most of them.
 * The lists are this module's own: a call cuts them back to what it shares and extends them in place.
 */
let lastMessages: {
  converse: unknown[]
  /** The list `converse` was copied from, and the translation that went out (claims are about them). */
  source?: readonly unknown[]
  translated?: Body[]
  messages: Body[]
  blocks: number[][]
} = {
  converse: [],
  messages: [],
  blocks: [],
}

/** Cut `kept` back to its first `count` items and extend it with `from`'s items after them. */
function keepPrefix(kept: unknown[], from: readonly unknown[], count: number): void {
  kept.length = count
  for (let index = count; index < from.length; index += 1) kept.push(from[index])
}

/** Translate Converse messages; those the previous body shared (the same objects) are taken over. */
function translateMessages(converse: readonly unknown[]): { messages: Body[]; blocks: number[][] } {
  const last = lastMessages
  // Reset first: a throw below leaves no half-updated lists behind.
  lastMessages = { converse: [], messages: [], blocks: [] }
  const shared = identicalPrefix(converse, last.converse, last.source)
  keepPrefix(last.converse, converse, shared)
  const { messages, blocks } = last
  messages.length = shared
  blocks.length = shared
  for (let index = shared; index < converse.length; index += 1) {
    const translated = translateMessage(converse[index])
    messages.push(translated.message)
    blocks.push(translated.blocks)
  }
  const translated = messages.slice()
  builtFrom(translated, last.translated, shared)
  lastMessages = { ...last, source: converse, translated }
  return { messages: translated, blocks: blocks.slice() }
}

/** Where a cache point sits: the wire path Bedrock's errors name, and what precedes it. */
interface CachePointPlace {
  path: string
  point: Body
  /** The block before it in its list, undefined when it opens the list. */
  before: Body | undefined
}

/** The cache points of one list of blocks; `path` names the list. */
function pointsOf(values: readonly unknown[], path: string): CachePointPlace[] {
  const places: CachePointPlace[] = []
  for (const [index, value] of values.entries()) {
    const point = asRecord(value).cachePoint
    if (point !== undefined)
      places.push({
        path: `${path}.${index}`,
        point: asRecord(point),
        before: index === 0 ? undefined : asRecord(values[index - 1]),
      })
  }
  return places
}

/**
 * The previous body's messages and the cache points in them, with how many points precede each message:
 * a message repeated in the same place has the same points, so only the messages a request added are scanned.
 */
let lastPoints: {
  messages: unknown[]
  /** The list `messages` was copied from (its successor's claim is about it). */
  source?: readonly unknown[]
  places: CachePointPlace[]
  before: number[]
} = {
  messages: [],
  places: [],
  before: [0],
}

function messagePoints(messages: readonly unknown[]): CachePointPlace[] {
  const last = lastPoints
  // Reset first (the lists are cut back and extended in place): a throw leaves none half updated.
  lastPoints = { messages: [], places: [], before: [0] }
  const shared = identicalPrefix(messages, last.messages, last.source)
  keepPrefix(last.messages, messages, shared)
  const { before, places } = last
  before.length = shared + 1
  places.length = before[shared] ?? 0
  for (let index = shared; index < messages.length; index += 1) {
    places.push(...pointsOf(asArray(asRecord(messages[index]).content), `messages.${index}.content`))
    before.push(places.length)
  }
  lastPoints = { ...last, source: messages }
  return places.slice()
}

function cachePoints(body: Body): CachePointPlace[] {
  return [
    ...pointsOf(asArray(asRecord(body.toolConfig).tools), 'toolConfig.tools'),
    ...pointsOf(asArray(body.system), 'system'),
    ...messagePoints(asArray(body.messages)),
  ]
}

/**
 * Bedrock's checks of a request's cache points, in prompt order (tools, system, messages): the type, a
 * TTL the model takes, a place the model takes one (not in tools on Nova, not first in its list, not
 * after reasoning), at most `maxBreakpoints`, and TTLs that never increase along the prompt. Only the
 * reasoning message is Bedrock's own wording (anomalyco/opencode#36517); the count and TTL-order ones
 * are the Anthropic model's, which Bedrock passes on; the others are ours.
 */
export function checkCachePoints(body: Body, rules: BedrockCacheRules): void {
  const places = cachePoints(body)
  let shortSeen = false
  for (const { path, point, before } of places) {
    if (point.type !== 'default')
      throw validationException(
        `${path}.cachePoint.type: expected "default", got ${JSON.stringify(point.type)}`,
      )
    const ttl = point.ttl ?? '5m'
    if (ttl !== '5m' && ttl !== '1h')
      throw validationException(`${path}.cachePoint.ttl: expected "5m" or "1h", got ${JSON.stringify(ttl)}`)
    if (!rules.ttlOptions.includes(ttl))
      throw validationException(
        `The cache TTL ${ttl} is not supported for this model (${path}.cachePoint.ttl).`,
      )
    if (path.startsWith('toolConfig') && !rules.toolCheckpoints)
      throw validationException(
        `Cache points in toolConfig.tools are not supported for this model (${path}).`,
      )
    if (before === undefined)
      throw validationException(`A cache point must follow a content block (${path} opens its list).`)
    if (before.reasoningContent !== undefined)
      throw validationException(
        'Cache point cannot be inserted after reasoning block. Please remove the invalid cache point and try again.',
      )
    if (ttl === '5m') shortSeen = true
    else if (shortSeen)
      throw validationException(
        `The model returned the following errors: ${path}.cachePoint.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: \`tools\`, \`system\`, \`messages\`.`,
      )
  }
  if (places.length > rules.maxBreakpoints)
    throw validationException(
      `The model returned the following errors: A maximum of ${rules.maxBreakpoints} blocks with cache_control may be provided. Found ${places.length}.`,
    )
}

/** The Converse node of a Messages node, by the translation's index maps. */
export function converseNode(node: WireNode, translation: ConverseTranslation): WireNode {
  switch (node.part) {
    case 'tools':
      return { ...node, index: translation.tools[node.index] ?? node.index }
    case 'system':
      return { ...node, index: translation.system[node.index] ?? node.index }
    case 'messages': {
      if (node.block === undefined) return node
      return { ...node, block: translation.blocks[node.index]?.[node.block] ?? node.block }
    }
    case 'input':
    case 'response_format':
    case 'contents':
      return node
  }
}

/**
 * Segments renamed to Converse nodes. A segment object the Anthropic linearizer reuses comes from the
 * same Converse message in the same place, so its renamed copy is reused too.
 */
const renamed = new WeakMap<Segment, Segment>()

export function converseSegments(segments: readonly Segment[], translation: ConverseTranslation): Segment[] {
  return segments.map((segment) => renamedSegment(segment, translation))
}

function renamedSegment(segment: Segment, translation: ConverseTranslation): Segment {
  const known = renamed.get(segment)
  if (known !== undefined) return known
  const copy = { ...segment, node: converseNode(segment.node, translation) }
  renamed.set(segment, copy)
  return copy
}

/** A prompt and the one its segments were renamed into. */
export interface RenamedPrompt {
  anthropic: Prompt
  converse: Prompt
}

/**
 * A linearized prompt with its segments renamed to Converse nodes, and without its `base` hint (which
 * names the Anthropic segment arrays). When the prompt took its leading segments over from `last`'s
 * Anthropic prompt, the renamed prompt takes them over from `last`'s renamed one and names it as its
 * base: a session's history is renamed once, and the next comparison with it is a pointer check.
 */
export function conversePrompt(
  prompt: Prompt,
  translation: ConverseTranslation,
  last?: RenamedPrompt,
): Prompt {
  const { base, ...rest } = prompt
  if (base === undefined || last === undefined || base.segments !== last.anthropic.segments)
    return { ...rest, segments: converseSegments(prompt.segments, translation) }
  const kept = last.converse.segments
  const segments = kept.slice(0, base.count)
  for (let index = base.count; index < prompt.segments.length; index += 1)
    segments.push(renamedSegment(prompt.segments[index] as Segment, translation))
  return { ...rest, segments, base: { segments: kept, count: base.count } }
}
