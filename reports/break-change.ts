// What changed at a break, from the content of the two requests at their first divergent segment: the
// words around the change inside the segment, segments inserted or removed before it, or the field that
// changed (the model, a setting, a key of a tool's declaration). Pure; asked only where a break was found,
// so no request that extends the previous one pays for it. Every surface renders the one value it
// returns (`changeLines` for the few lines a test runner prints).

import { redactText } from '../providers/mock/serve-safety.ts'
import { firstDivergence } from '../providers/sim/counterfactual.ts'
import { describeNode } from '../providers/sim/prompt.ts'
import { sameSegment } from '../providers/sim/trie.ts'
import type { Prompt, Segment } from '../providers/sim/types.ts'
import { bodyModel } from '../providers/types.ts'
import { configOf } from '../providers/wire/digest.ts'
import type { BreakChange } from '../providers/wire/exchange.ts'

/** The content a port holds of two consecutive requests of a session, for the change at their break. */
export interface ChangeContent {
  /** The previous request's linearized prompt and this request's, segment for segment. */
  previous: Prompt
  current: Prompt
  /** The keys the request came with: masked wherever they appear, beside every key-shaped string. */
  secrets?: readonly string[]
}

/** The settings of the two requests (`configOf` of each body), for a change no prompt text shows. */
export interface ChangeSettings {
  previous: Readonly<Record<string, unknown>>
  current: Readonly<Record<string, unknown>>
}

/** Characters of shared text kept before a change. */
export const CONTEXT_CHARACTERS = 60
/** Characters kept of each side of a change. */
export const SIDE_CHARACTERS = 120
/**
 * Text read around a kept window before it is masked: a key that reaches into the window from outside it
 * is masked whole, then cut (a key is a word: it never spans more than this).
 */
const MASK_MARGIN = 512

/** A letter, a digit or `_`. */
const ALPHANUMERIC = /[\p{L}\p{N}_]/u
/** Joins the parts of a word where it stands between two alphanumerics: `2026-12-07`, `v1.2`, `sk-…`, `a/b`. */
const JOINER = /[-:./+=]/

const alphanumeric = (character: string | undefined) =>
  character !== undefined && ALPHANUMERIC.test(character)

/**
 * Whether the character at `index` is part of a word: a change is widened to whole words, so a date, a
 * version, an id or a key shows whole (`2026-12-07`, not `7`), and no window starts or ends inside a key.
 */
function wordAt(text: string, index: number): boolean {
  const character = text[index]
  if (character === undefined) return false
  if (ALPHANUMERIC.test(character)) return true
  return JOINER.test(character) && alphanumeric(text[index - 1]) && alphanumeric(text[index + 1])
}

/**
 * The change between two requests whose prompts first differ at segment `index`, named `node` (the
 * break's node). Segments inserted or removed there are named as such; otherwise the segment's text is
 * compared (a tool's declaration key by key), and a segment whose text is the same but whose framing
 * differs is a setting folded into it (`settings`) or, failing one, the framing's own difference.
 */
export function changeAt(
  content: ChangeContent,
  index: number,
  node: string,
  settings?: ChangeSettings,
): BreakChange {
  const { previous, current } = content
  const secrets = content.secrets ?? []
  const before = previous.segments[index]
  const now = current.segments[index]
  // The segment before is shared; its end is the context where it is of the same part (a system block
  // before a system block, a message before a message), not a tool's declaration before the system prompt.
  const shared = index === 0 ? undefined : current.segments[index - 1]
  const part = (now ?? before)?.node.part
  const context =
    shared === undefined || shared.node.part !== part
      ? undefined
      : tail(shared.text, shared.text.length, secrets)
  if (before === undefined || now === undefined) {
    // The request ends before the previous one's segment: the history was cut.
    if (before === undefined) return { node, kind: 'inserted' }
    return {
      node,
      kind: 'removed',
      ...optional('context', context),
      before: excerpt(joined(previous.segments, index, previous.segments.length), secrets),
    }
  }
  const moved = shift(previous.segments, current.segments, index)
  if (moved !== undefined) {
    const side = moved.kind === 'inserted' ? current.segments : previous.segments
    const text = excerpt(joined(side, index, index + moved.count), secrets)
    return moved.kind === 'inserted'
      ? { node, kind: 'inserted', ...optional('context', context), after: text }
      : { node, kind: 'removed', ...optional('context', context), before: text }
  }
  // The same text in another framing: a setting folded into the segment, else another image.
  const setting =
    before.text !== now.text || settings === undefined ? undefined : settingChange(settings, node, secrets)
  if (setting !== undefined) return setting
  if (isContent(before) || isContent(now)) {
    // An image (or another block that is no text) on either side: no words to compare, the two blocks shown.
    return {
      node,
      kind: 'replaced',
      ...optional('context', context),
      before: excerpt(shown(before), secrets),
      after: excerpt(shown(now), secrets),
    }
  }
  if (before.text === now.text) return textChange(before.frame, now.frame, node, secrets)
  if (now.node.part === 'tools' || now.node.part === 'response_format') {
    const declared = declarationChange(before.text, now.text, node, secrets)
    if (declared !== undefined) return declared
  }
  return textChange(before.text, now.text, node, secrets)
}

