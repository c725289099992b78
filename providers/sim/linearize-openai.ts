// Linearizing OpenAI wire bodies (Chat Completions, which DeepSeek shares, and Responses) into the
// prompt order the provider caches: tool definitions first, then instructions and messages in order.

import { identicalPrefix } from '../../harness/lineage.ts'
import { openaiImageTokens, pngSize, UNKNOWN_IMAGE_TOKENS } from './image.ts'
import { joinPrefix, PromptBuilder, type SegmentDraft } from './prompt.ts'
import type { TokenCounter } from './tokens.ts'
import { sameSegment } from './trie.ts'
import type { Breakpoint, Prompt, Segment, WireNode, WirePart } from './types.ts'

type Body = Record<string, unknown>

/** Tokens framing each message (`<|start|>role<|message|>` … `<|end|>`), per the OpenAI cookbook. */
const MESSAGE_FRAMING = 3
/** The assistant priming appended after the last message; never part of a cached prefix. */
const PRIMING = 3

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const asRecord = (value: unknown): Body =>
  typeof value === 'object' && value !== null ? (value as Body) : {}
const asString = (value: unknown): string => (typeof value === 'string' ? value : '')

/** The explicit breakpoint a content part carries, with the request's TTL option. */
function partBreakpoint(part: Body, body: Body): Breakpoint | undefined {
  const marker = asRecord(part.prompt_cache_breakpoint)
  if (marker.mode !== 'explicit') return undefined
  const ttl = asString(asRecord(body.prompt_cache_options).ttl) || '30m'
  return { ttl, ttlSeconds: ttl === '30m' ? 1800 : 300, explicit: true }
}

function imagePartTokens(url: string, detail: string | undefined): number {
  const size = pngSize(url)
  return size === undefined ? UNKNOWN_IMAGE_TOKENS : openaiImageTokens(size, detail)
}

/** Tool definitions lead the prompt; a deferred one is rendered where history announces it, not here. */
function addTools(builder: PromptBuilder, body: Body): void {
  for (const [index, tool] of asArray(body.tools).entries()) {
    if (asRecord(tool).defer_loading === true) continue
    builder.add({ frame: 'tool', text: JSON.stringify(tool), framing: 0, node: { part: 'tools', index } })
  }
}

/** Content parts of a message as segments; the first carries the message framing. */
function addContent(
  builder: PromptBuilder,
  body: Body,
  frame: string,
  content: unknown,
  framing: number,
  node: { part: WirePart; index: number },
): number {
  if (typeof content === 'string') {
    builder.add({ frame, text: content, framing, node })
    return 1
  }
  let added = 0
  for (const [block, value] of asArray(content).entries()) {
    const part = asRecord(value)
    const draft: SegmentDraft = {
      frame: `${frame}|${asString(part.type)}`,
      text: '',
      framing: added === 0 ? framing : 0,
      node: { ...node, block },
    }
    const breakpoint = partBreakpoint(part, body)
    if (breakpoint !== undefined) draft.breakpoint = breakpoint
    switch (part.type) {
      case 'text':
      case 'input_text':
      case 'output_text':
      case 'refusal':
        draft.text = asString(part.text ?? part.refusal)
        break
      case 'image_url': {
        const image = asRecord(part.image_url)
        draft.text = asString(image.url)
        draft.contentTokens = imagePartTokens(draft.text, asString(image.detail) || undefined)
        draft.frame = `${draft.frame}|${asString(image.detail)}`
        break
      }
      case 'input_image':
        draft.text = asString(part.image_url ?? part.file_id)
        draft.contentTokens = imagePartTokens(draft.text, asString(part.detail) || undefined)
        draft.frame = `${draft.frame}|${asString(part.detail)}`
        break
      default:
        draft.text = JSON.stringify(part)
        break
    }
    // Text is what is tokenized; an image's bytes are priced by contentTokens, so it counts no text tokens.
    if (draft.contentTokens !== undefined) {
      builder.add({ ...draft, frame: `${draft.frame}\u0002${draft.text}`, text: '' })
    } else {
      builder.add(draft)
    }
    added += 1
  }
  if (added === 0) builder.add({ frame, text: '', framing, node })
  return Math.max(added, 1)
}

/**
 * Linearized items, per item object: a session's history reaches the simulator as the same objects
 * request after request (the adapters memoize them), so each item is linearized once. The context names
 * the API, since one object can be both a Chat message and a Responses input item.
 */
