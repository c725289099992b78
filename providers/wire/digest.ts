// What a capture keeps of a wire request by default: per prompt segment its node, a content hash and
// its tokens; per top-level item (message, input item, system block, tool) its role and a hash with the
// cache markers removed; and the request's settings. Enough to find the first divergent node, tell an
// edit from a truncation, and key a conversation, without keeping a word of the text.

import { createHash, hash } from 'node:crypto'
import { describeNode } from '../sim/prompt.ts'
import type { Prompt, Segment } from '../sim/types.ts'

/** One prompt segment: its wire node (`messages[3].1`), a hash of its frame and text, its tokens. */
export type SegmentDigest = readonly [node: string, hash: string, tokens: number]

/** One top-level item of a request's message list, markers removed. */
export interface ItemDigest {
  /** `user`, `assistant`, `system`, `developer`, `tool`, or a Responses item type (`function_call_output`). */
  role: string
  hash: string
  /** Whether the item opens a user turn: a user message that answers no tool call and is not only agent notes. */
  userTurn: boolean
  /** Characters of its JSON, markers removed: how distinctive a match on it is. */
  size: number
  /**
   * The hash of the item without the agent's notes in it (`<system-reminder>` blocks and the like), set
   * only where it has some: an agent that re-renders its notes on resume still continues the conversation.
   */
  loose?: string
}

/** A request as a capture keeps it. */
export interface RequestDigest {
  /** The simulator's prompt, segment by segment, in the provider's prompt order. */
  segments: readonly SegmentDigest[]
  /** Input tokens after the last segment (assistant priming): never cached. */
  trailing: number
  /** Every input token of the request. */
  total: number
  /** The message list (`messages`, or Responses `input`), system and developer messages included. */
  items: readonly ItemDigest[]
  /** Settings beside the content: model, sampling, reasoning effort, tool choice, retention. */
  config: Readonly<Record<string, unknown>>
}

/** Fields that are content (digested above), cache markers or transport, not settings. */
const NOT_CONFIG = new Set([
  'messages',
  'input',
  'contents',
  'systemInstruction',
  'cache_control',
  'system',
  'instructions',
  'tools',
  'stream',
  'stream_options',
  'metadata',
  'prompt_cache_key',
  'user',
  'safety_identifier',
  // A request for the provider's cache diagnostics names the previous response: never a setting.
  'diagnostics',
])

/** Settings larger than this (a JSON schema) are kept as a hash. */
const LARGE_SETTING = 200

/**
 * The settings the four wires document whose values are kept as they are (small ones): sampling, limits,
 * reasoning, tool choice, output format, service tier, cache settings. Any other field a client sends
 * (an SDK's `api_key`, `extra_headers`, a gateway's own options) is kept as a hash only: a change still
 * shows, and no value a client put there — a key — reaches a capture.
 */
const KNOWN_SETTINGS = new Set([
  'model',
  'max_tokens',
  'max_completion_tokens',
  'max_output_tokens',
  'temperature',
  'top_p',
  'top_k',
  'n',
  'seed',
  'stop',
  'stop_sequences',
  'presence_penalty',
  'frequency_penalty',
  'logprobs',
  'top_logprobs',
  'reasoning',
  'reasoning_effort',
  'thinking',
  'tool_choice',
  'parallel_tool_calls',
  'service_tier',
  'store',
  'truncation',
  'text',
  'verbosity',
  'response_format',
  'output_config',
  'output_format',
  'include',
  'prompt_cache_retention',
  'previous_response_id',
  'background',
  'modalities',
  'context_management',
  'anthropic_version',
  'anthropic_beta',
  'generationConfig',
  'toolConfig',
  'cachedContent',
  'inferenceConfig',
  'additionalModelRequestFields',
])

/** A short, stable content hash (64 bits of SHA-256, hex). */
export function contentHash(text: string): string {
  // One call, no Hash object: a request hashes a few dozen short texts.
  return hash('sha256', text, 'hex').slice(0, 16)
}

/**
 * `contentHash` of a frame and a text joined by U+0000. A long text is hashed in parts rather than joined
 * first (a copy of it): the separator leaves no surrogate pair across the parts, so the bytes hashed are
 * the same.
 */
