// Linearizing a Gemini `generateContent` body into the order the implicit cache matches: the system
// instruction, the tool declarations and tool config, then `contents` in order. cachelab's view of a
// Gemini body also holds `model` and `stream`, which the real API takes from the URL
// (notes/2026-11-30-gemini-wire.md).

import { asRecord } from '../../harness/json-fields.ts'
import { hashString } from '../../harness/random.ts'
import { pngSize } from './image.ts'
import { PromptBuilder, type SegmentDraft } from './prompt.ts'
import type { TokenCounter } from './tokens.ts'
import type { Prompt, Segment, WireNode } from './types.ts'

type Body = Record<string, unknown>

/** Tokens framing each turn (start-of-turn, role, end-of-turn): an estimate, the tokenizer is not public. */
const TURN_FRAMING = 3
/** The model turn opened after the last content; never part of a cached prefix. */
const PRIMING = 3

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const asString = (value: unknown): string => (typeof value === 'string' ? value : '')

/**
 * Gemini's image rule (ai.google.dev/gemini-api/docs/tokens): 258 tokens when both sides are at most
 * 384 px, else 258 per 768×768 tile.
 */
export function geminiImageTokens(size: { width: number; height: number }): number {
  if (size.width <= 384 && size.height <= 384) return 258
  return 258 * Math.ceil(size.width / 768) * Math.ceil(size.height / 768)
}

/** Tokens of an inline image whose size is unknown (one tile). */
const UNKNOWN_GEMINI_IMAGE_TOKENS = 258

/**
 * JSON with object keys sorted: the API parses a body into protos, so the key order a client (or the SDK,
 * which reorders `functionCall` fields) sends is not part of the prompt.
 */
export function sortedJson(value: unknown): string {
  return JSON.stringify(sortedKeys(value))
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys)
  if (typeof value !== 'object' || value === null) return value
  const sorted: Body = {}
  for (const key of Object.keys(value).sort()) sorted[key] = sortedKeys((value as Body)[key])
  return sorted
}

/** A part's thought signature: proto JSON takes the field's JSON name or its proto name. */
const SIGNATURE_FIELDS = ['thoughtSignature', 'thought_signature'] as const

/** A part's fields beside its content, without the signature (drafted apart) and the thought flag. */
function otherFields(part: Body, content: string): Body | undefined {
  const rest: Body = {}
  for (const [key, value] of Object.entries(part)) {
    if (key === content || key === 'thought' || (SIGNATURE_FIELDS as readonly string[]).includes(key))
      continue
    rest[key] = value
  }
  return Object.keys(rest).length === 0 ? undefined : rest
}

/** The content of a part as a segment draft (its kind's field), or undefined for a thought. */
function contentDraft(part: Body, frame: string, node: WireNode, framing: number): SegmentDraft | undefined {
  if (part.thought === true) return undefined
  if (typeof part.text === 'string') return { frame: `${frame}|text`, text: part.text, framing, node }
  if (part.functionCall !== undefined) {
    return { frame: `${frame}|functionCall`, text: sortedJson(part.functionCall), framing, node }
  }
  if (part.functionResponse !== undefined) {
    return { frame: `${frame}|functionResponse`, text: sortedJson(part.functionResponse), framing, node }
  }
  if (part.inlineData !== undefined) {
    const data = asRecord(part.inlineData)
    const payload = asString(data.data)
    const size = pngSize(payload)
    // An image costs its own count, not its payload's characters: the payload is told apart by its hash.
    return {
      frame: `${frame}|inlineData|${asString(data.mimeType)}|${hashString(payload).toString(16)}`,
      text: '',
      framing,
      node,
      contentTokens: size === undefined ? UNKNOWN_GEMINI_IMAGE_TOKENS : geminiImageTokens(size),
    }
  }
  // Any other part (file data, executable code): its JSON, so a change of it is a change of the prompt.
  return { frame: `${frame}|other`, text: sortedJson(otherFields(part, '') ?? {}), framing, node }
}

/** The field that holds a part's content, when it is one of the kinds drafted by their field. */
function contentField(part: Body): string | undefined {
  if (typeof part.text === 'string') return 'text'
  return ['functionCall', 'functionResponse', 'inlineData'].find((key) => part[key] !== undefined)
}

/**
 * One part of a content (or of the system instruction) as segment drafts: its content (a thought is not
 * prompt), any other field it carries beside that content (so a change of it is a change of the prompt),
 * and its thought signature, which the client sends back as received and the API bills as input
 * (ai.google.dev/gemini-api/docs/thinking, "Pricing"): an unchanged signature leaves the prompt unchanged.
 */
function partDrafts(part: Body, frame: string, node: WireNode, framing: number): SegmentDraft[] {
  const drafts: SegmentDraft[] = []
  const content = contentDraft(part, frame, node, framing)
  if (content !== undefined) drafts.push(content)
  const field = contentField(part)
  const rest = content === undefined || field === undefined ? undefined : otherFields(part, field)
  if (rest !== undefined) drafts.push({ frame: `${frame}|fields`, text: sortedJson(rest), framing: 0, node })
  const signature = SIGNATURE_FIELDS.map((key) => part[key]).find((value) => typeof value === 'string')
  if (typeof signature === 'string' && signature !== '') {
    drafts.push({
      frame: `${frame}|thoughtSignature`,
      text: signature,
      framing: drafts.length === 0 ? framing : 0,
      node,
    })
  }
  return drafts
}