const itemMemo = new WeakMap<object, { index: number; context: string; segments: Segment[] }>()

/** A linearized list of items (messages, input items): where each item's segments start, and those segments. */
interface ItemCache {
  context: string
  /** Per item, what its rendering depended on beyond its content (its reasoning shown or left out). */
  variants: readonly string[]
  /** The variants' pivot (see `linearizeItems`), when the caller gave one. */
  pivot?: number
  /** The segments before the items (tools, instructions). */
  head: readonly Segment[]
  /** A copy of the caller's items: an element replaced in the caller's array must not look unchanged. */
  items: readonly unknown[]
  /** The caller's list itself, which the next list may claim to be built from (`builtFrom`). */
  source: readonly unknown[]
  /** Where each item's segments start in `prompt` (one more entry: where the items end). */
  starts: number[]
  prompt: Prompt
}

const EMPTY_CACHE: ItemCache = {
  context: '',
  variants: [],
  head: [],
  items: [],
  source: [],
  starts: [0],
  prompt: { segments: [], cumulative: [], trailing: 0, total: 0 },
}

/** The last Chat and Responses bodies linearized (one each): a session's next request repeats most of it. */
let lastChat = EMPTY_CACHE
let lastResponses = EMPTY_CACHE

/** Whether two segments sit at the same wire node. */
const sameNode = (left: WireNode | undefined, right: WireNode | undefined): boolean =>
  left !== undefined &&
  right !== undefined &&
  left.part === right.part &&
  left.index === right.index &&
  left.block === right.block

/** What else an item's segments depend on beyond its content (its reasoning shown or not), by index. */
type ItemVariant = (index: number) => string

const PLAIN: ItemVariant = () => ''

/**
 * Linearize a body of a head (tools, instructions) and items (messages, input items), taking over the
 * previous call's segments for the items this call repeats (the same objects, in the same places, under
 * the same head and context) in one slice, and linearizing the rest with `add`. An element replaced in
 * the caller's array is seen; an item object mutated in place is not (its segments are memoized).
 *
 * `pivot`, when given, says that an item's variant depends only on the item, its index and which side of
 * the pivot that index lies on (DeepSeek's latest user message, Responses' latest user item): a repeated
 * item can then render otherwise only between the previous pivot and this one, and only those are checked.
 */
function linearizeItems(
  counter: TokenCounter,
  scale: number,
  addHead: (builder: PromptBuilder) => void,
  items: readonly unknown[],
  context: string,
  previous: ItemCache,
  add: (builder: PromptBuilder, value: unknown, index: number) => void,
  variant: ItemVariant = PLAIN,
  pivot?: number,
): ItemCache {
  let builder = new PromptBuilder(counter, scale)
  addHead(builder)
  const head = builder.since(0)
  const sameHead =
    previous.context === context &&
    head.length === previous.head.length &&
    // Nodes too: the previous head is taken over, and a tool moves when a deferred one before it goes.
    head.every(
      (segment, index) =>
        sameSegment(segment, previous.head[index]) && sameNode(segment.node, previous.head[index]?.node),
    )
  let reused = 0
  if (sameHead) {
    reused = identicalPrefix(items, previous.items, previous.source)
    // An item that renders otherwise now (a new turn left its reasoning out) is linearized again.
    const pivots = pivot !== undefined && previous.pivot !== undefined
    const from = pivots ? Math.max(0, Math.min(pivot, previous.pivot ?? 0)) : 0
    const through = pivots ? Math.max(pivot, previous.pivot ?? 0) : Number.POSITIVE_INFINITY
    for (let index = from; index < reused && index <= through; index += 1) {
      if (variant(index) !== previous.variants[index]) reused = index
    }
  }
  if (reused > 0) builder = PromptBuilder.from(previous.prompt, previous.starts[reused] ?? 0, counter, scale)
  const added: number[] = []
  const variants: string[] = []
  for (let index = reused; index < items.length; index += 1) {
    variants.push(variant(index))
    added.push(builder.mark())
    const value = items[index]
    const itemContext = `${context}|${variant(index)}`
    const memo = typeof value === 'object' && value !== null ? itemMemo.get(value) : undefined
    if (memo !== undefined && memo.index === index && memo.context === itemContext) {
      builder.append(memo.segments)
      continue
    }
    const mark = builder.mark()
    add(builder, value, index)
    if (typeof value === 'object' && value !== null)
      itemMemo.set(value, { index, context: itemContext, segments: builder.since(mark) })
  }
  added.push(builder.mark())
  const starts = reused > 0 ? joinPrefix(previous.starts, reused, added) : added
  return {
    context,
    // The reused items' variants were found equal to the previous ones above.
    variants: joinPrefix(previous.variants, reused, variants),
    ...(pivot !== undefined ? { pivot } : {}),
    head,
    items: items.slice(),
    source: items,
    starts,
    prompt: builder.build(PRIMING),
  }
}