export function framedHash(frame: string, text: string): string {
  if (text.length < FRAMED_IN_PARTS) return contentHash(`${frame}\u0000${text}`)
  return createHash('sha256').update(frame).update('\u0000').update(text).digest('hex').slice(0, 16)
}

/** Texts at least this long are hashed in parts (below it, one call on the joined text is quicker). */
const FRAMED_IN_PARTS = 4096

/** A JSON value with every cache marker removed and object keys sorted: markers never change content. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(withoutMarkers(value))
}

function withoutMarkers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutMarkers)
  if (typeof value !== 'object' || value === null) return value
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) {
    if (key === 'cache_control' || key === 'prompt_cache_breakpoint') continue
    copy[key] = withoutMarkers((value as Record<string, unknown>)[key])
  }
  return copy
}

/** The message list of a body: `messages`, Gemini `contents`, or Responses `input` (a string is one user message). */
export function itemsOf(body: Record<string, unknown>): unknown[] {
  if (Array.isArray(body.messages)) return body.messages
  if (Array.isArray(body.contents)) return body.contents
  if (Array.isArray(body.input)) return body.input
  if (typeof body.input === 'string') return [{ role: 'user', content: body.input }]
  return []
}

function isToolResultBlock(block: unknown): boolean {
  const record = block as { type?: unknown; toolResult?: unknown; functionResponse?: unknown } | null
  // Converse: `{toolResult: …}` blocks, and the cache points that may follow them; Gemini: `functionResponse` parts.
  if (record?.toolResult !== undefined || record?.functionResponse !== undefined) return true
  const type = record?.type
  return type === 'tool_result' || type === 'function_call_output'
}

/** A Converse cache point: a marker, not content, whatever the blocks around it are. */
function isCachePoint(block: unknown): boolean {
  return (block as { cachePoint?: unknown } | null)?.cachePoint !== undefined
}

/**
 * An item as its content means it: string content is the one text block it is shorthand for (a client
 * that marks the latest message for caching turns its string into a block, and back once it moves on).
 */
function expanded(record: Record<string, unknown>): Record<string, unknown> {
  if (typeof record.content !== 'string') return record
  return { ...record, content: [{ type: 'text', text: record.content }] }
}

/**
 * An item without the Responses API's bookkeeping (`id`, `status`), which the provider does not render into
 * the prompt: an agent that rebuilds its history sends the same item without them, or with new ones.
 */
function withoutBookkeeping(record: Record<string, unknown>): Record<string, unknown> {
  if (record.id === undefined && record.status === undefined) return record
  const { id: _id, status: _status, ...content } = record
  return content
}

/** The digest of one item. */
export function itemDigest(item: unknown): ItemDigest {
  const record = recordOf(item)
  const content = withoutBookkeeping(record)
  const json = canonicalJson(expanded(content))
  const digest: ItemDigest = {
    role: roleOf(record),
    hash: contentHash(json),
    userTurn: isUserTurn(item),
    size: json.length,
  }
  const blocks = content.content
  if (Array.isArray(blocks) && blocks.some(isAgentNote)) {
    const kept = blocks.filter((block) => !isAgentNote(block))
    digest.loose = contentHash(canonicalJson({ ...content, content: kept }))
  }
  return digest
}

/**
 * Tags that open a text an agent adds to a user message for the model, not typed by the user: Claude
 * Code's `<system-reminder>`; Codex's `<environment_context>`, `<user_instructions>`,
 * `<subagent_notification>` and `<turn_aborted>`.
 */
const AGENT_NOTE =
  /^<(system-reminder|environment_context|user_instructions|subagent_notification|turn_aborted)>/

/** Whether a text is an agent's note (`AGENT_NOTE`). */
function isNoteText(text: unknown): boolean {
  return typeof text === 'string' && AGENT_NOTE.test(text.trimStart())
}

/** Whether a content block is an agent's note: a text block (`text`, Responses `input_text`) opening with one of the tags. */
export function isAgentNote(block: unknown): boolean {
  const record = block as { type?: unknown; text?: unknown } | null
  return (record?.type === 'text' || record?.type === 'input_text') && isNoteText(record.text)
}