/** A request as sent and as its simulator linearized it. */
export interface SentRequest {
  body: Record<string, unknown>
  prompt: Prompt
}

/**
 * What changed from one request to the next where no attribution names the node (an imported transcript
 * that holds its requests): the model, else the first segment where `current` stops extending `previous`,
 * named as the wire names it; undefined when it extends it on the same model.
 */
export function requestChange(previous: SentRequest, current: SentRequest): BreakChange | undefined {
  const model = bodyModel(current.body)
  if (bodyModel(previous.body) !== model) return modelChange(bodyModel(previous.body), model)
  const index = firstDivergence(previous.prompt, current.prompt)
  if (index === undefined) return undefined
  const segment = current.prompt.segments[index] ?? previous.prompt.segments[index]
  if (segment === undefined) return undefined
  return changeAt({ previous: previous.prompt, current: current.prompt }, index, describeNode(segment.node), {
    previous: configOf(previous.body),
    current: configOf(current.body),
  })
}

/** The model changed: a cache is per model, so that is the change whatever else did. */
export function modelChange(before: string | undefined, after: string | undefined): BreakChange {
  return {
    node: 'model',
    kind: 'field',
    field: 'model',
    ...optional('before', before),
    ...optional('after', after),
  }
}

/**
 * The first setting that differs between the two requests' settings (in name order), as a change at
 * `node`; undefined when none does.
 */
export function settingChange(
  settings: ChangeSettings,
  node: string,
  secrets: readonly string[] = [],
): BreakChange | undefined {
  const names = [...new Set([...Object.keys(settings.previous), ...Object.keys(settings.current)])].sort()
  const field = names.find(
    (name) => JSON.stringify(settings.previous[name]) !== JSON.stringify(settings.current[name]),
  )
  if (field === undefined) return undefined
  return {
    node,
    kind: 'field',
    field,
    ...optional('before', valueText(settings.previous[field], secrets)),
    ...optional('after', valueText(settings.current[field], secrets)),
  }
}

/**
 * The change inside one text: the span between the longest shared start and the longest shared end,
 * widened to whole words, each side clipped, with the shared text before it.
 */
export function textChange(
  before: string,
  after: string,
  node: string,
  secrets: readonly string[] = [],
): BreakChange {
  const shortest = Math.min(before.length, after.length)
  let start = 0
  while (start < shortest && before.charCodeAt(start) === after.charCodeAt(start)) start += 1
  let suffix = 0
  while (
    suffix < shortest - start &&
    before.charCodeAt(before.length - 1 - suffix) === after.charCodeAt(after.length - 1 - suffix)
  )
    suffix += 1
  let endBefore = before.length - suffix
  let endAfter = after.length - suffix
  // Widen to whole words: a boundary inside a word on either side moves to the word's edge.
  const inWord = (index: number) => wordAt(before, index) || wordAt(after, index)
  while (start > 0 && inWord(start - 1) && (wordAt(before, start) || wordAt(after, start))) start -= 1
  while (
    endBefore < before.length &&
    (wordAt(before, endBefore) || wordAt(after, endAfter)) &&
    (wordAt(before, endBefore - 1) || wordAt(after, endAfter - 1))
  ) {
    endBefore += 1
    endAfter += 1
  }
  start = pairStart(before, start)
  const removed = before.slice(start, endBefore)
  const inserted = after.slice(start, endAfter)
  const context = start === 0 ? undefined : tail(before, start, secrets)
  const kind = removed === '' ? 'inserted' : inserted === '' ? 'removed' : 'replaced'
  return {
    node,
    kind,
    ...optional('context', context),
    ...(removed === '' ? {} : { before: excerpt(removed, secrets) }),
    ...(inserted === '' ? {} : { after: excerpt(inserted, secrets) }),
  }
}