/**
 * One Chat Completions message as segments: its reasoning when shown (DeepSeek's `reasoning_content`,
 * ahead of the answer it led to), its content parts, then its tool calls.
 */
function addChatMessage(
  builder: PromptBuilder,
  body: Body,
  message: Body,
  index: number,
  counter: TokenCounter,
  showReasoning = false,
): void {
  const role = asString(message.role)
  const name = asString(message.name)
  const frame = `${role}|${name}|${asString(message.tool_call_id)}`
  const node = { part: 'messages' as const, index }
  let framing = MESSAGE_FRAMING + (name === '' ? 0 : 1)
  const reasoning = asString(message.reasoning_content)
  if (showReasoning && reasoning !== '') {
    builder.add({ frame: `${frame}|reasoning`, text: reasoning, framing, node })
    framing = 0
  }
  const toolCalls = asArray(message.tool_calls)
  const hasContent = message.content !== null && message.content !== undefined && message.content !== ''
  let blocks = 0
  if (hasContent || toolCalls.length === 0)
    blocks = addContent(builder, body, frame, message.content ?? '', framing, node)
  for (const [offset, call] of toolCalls.entries()) {
    const record = asRecord(call)
    const fn = asRecord(record.function)
    builder.add({
      frame: `${frame}|call|${asString(record.id)}|${asString(fn.name)}`,
      text: asString(fn.arguments),
      framing:
        (blocks === 0 && offset === 0 ? framing : 0) + MESSAGE_FRAMING + counter.count(asString(fn.name)),
      node: { ...node, block: blocks + offset },
    })
  }
}

/**
 * Which messages' `reasoning_content` DeepSeek keeps in the prompt: every assistant message that called
 * tools (api-docs.deepseek.com/guides/thinking_mode: it must be passed back), and every assistant message
 * after the latest user message; a turn's final answer drops its reasoning once a user message follows.
 * The live V4 logs show it: all 4 first requests of a turn read the previous request's input, not its
 * answer (notes/2026-11-30-calibration.md).
 */
export function deepseekReasoningShown(messages: readonly unknown[]): boolean[] {
  const latestUser = latestUserMessage(messages)
  return messages.map((message, index) => deepseekKeepsReasoning(message, index, latestUser))
}

/** Index of the latest user message, -1 when there is none (found from the end: a turn is short). */
export function latestUserMessage(messages: readonly unknown[]): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    if (asRecord(messages[index]).role === 'user') return index
  }
  return -1
}

/** `deepseekReasoningShown` for one message at `index`, the latest user message at `latestUser`. */
export function deepseekKeepsReasoning(message: unknown, index: number, latestUser: number): boolean {
  const record = asRecord(message)
  if (record.role !== 'assistant') return false
  const calls = record.tool_calls
  return (Array.isArray(calls) && calls.length > 0) || index > latestUser
}

/** Which assistant messages' reasoning a Chat linearization renders. */
export type ChatReasoning = 'none' | 'deepseek' | 'all'

/**
 * Linearize a Chat Completions body (OpenAI and DeepSeek). `remember: false` for one-off fragments, so
 * they do not displace the session's last body as the base the next request is compared with.
 * `reasoning`: OpenAI's Chat API takes no reasoning back (`none`, the default); DeepSeek renders
 * `reasoning_content` by its rule (`deepseek`); `all` renders every one (an answer known to be kept).
 */