/** The head of a body: system instruction, tools, tool config (what an explicit cache may hold too). */
function addHead(builder: PromptBuilder, body: Body): void {
  const system = asRecord(body.systemInstruction)
  let framing = TURN_FRAMING
  for (const [index, value] of asArray(system.parts).entries()) {
    for (const draft of partDrafts(asRecord(value), 'system', { part: 'system', index }, framing)) {
      builder.add(draft)
      framing = 0
    }
  }
  let declaration = 0
  for (const value of asArray(body.tools)) {
    const tool = asRecord(value)
    const declarations = asArray(tool.functionDeclarations)
    if (declarations.length === 0) {
      builder.add({
        frame: 'tool|other',
        text: sortedJson(tool),
        framing: 0,
        node: { part: 'tools', index: declaration },
      })
      declaration += 1
      continue
    }
    for (const entry of declarations) {
      builder.add({
        frame: 'tool|function',
        text: sortedJson(entry),
        framing: 0,
        node: { part: 'tools', index: declaration },
      })
      declaration += 1
    }
  }
  if (body.toolConfig !== undefined) {
    builder.add({
      frame: 'tool-config',
      text: sortedJson(body.toolConfig),
      framing: 0,
      node: { part: 'tools', index: declaration },
    })
  }
}

/** Add `contents[from..]` as segments: one per part, the turn framing on its first; `starts` gets where each begins. */
function addContents(
  builder: PromptBuilder,
  contents: readonly unknown[],
  from = 0,
  starts: number[] = [],
): void {
  for (let index = from; index < contents.length; index += 1) {
    starts[index] = builder.mark()
    const content = asRecord(contents[index])
    const role = asString(content.role) || 'user'
    let framing = TURN_FRAMING
    for (const [block, part] of asArray(content.parts).entries()) {
      for (const draft of partDrafts(asRecord(part), role, { part: 'contents', index, block }, framing)) {
        builder.add(draft)
        framing = 0
      }
    }
  }
  starts[contents.length] = builder.mark()
}

/**
 * The previous body linearized: its head segments, its contents and where each content's segments start.
 * The next request of a session repeats most of it (the same content objects, the adapter memoizes them)
 * and takes those contents' segments over unchanged, so a request costs what it adds.
 */
interface LastLayout {
  counter: TokenCounter | undefined
  scale: number
  head: readonly Segment[]
  /** Its contents and starts are this module's own: the next call cuts them back and extends them in place. */
  contents: unknown[]
  /** Where each content's segments start in `prompt` (one more entry: where the contents end). */
  starts: number[]
  prompt: Prompt
}

let lastLayout: LastLayout = {
  counter: undefined,
  scale: 1,
  head: [],
  contents: [],
  starts: [0],
  prompt: { segments: [], cumulative: [], trailing: 0, total: 0 },
}

/** Whether two head segments are the same in everything a prompt reads of them. */
function sameHeadSegment(left: Segment, right: Segment | undefined): boolean {
  return (
    right !== undefined &&
    left.text === right.text &&
    left.frame === right.frame &&
    left.tokens === right.tokens &&
    left.framing === right.framing &&
    left.node.part === right.node.part &&
    left.node.index === right.node.index &&
    left.node.block === right.node.block
  )
}

/**
 * The prompt of a Gemini body. `cached` is the prompt of the explicit cache the body names
 * (`cachedContent`), whose segments then lead the prompt in place of the body's own head.
 */
export function linearizeGemini(
  body: Body,
  counter: TokenCounter,
  scale: number,
  cached?: { segments: readonly Segment[] },
): Prompt {
  let builder = new PromptBuilder(counter, scale)
  if (cached !== undefined) builder.append(cached.segments)
  else addHead(builder, body)
  const head = builder.since(0)
  const contents = asArray(body.contents)
  const last = lastLayout
  let shared = 0
  if (
    last.counter === counter &&
    last.scale === scale &&
    head.length === last.head.length &&
    head.every((segment, index) => sameHeadSegment(segment, last.head[index]))
  ) {
    const bound = Math.min(contents.length, last.contents.length)
    while (shared < bound && contents[shared] === last.contents[shared]) shared += 1
  }
  // Reset first: a throw below leaves no half-updated lists behind.
  lastLayout = { ...last, contents: [], starts: [0], counter: undefined }
  let starts: number[] = []
  if (shared > 0) {
    builder = PromptBuilder.from(last.prompt, last.starts[shared] ?? 0, counter, scale)
    starts = last.starts
    starts.length = shared
  }
  addContents(builder, contents, shared, starts)
  const prompt = builder.build(PRIMING)
  const seen = last.contents
  seen.length = shared
  for (let index = shared; index < contents.length; index += 1) seen.push(contents[index])
  lastLayout = { counter, scale, head, contents: seen, starts, prompt }
  return prompt
}

/** The prompt an explicit cache holds: its head and contents, without the priming of a request. */
export function linearizeCachedContent(resource: Body, counter: TokenCounter, scale: number): Prompt {
  const builder = new PromptBuilder(counter, scale)
  addHead(builder, resource)
  addContents(builder, asArray(resource.contents))
  return builder.build(0)
}