/**
 * A tool's (or an output format's) declaration compared key by key: the first key whose value differs,
 * as `tools[2].input_schema.properties.path`, with the two values and the tool's name as the context;
 * undefined when either side is not JSON.
 */
function declarationChange(
  before: string,
  after: string,
  node: string,
  secrets: readonly string[],
): BreakChange | undefined {
  let previous: unknown
  let current: unknown
  try {
    previous = JSON.parse(before)
    current = JSON.parse(after)
  } catch {
    return undefined
  }
  const path: string[] = []
  let left = previous
  let right = current
  for (;;) {
    const key = firstDifferentKey(left, right)
    if (key === undefined) break
    path.push(key)
    left = (left as Record<string, unknown>)[key]
    right = (right as Record<string, unknown>)[key]
  }
  const name = toolName(previous) === toolName(current) ? toolName(current) : undefined
  return {
    node,
    kind: 'field',
    field: `${node}${path.map(pathPart).join('')}`,
    ...optional('context', name === undefined ? undefined : mask(name, secrets)),
    ...optional('before', valueText(left, secrets)),
    ...optional('after', valueText(right, secrets)),
  }
}

/** The first key (or array index) of two objects (or arrays) whose values differ; undefined otherwise. */
function firstDifferentKey(left: unknown, right: unknown): string | undefined {
  if (typeof left !== 'object' || left === null || typeof right !== 'object' || right === null)
    return undefined
  if (Array.isArray(left) !== Array.isArray(right)) return undefined
  const leftRecord = left as Record<string, unknown>
  const rightRecord = right as Record<string, unknown>
  const keys = [...new Set([...Object.keys(leftRecord), ...Object.keys(rightRecord)])]
  return keys.find((key) => JSON.stringify(leftRecord[key]) !== JSON.stringify(rightRecord[key]))
}

/** `.name`, or `[3]` for an index, or `["odd key"]`. */
function pathPart(key: string): string {
  if (/^\d+$/.test(key)) return `[${key}]`
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
}

/** A declared tool's name, in any of the wires' shapes. */
function toolName(declaration: unknown): string | undefined {
  const record = (declaration ?? {}) as Record<string, Record<string, unknown> | undefined>
  const name = record.name ?? record.function?.name ?? record.toolSpec?.name
  return typeof name === 'string' ? name : undefined
}

/**
 * Segments inserted before the previous request's segment at `index` (it comes later in the current
 * request), or removed there (the current request's segment comes later in the previous one): the
 * fewer of the two, undefined when the segment was rewritten in place.
 */
function shift(
  previous: readonly Segment[],
  current: readonly Segment[],
  index: number,
): { kind: 'inserted' | 'removed'; count: number } | undefined {
  const inserted = offsetOf(previous[index], current, index + 1)
  const removed = offsetOf(current[index], previous, index + 1)
  if (inserted === undefined && removed === undefined) return undefined
  if (removed === undefined || (inserted !== undefined && inserted <= removed))
    return { kind: 'inserted', count: inserted as number }
  return { kind: 'removed', count: removed }
}

/** How far after `index - 1` the segment equal to `segment` comes in `segments`, from `from` on. */
function offsetOf(
  segment: Segment | undefined,
  segments: readonly Segment[],
  from: number,
): number | undefined {
  for (let at = from; at < segments.length; at += 1)
    if (sameSegment(segment, segments[at])) return at - (from - 1)
  return undefined
}

/**
 * Whether a segment is a block that is no text (an image, a file): the Anthropic and OpenAI linearizers
 * give it no text and put what identifies it (its payload) in its framing, after U+0002.
 */
function isContent(segment: Segment): boolean {
  return segment.text === '' && segment.frame.includes('\u0002')
}

/** A segment as a side shows it: its text, or a block that is no text by its framing (`[user|image]`). */
function shown(segment: Segment): string {
  if (!isContent(segment)) return segment.text
  const structure = segment.frame.slice(segment.frame.lastIndexOf('\u0003') + 1)
  return `[${structure.slice(0, structure.indexOf('\u0002'))}]`
}

