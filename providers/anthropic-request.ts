// The Anthropic Messages body of a derived request: leading system prompts in the top-level `system`,
// tool results merged into user turns, and `cache_control` markers placed by a breakpoint strategy.

import type Anthropic from '@anthropic-ai/sdk'
import { CachelabError } from '../harness/errors.ts'
import { builtFrom, identicalPrefix } from '../harness/lineage.ts'
import type { DerivedRequest, Seq, ToolResultMessage, UserMessage } from '../harness/types.ts'
import type { BreakpointStrategy, BuildOptions, BuiltRequest } from './types.ts'

/** `max_tokens` when the call configuration names none (the API requires it). */
export const DEFAULT_MAX_TOKENS = 1024

/** Messages at indices that are multiples of this get the `rolling` strategy's stable markers. */
export const ROLLING_STRIDE = 8

/** The content blocks cachelab sends; every one of them may carry `cache_control`. */
type WireBlock =
  | Anthropic.TextBlockParam
  | Anthropic.ImageBlockParam
  | Anthropic.ToolUseBlockParam
  | Anthropic.ToolResultBlockParam

/** A wire message; content is always an array so that any last block can carry a marker. */
interface WireMessage {
  role: 'user' | 'assistant' | 'system'
  content: WireBlock[]
}

/** What a developer message becomes: user text, tagged so the model can tell it from the user. */
export function developerText(text: string): string {
  return `<developer>\n${text}\n</developer>`
}

function userBlocks(message: UserMessage): WireBlock[] {
  return message.content.map((block) =>
    block.type === 'text'
      ? { type: 'text', text: block.text }
      : { type: 'image', source: { type: 'base64', media_type: block.mediaType, data: block.data } },
  )
}

/** A tool call's arguments as the `input` object; key order survives the parse. */
function toolInput(argumentsText: string): Record<string, unknown> {
  if (argumentsText.trim() === '') return {}
  const parsed: unknown = JSON.parse(argumentsText)
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CachelabError('input', `tool call arguments must be a JSON object, got ${argumentsText}`)
  }
  return parsed as Record<string, unknown>
}

function toolResultBlock(message: ToolResultMessage): WireBlock {
  return {
    type: 'tool_result',
    tool_use_id: message.callId,
    content: message.text,
    ...(message.isError === true ? { is_error: true } : {}),
  }
}

/** One derived message as a wire message (a tool result opens a user turn that later results join). */
function wireMessage(message: DerivedRequest['messages'][number]['message']): WireMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: [{ type: 'text', text: message.text }] }
    case 'developer':
      return { role: 'user', content: [{ type: 'text', text: developerText(message.text) }] }
    case 'user':
      return { role: 'user', content: userBlocks(message) }
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content.flatMap((block): WireBlock[] => {
          if (block.type === 'text') return block.text === '' ? [] : [{ type: 'text', text: block.text }]
          return [{ type: 'tool_use', id: block.callId, name: block.name, input: toolInput(block.arguments) }]
        }),
      }
    case 'tool':
      return { role: 'user', content: [toolResultBlock(message)] }
  }
}

/**
 * The previous call's conversion: its derived messages, wire messages, their sources, and where each
 * wire message's derived messages begin. A session's next request repeats most of it. The lists are this
 * module's own: a call cuts them back to what it keeps and extends them in place.
 */
let lastWire: {
  /** The messages list `derived` was copied from, from index `from` (its successor's claim is about it). */
  source?: readonly unknown[]
  from?: number
  derived: DerivedRequest['messages'][number][]
  messages: WireMessage[]
  sources: Seq[][]
  starts: number[]
} = emptyWire()

function emptyWire(): typeof lastWire {
  return { derived: [], messages: [], sources: [], starts: [] }
}

/**
 * Wire messages and the session events behind each, tool results merged into one user turn. Wire
 * messages built from a derived prefix the previous call shared (the same frozen objects) are reused,
 * up to the last one whose tool-result turn may still grow.
 */
function wireMessages(
  request: DerivedRequest,
  from: number,
): { messages: WireMessage[]; sources: Seq[][]; kept: number } {
  const all = request.messages
  const count = all.length - from
  const last = lastWire
  // Reset first: a throw below leaves no half-updated lists behind.
  lastWire = emptyWire()
  const { derived, messages, sources, starts } = last
  const shared = identicalPrefix(all, derived, last.from === from ? last.source : undefined, from)
  // Keep wire messages whose derived range ends inside the shared prefix and that no later result can
  // join: those before the first later message starting at or past `shared` (starts only grow).
  let low = 1
  let high = messages.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((starts[middle] ?? Number.POSITIVE_INFINITY) < shared) low = middle + 1
    else high = middle
  }
  const kept = Math.max(0, Math.min(low, messages.length) - 1)
  const first = kept === 0 ? 0 : (starts[kept] ?? 0)
  derived.length = shared
  for (let index = shared; index < count; index += 1)
    derived.push(all[from + index] as (typeof derived)[number])
  messages.length = kept
  sources.length = kept
  starts.length = kept
  let resultsTurn: WireMessage | undefined
  for (let index = first; index < count; index += 1) {
    const { message, sourceSeqs } = derived[index] as DerivedRequest['messages'][number]
    if (message.role === 'tool' && resultsTurn !== undefined) {
      resultsTurn.content.push(toolResultBlock(message))
      const seqs = sources[sources.length - 1]
      for (const seq of sourceSeqs) if (seqs !== undefined && !seqs.includes(seq)) seqs.push(seq)
      continue
    }
    const wire = wireMessage(message)
    resultsTurn = message.role === 'tool' ? wire : undefined
    messages.push(wire)
    sources.push([...sourceSeqs])
    starts.push(index)
  }
  lastWire = { ...last, source: all, from }
  return { messages: messages.slice(), sources: sources.slice(), kept }
}