export function linearizeChat(
  body: Body,
  counter: TokenCounter,
  scale: number,
  options: { remember?: boolean; reasoning?: ChatReasoning } = {},
): Prompt {
  const reasoning = options.reasoning ?? 'none'
  const context = `chat|${scale}|${asString(asRecord(body.prompt_cache_options).ttl)}|${reasoning}`
  const messages = asArray(body.messages)
  const latestUser = reasoning === 'deepseek' ? latestUserMessage(messages) : -1
  const shown = (index: number) =>
    reasoning === 'deepseek'
      ? deepseekKeepsReasoning(messages[index], index, latestUser)
      : reasoning === 'all'
  const addHead = (builder: PromptBuilder) => {
    addTools(builder, body)
    const format = asRecord(body.response_format)
    if (format.type === 'json_schema') {
      builder.add({
        frame: 'response_format',
        text: JSON.stringify(format),
        framing: 0,
        node: { part: 'response_format', index: 0 },
      })
    }
  }
  const cache = linearizeItems(
    counter,
    scale,
    addHead,
    messages,
    context,
    lastChat,
    (builder, value, index) => addChatMessage(builder, body, asRecord(value), index, counter, shown(index)),
    (index) => (shown(index) ? 'reasoning' : ''),
    // Shown reasoning depends on the message and on its index against the latest user message only.
    latestUser,
  )
  if (options.remember !== false) lastChat = cache
  return cache.prompt
}

/** One Responses input item as segments. */
function addResponsesItem(
  builder: PromptBuilder,
  body: Body,
  item: Body,
  index: number,
  counter: TokenCounter,
): void {
  const node = { part: 'input' as const, index }
  const type = asString(item.type) || 'message'
  switch (type) {
    case 'message':
      addContent(builder, body, `${asString(item.role)}||`, item.content, MESSAGE_FRAMING, node)
      break
    case 'function_call':
      builder.add({
        frame: `assistant||call|${asString(item.call_id)}|${asString(item.name)}`,
        text: asString(item.arguments),
        framing: 2 * MESSAGE_FRAMING + counter.count(asString(item.name)),
        node,
      })
      break
    case 'function_call_output':
      // An output given as content parts is linearized as parts, so a breakpoint on one of them counts.
      if (Array.isArray(item.output)) {
        addContent(builder, body, `tool||${asString(item.call_id)}`, item.output, MESSAGE_FRAMING, node)
        break
      }
      builder.add({
        frame: `tool||${asString(item.call_id)}`,
        text: typeof item.output === 'string' ? item.output : JSON.stringify(item.output),
        framing: MESSAGE_FRAMING,
        node,
      })
      break
    default:
      builder.add({ frame: type, text: JSON.stringify(item), framing: 0, node })
      break
  }
}

/**
 * Index of the latest input item that is a user message: reasoning items before it belong to earlier
 * turns. -1 when there is none.
 */
export function latestUserItem(items: readonly unknown[]): number {
  for (let index = items.length - 1; index >= 0; index -= 1) {
    const item = asRecord(items[index])
    if ((item.type === undefined || item.type === 'message') && item.role === 'user') return index
  }
  return -1
}

/**
 * Linearize a Responses body. Reasoning items passed back before the latest user message are not
 * rendered (the model keeps the reasoning of the current turn only) unless `reasoning.context` asks for
 * `all_turns` (GPT-5.6+).
 */
export function linearizeResponses(body: Body, counter: TokenCounter, scale: number): Prompt {
  const addHead = (builder: PromptBuilder) => {
    addTools(builder, body)
    if (typeof body.instructions === 'string' && body.instructions !== '') {
      builder.add({
        frame: 'system||',
        text: body.instructions,
        framing: MESSAGE_FRAMING,
        node: { part: 'system', index: 0 },
      })
    }
  }
  const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : asArray(body.input)
  const context = `responses|${scale}|${asString(asRecord(body.prompt_cache_options).ttl)}`
  const allTurns = asRecord(body.reasoning).context === 'all_turns'
  const boundary = allTurns ? -1 : latestUserItem(input)
  const dropped = (index: number) => index < boundary && asRecord(input[index]).type === 'reasoning'
  lastResponses = linearizeItems(
    counter,
    scale,
    addHead,
    input,
    context,
    lastResponses,
    (builder, value, index) => {
      if (!dropped(index)) addResponsesItem(builder, body, asRecord(value), index, counter)
    },
    (index) => (dropped(index) ? 'dropped' : ''),
    // Dropped reasoning depends on the item and on its index against the boundary only.
    boundary,
  )
  return lastResponses.prompt
}