/**
 * Whether an item opens a user turn (a user message that carries no tool result and is not only agent notes), as
 * `itemDigest` says, without digesting its content: a reader that needs only this (a request's position)
 * stays linear in the number of items, not in the bytes of the conversation.
 */
export function isUserTurn(item: unknown): boolean {
  const record = recordOf(item)
  if (roleOf(record) !== 'user') return false
  // Gemini's contents carry `parts` where the others carry `content`.
  const content = record.content ?? record.parts
  if (typeof content === 'string') return !isNoteText(content)
  const blocks = Array.isArray(content) ? content.filter((block) => !isCachePoint(block)) : []
  // A message that answers the model's tool calls goes on with its turn, whatever the agent sends beside
  // the results (Claude Code's "Tool loaded." after a ToolSearch result).
  return !(blocks.length > 0 && (blocks.some(isToolResultBlock) || blocks.every(isAgentNote)))
}

function recordOf(item: unknown): Record<string, unknown> {
  return (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>
}

function roleOf(record: Record<string, unknown>): string {
  return typeof record.role === 'string' ? record.role : String(record.type ?? 'item')
}

/** The settings of a body: every top-level field that is not content; a large or unknown one as its hash. */
export function configOf(body: Record<string, unknown>): Record<string, unknown> {
  const config: Record<string, unknown> = {}
  for (const key of Object.keys(body).sort()) {
    if (NOT_CONFIG.has(key)) continue
    const json = canonicalJson(key === 'prompt_cache_options' ? withoutComparison(body[key]) : body[key])
    config[key] =
      json.length > LARGE_SETTING || !KNOWN_SETTINGS.has(key) ? `#${contentHash(json)}` : JSON.parse(json)
  }
  return config
}

/**
 * `prompt_cache_options` without `comparison_response_id`: the response a request asks its diagnostics
 * against changes every request and changes nothing the provider caches.
 */
function withoutComparison(options: unknown): unknown {
  if (typeof options !== 'object' || options === null || !('comparison_response_id' in options))
    return options
  const { comparison_response_id: _compared, ...rest } = options as Record<string, unknown>
  return rest
}

/**
 * The digest of each segment object: the linearizers hand a session's history on from request to request
 * as the same segments (never changed once built), so their text is hashed once, not on every request.
 */
const segmentDigests = new WeakMap<Segment, SegmentDigest>()

/** The digest of one segment, hashed once per segment object. */
export function segmentDigest(segment: Segment): SegmentDigest {
  let digest = segmentDigests.get(segment)
  if (digest === undefined) {
    digest = [describeNode(segment.node), framedHash(segment.frame, segment.text), segment.tokens] as const
    segmentDigests.set(segment, digest)
  }
  return digest
}

/**
 * The digest of a request from its body and the simulator's linearization of it; `items`, when the
 * caller already digested the body's items (`itemsOf(body).map(itemDigest)`), are not digested again.
 */
export function digestRequest(
  body: Record<string, unknown>,
  prompt: Prompt,
  items: readonly ItemDigest[] = itemsOf(body).map(itemDigest),
): RequestDigest {
  return {
    segments: prompt.segments.map(segmentDigest),
    trailing: prompt.trailing,
    total: prompt.total,
    items,
    config: configOf(body),
  }
}

/** Items of the conversation proper: system and developer messages left out (they are the prompt). */
export function conversationItems(items: readonly ItemDigest[]): ItemDigest[] {
  return items.filter((item) => item.role !== 'system' && item.role !== 'developer')
}

/**
 * Index of the first segment where `current` stops extending `previous`; undefined when it extends it.
 * Segments compare by content (frame and text), as caches do: a string that became a text block keeps
 * its content and its cache, though its node gains a block index.
 */
export function firstDivergentSegment(
  previous: readonly SegmentDigest[],
  current: readonly SegmentDigest[],
): number | undefined {
  for (let index = 0; index < previous.length; index += 1) {
    if (current[index]?.[1] !== previous[index]?.[1]) return index
  }
  return undefined
}
