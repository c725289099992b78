// Linearizing a Gemini `generateContent` body into the order the implicit cache matches: the system
// instruction, the tool declarations and tool config, then `contents` in order. cachelab's view of a
// Gemini body also holds `model` and `stream`, which the real API takes from the URL
// (notes/2026-11-30-gemini-wire.md).

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
const asRecord = (value: unknown): Body =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Body) : {}
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

/** One part of a content (or of the system instruction) as a segment draft; thoughts are not prompt. */
function partDraft(part: Body, frame: string, node: WireNode, framing: number): SegmentDraft | undefined {
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
  return { frame: `${frame}|other`, text: sortedJson(part), framing, node }
}

/** The head of a body: system instruction, tools, tool config (what an explicit cache may hold too). */
function addHead(builder: PromptBuilder, body: Body): void {
  const system = asRecord(body.systemInstruction)
  let framing = TURN_FRAMING
  for (const [index, value] of asArray(system.parts).entries()) {
    const draft = partDraft(asRecord(value), 'system', { part: 'system', index }, framing)
    if (draft === undefined) continue
    builder.add(draft)
    framing = 0
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

/** Add `contents` as segments: one per part, the turn framing on its first. */
function addContents(builder: PromptBuilder, contents: readonly unknown[]): void {
  for (const [index, value] of contents.entries()) {
    const content = asRecord(value)
    const role = asString(content.role) || 'user'
    let framing = TURN_FRAMING
    for (const [block, part] of asArray(content.parts).entries()) {
      const draft = partDraft(asRecord(part), role, { part: 'contents', index, block }, framing)
      if (draft === undefined) continue
      builder.add(draft)
      framing = 0
    }
  }
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
  const builder = new PromptBuilder(counter, scale)
  if (cached !== undefined) builder.append(cached.segments)
  else addHead(builder, body)
  addContents(builder, asArray(body.contents))
  return builder.build(PRIMING)
}

/** The prompt an explicit cache holds: its head and contents, without the priming of a request. */
export function linearizeCachedContent(resource: Body, counter: TokenCounter, scale: number): Prompt {
  const builder = new PromptBuilder(counter, scale)
  addHead(builder, resource)
  addContents(builder, asArray(resource.contents))
  return builder.build(0)
}