/**
 * The messages list the previous body went out with and its first marked index: the next body's leading
 * messages before both marks and its kept ones are the same objects (`builtFrom`).
 */
let lastBody: { messages: WireMessage[]; firstMarked: number } | undefined

/** A copy of a wire message with a marker on its last block (reused messages are never mutated). */
function withMarker(message: WireMessage, cacheControl: Anthropic.CacheControlEphemeral): WireMessage {
  const last = message.content.at(-1)
  if (last === undefined) return message
  return {
    role: message.role,
    content: [...message.content.slice(0, -1), { ...last, cache_control: cacheControl }],
  }
}

function marker(options: BuildOptions): Anthropic.CacheControlEphemeral {
  return options.anthropicTtl === undefined
    ? { type: 'ephemeral' }
    : { type: 'ephemeral', ttl: options.anthropicTtl }
}

/** Indices of the messages whose last block a strategy marks (the system block is handled apart). */
export function markedMessages(strategy: BreakpointStrategy, count: number): number[] {
  const last = count - 1
  switch (strategy) {
    case 'automatic':
    case 'none':
      return []
    case 'last-message':
    case 'system-and-last':
      return last >= 0 ? [last] : []
    case 'rolling': {
      // Two stable markers at multiples of the stride below the last message: later requests carry
      // the same markers on the same blocks, so their lookback finds these entries exactly.
      const stable: number[] = []
      for (
        let index = Math.floor((last - 1) / ROLLING_STRIDE) * ROLLING_STRIDE;
        index >= 0;
        index -= ROLLING_STRIDE
      ) {
        stable.unshift(index)
        if (stable.length === 2) break
      }
      return last >= 0 ? [...stable, last] : stable
    }
  }
}

function marksSystem(strategy: BreakpointStrategy): boolean {
  switch (strategy) {
    case 'system-and-last':
    case 'rolling':
      return true
    case 'automatic':
    case 'last-message':
    case 'none':
      return false
  }
}

/** The Messages body of a derived request. */
export function buildAnthropicRequest(request: DerivedRequest, options: BuildOptions): BuiltRequest {
  const system: Anthropic.TextBlockParam[] = []
  const systemSources: Seq[] = []
  if (request.system !== undefined) {
    system.push({ type: 'text', text: request.system.text })
    systemSources.push(request.system.sourceSeq)
  }
  let leading = 0
  for (const { message, sourceSeqs } of request.messages) {
    if (message.role !== 'system') break
    system.push({ type: 'text', text: message.text })
    systemSources.push(...sourceSeqs)
    leading += 1
  }
  const previous = lastBody
  // Reset first: a throw below leaves no claim about a list that never went out.
  lastBody = undefined
  const { messages, sources, kept } = wireMessages(request, leading)

  const strategy = options.breakpoints ?? 'automatic'
  const cacheControl = marker(options)
  const lastSystem = system[system.length - 1]
  if (marksSystem(strategy) && lastSystem !== undefined) lastSystem.cache_control = cacheControl
  const marked = markedMessages(strategy, messages.length)
  for (const index of marked) {
    const message = messages[index]
    if (message !== undefined) messages[index] = withMarker(message, cacheControl)
  }
  const firstMarked = Math.min(messages.length, ...marked)
  if (previous !== undefined)
    builtFrom(messages, previous.messages, Math.min(kept, firstMarked, previous.firstMarked))
  lastBody = { messages, firstMarked }

  const body: Record<string, unknown> = {
    model: request.config.model,
    max_tokens: request.config.maxTokens ?? DEFAULT_MAX_TOKENS,
    ...(system.length > 0 ? { system } : {}),
    messages,
    ...(request.tools.length > 0
      ? {
          tools: request.tools.map(
            (tool): Anthropic.Tool => ({
              name: tool.name,
              description: tool.description,
              input_schema: tool.parameters as Anthropic.Tool.InputSchema,
              // A tool added mid-session is loaded where history announces it, not in the tools prefix.
              ...(tool.deferLoading === true ? { defer_loading: true } : {}),
            }),
          ),
        }
      : {}),
    ...(request.config.temperature !== undefined ? { temperature: request.config.temperature } : {}),
    ...(strategy === 'automatic' ? { cache_control: cacheControl } : {}),
    ...(options.stream ? { stream: true } : {}),
  }
  return {
    provider: 'anthropic',
    api: 'anthropic-messages',
    body,
    sources: {
      system: systemSources,
      tools: request.toolsSeq !== undefined ? [request.toolsSeq] : [],
      messages: sources,
    },
  }
}