/** The texts of segments `start` to `end` (exclusive), a line apart, no more than a side shows and its margin. */
function joined(segments: readonly Segment[], start: number, end: number): string {
  const texts: string[] = []
  let length = 0
  for (let at = start; at < end && length < SIDE_CHARACTERS + MASK_MARGIN; at += 1) {
    const segment = segments[at]
    const text = segment === undefined ? '' : shown(segment)
    texts.push(text)
    length += text.length + 1
  }
  return texts.join('\n')
}

/**
 * The start of a side, clipped to `SIDE_CHARACTERS` (an ellipsis where it was), its keys masked first:
 * the text read is cut at a word's edge, so a key is masked whole or not read at all.
 */
function excerpt(text: string, secrets: readonly string[]): string {
  let read = text
  if (read.length > SIDE_CHARACTERS + MASK_MARGIN) {
    let end = SIDE_CHARACTERS + MASK_MARGIN
    while (end > SIDE_CHARACTERS && wordAt(read, end - 1) && wordAt(read, end)) end -= 1
    read = read.slice(0, pairEnd(read, end))
  }
  const masked = mask(read, secrets)
  if (masked.length <= SIDE_CHARACTERS && read.length === text.length) return masked
  return `${masked.slice(0, pairEnd(masked, Math.min(masked.length, SIDE_CHARACTERS)))}…`
}

/**
 * The end of `text` before `end`, up to `CONTEXT_CHARACTERS` (an ellipsis where it was cut), its keys
 * masked first; a word the cut falls in is left out, so no key shows in part.
 */
function tail(text: string, end: number, secrets: readonly string[]): string | undefined {
  let from = Math.max(0, end - CONTEXT_CHARACTERS - MASK_MARGIN)
  // The text read starts at a word's edge: a key it would cut is not read at all.
  while (from > 0 && from < end && wordAt(text, from - 1) && wordAt(text, from)) from += 1
  const masked = mask(text.slice(pairStart(text, from), end), secrets)
  if (masked.length <= CONTEXT_CHARACTERS && from === 0) return masked === '' ? undefined : masked
  let cut = Math.max(0, masked.length - CONTEXT_CHARACTERS)
  while (cut > 0 && cut < masked.length && wordAt(masked, cut - 1) && wordAt(masked, cut)) cut += 1
  const kept = masked.slice(pairStart(masked, cut))
  return kept === '' ? undefined : `…${kept}`
}

/** Text with every key-shaped string, and the request's own keys, masked. */
function mask(text: string, secrets: readonly string[]): string {
  return redactText(text, secrets)
}

/** A setting's or a declaration's value as text (JSON but for a string), clipped and masked. */
function valueText(value: unknown, secrets: readonly string[]): string | undefined {
  if (value === undefined) return undefined
  return excerpt(typeof value === 'string' ? value : JSON.stringify(value), secrets)
}

/** An index moved back off the low half of a surrogate pair, so no cut splits a character. */
function pairStart(text: string, index: number): number {
  const code = text.charCodeAt(index)
  return index > 0 && code >= 0xdc00 && code <= 0xdfff ? index - 1 : index
}

/** An end moved back off the high half of a surrogate pair. */
function pairEnd(text: string, end: number): number {
  const code = text.charCodeAt(end - 1)
  return end > 0 && code >= 0xd800 && code <= 0xdbff ? end - 1 : end
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string }
}

/**
 * A change as the few lines a test runner prints under a failure: where and what, then the previous
 * request's side (`-`) and this request's (`+`), each quoted with its escapes (a line break shows as `\n`).
 */
export function changeLines(change: BreakChange): string[] {
  const quoted = (text: string | undefined) => (text === undefined ? '(not set)' : JSON.stringify(text))
  if (change.kind === 'field') {
    const field = change.field ?? change.node
    const where =
      field === change.node || field.startsWith(`${change.node}.`) || field.startsWith(`${change.node}[`)
        ? ''
        : ` at ${change.node}`
    const tool = change.context === undefined ? '' : ` (tool ${change.context})`
    return [`${field} changed${where}${tool}`, `- ${quoted(change.before)}`, `+ ${quoted(change.after)}`]
  }
  const after = change.context === undefined ? ' at its start' : ` after ${JSON.stringify(change.context)}`
  const lines = [`${change.node}: ${change.kind}${after}`]
  if (change.before !== undefined) lines.push(`- ${quoted(change.before)}`)
  if (change.after !== undefined) lines.push(`+ ${quoted(change.after)}`)
  return lines
}
