// The providers' own cache diagnostics, answered by the mocks from the simulator's view of each request:
// Anthropic's `diagnostics` (asked by `diagnostics.previous_message_id`) and OpenAI Responses'
// `prompt_cache_diagnostics` (asked by `prompt_cache_options.comparison_response_id`). A request that can be
// named later leaves a fingerprint (its model, the settings its provider compares, its prompt as segment
// hashes and tokens, never text, and what it left cached), kept for an hour of virtual time within a byte
// budget; the first divergence between two fingerprints, in prompt order, gives the provider's reason.

import type { Prompt } from '../sim/types.ts'
import { canonicalJson, firstDivergentSegment, type SegmentDigest, segmentDigest } from '../wire/digest.ts'

/**
 * How long a fingerprint can be named, in virtual seconds. Both providers say only that their records
 * "expire after a short period"; an hour (Anthropic's longest cache lifetime, twice OpenAI's breakpoint
 * TTL) keeps every comparison whose cache could still have been read.
 */
export const FINGERPRINT_LIFETIME_SECONDS = 3600

/** The bytes of fingerprints a mock context keeps when no budget is given (in process). */
export const DEFAULT_FINGERPRINT_BYTES = 64 * 1024 * 1024

/** What a provider keeps of a request to compare a later one with. */
export interface Fingerprint {
  /** Virtual time of the request, seconds. */
  at: number
  model: string
  /** The settings the provider compares beside the prompt, each as JSON (see `anthropicSettings`). */
  settings: Readonly<Record<string, string>>
  /** The simulator's prompt, segment by segment: node, hash, tokens. */
  segments: readonly SegmentDigest[]
  /** Tokens the request left cached: what an unchanged extension of it could read next. */
  cached: number
}

/** A fingerprint of a simulated request. */
export function fingerprintOf(
  model: string,
  settings: Readonly<Record<string, string>>,
  prompt: Prompt,
  cached: number,
  at: number,
): Fingerprint {
  return { at, model, settings, segments: prompt.segments.map(segmentDigest), cached }
}

/** Estimated bytes of a fingerprint's own fields and of each segment it refers to. */
const FINGERPRINT_BYTES = 200
const REFERENCE_BYTES = 8
/** A segment digest (a three-element array, its node and hash strings) and its count in `FingerprintStore`. */
const DIGEST_BYTES = 240

/**
 * Fingerprints by response id, oldest forgotten first past the byte budget; one expired by
 * `FINGERPRINT_LIFETIME_SECONDS` cannot be named. A session's requests share most of their segment digests
 * (the linearizers hand the same segments on), so each digest is counted once, however many fingerprints
 * refer to it.
 */
export class FingerprintStore {
  /** By API and response id (`anthropic-messages\u0000msg_…`): an id of one API never names another's request. */
  private readonly entries = new Map<string, Fingerprint>()
  /** How many kept fingerprints refer to each segment digest. */
  private readonly references = new Map<SegmentDigest, number>()
  private held = 0

  constructor(
    private readonly budgetBytes = DEFAULT_FINGERPRINT_BYTES,
    private readonly lifetimeSeconds = FINGERPRINT_LIFETIME_SECONDS,
  ) {}

  /** Keep a fingerprint under an API's response id; forget the oldest ones past the budget. */
  remember(api: string, responseId: string, fingerprint: Fingerprint): void {
    const id = `${api}\u0000${responseId}`
    this.forget(id)
    this.entries.set(id, fingerprint)
    this.held += FINGERPRINT_BYTES + REFERENCE_BYTES * fingerprint.segments.length
    for (const digest of fingerprint.segments) {
      const count = this.references.get(digest) ?? 0
      if (count === 0) this.held += DIGEST_BYTES
      this.references.set(digest, count + 1)
    }
    for (const oldest of this.entries.keys()) {
      if (this.held <= this.budgetBytes || oldest === id) break
      this.forget(oldest)
    }
  }

  /** The fingerprint of an API's response id at virtual time `at`; undefined when unknown, forgotten or expired. */
  find(api: string, responseId: string, at: number): Fingerprint | undefined {
    const fingerprint = this.entries.get(`${api}\u0000${responseId}`)
    if (fingerprint === undefined || at - fingerprint.at > this.lifetimeSeconds) return undefined
    return fingerprint
  }

  /** Estimated bytes held. */
  get bytes(): number {
    return this.held
  }

  get size(): number {
    return this.entries.size
  }

  clear(): void {
    this.entries.clear()
    this.references.clear()
    this.held = 0
  }

  private forget(id: string): void {
    const fingerprint = this.entries.get(id)
    if (fingerprint === undefined) return
    this.entries.delete(id)
    this.held -= FINGERPRINT_BYTES + REFERENCE_BYTES * fingerprint.segments.length
    for (const digest of fingerprint.segments) {
      const count = (this.references.get(digest) ?? 1) - 1
      if (count > 0) this.references.set(digest, count)
      else {
        this.references.delete(digest)
        this.held -= DIGEST_BYTES
      }
    }
  }
}

/** Where two fingerprints' prompts part: the part of the first divergent segment, and the tokens before it. */
interface Divergence {
  part: string
  /** The index of the item (message, input item) the segment renders, when it renders one. */
  index: number
  /** Tokens of the previous prompt before the divergence. */
  common: number
}

/** The part (`tools`, `system`, `messages`, `input`, …) and index of a digest's node (`messages[3].1`). */
function nodeOf(digest: SegmentDigest): { part: string; index: number } {
  const match = /^([a-z_]+)\[(\d+)\]/i.exec(digest[0])
  return match === null ? { part: digest[0], index: 0 } : { part: match[1] ?? '', index: Number(match[2]) }
}

/** A part's place in the prompt: tools, then the system prompt, then the conversation. */
function rank(part: string): number {
  if (part === 'tools' || part === 'response_format') return 0
  return part === 'system' ? 1 : 2
}

/**
 * Where two prompts part. Where the two segments there belong to different parts, the earlier part is the
 * one that changed: a request that drops its tools has its system prompt where the other had a tool.
 */
function divergence(previous: Fingerprint, current: Fingerprint): Divergence | undefined {
  const index = firstDivergentSegment(previous.segments, current.segments)
  if (index === undefined) return undefined
  const now = current.segments[index]
  const before = previous.segments[index]
  const nodes = [now, before].flatMap((segment) => (segment === undefined ? [] : [nodeOf(segment)]))
  const node = nodes.sort((left, right) => rank(left.part) - rank(right.part))[0]
  if (node === undefined) return undefined
  let common = 0
  for (let at = 0; at < index; at += 1) common += previous.segments[at]?.[2] ?? 0
  return { ...node, common }
}

/** What the compared request left cached that this one could not read past where they part. */
function missed(previous: Fingerprint, common: number): number {
  return Math.max(0, previous.cached - common)
}

/** The settings named in `keys` that differ between two fingerprints. */
function differs(previous: Fingerprint, current: Fingerprint, keys: readonly string[]): boolean {
  return keys.some((key) => previous.settings[key] !== current.settings[key])
}

// ─── Anthropic ────────────────────────────────────────────────────────────────────────────────────

/** A `cache_miss_reason` (Anthropic's `CacheMissReason` union). */
export type AnthropicCacheMissReason =
  | {
      type: 'model_changed' | 'system_changed' | 'tools_changed' | 'messages_changed'
      cache_missed_input_tokens: number
    }
  | { type: 'previous_message_not_found' | 'unavailable' }

/** The `diagnostics` of a Message: null when nothing was compared or nothing diverged. */
export type AnthropicDiagnostics = { cache_miss_reason: AnthropicCacheMissReason | null } | null

/**
 * Beside `model`, the request parameters whose change the API names `unavailable` when model, system and
 * tools match (`tool_choice`, `thinking`, `context_management`, `output_config`, `output_format`, the set
 * of active `anthropic-beta` headers), and `speed`, which it names `model_changed`.
 */
const ANTHROPIC_COMPARED = [
  'tool_choice',
  'thinking',
  'context_management',
  'output_config',
  'output_format',
] as const

/** The settings an Anthropic fingerprint keeps: `speed`, and the other prompt-affecting parameters. */
export function anthropicSettings(
  body: Record<string, unknown>,
  betas: readonly string[],
): Record<string, string> {
  const settings: Record<string, string> = { speed: canonicalJson(body.speed ?? null) }
  for (const key of ANTHROPIC_COMPARED) settings[key] = canonicalJson(body[key] ?? null)
  settings.betas = JSON.stringify([...new Set(betas.filter((beta) => beta !== ''))].sort())
  return settings
}

const ANTHROPIC_OTHER = [...ANTHROPIC_COMPARED, 'betas']

/**
 * Anthropic's diagnosis of `current` against the request `diagnostics.previous_message_id` named
 * (`previous`; undefined when the API keeps no fingerprint of it). The model (or speed) first, then the
 * first divergent segment of the prompt (tools, then system, then messages: the API's order), then the
 * other prompt-affecting parameters; a request whose messages only appended to the previous ones is null.
 */
export function anthropicDiagnosis(
  previous: Fingerprint | undefined,
  current: Fingerprint,
): AnthropicDiagnostics {
  if (previous === undefined) return { cache_miss_reason: { type: 'previous_message_not_found' } }
  const changed = (
    type: 'model_changed' | 'system_changed' | 'tools_changed' | 'messages_changed',
    common: number,
  ) => ({
    cache_miss_reason: { type, cache_missed_input_tokens: missed(previous, common) },
  })
  if (previous.model !== current.model || differs(previous, current, ['speed']))
    return changed('model_changed', 0)
  const parted = divergence(previous, current)
  const unavailable = differs(previous, current, ANTHROPIC_OTHER)
  if (parted === undefined) return unavailable ? { cache_miss_reason: { type: 'unavailable' } } : null
  switch (parted.part) {
    case 'tools':
      return changed('tools_changed', parted.common)
    case 'system':
      return changed('system_changed', parted.common)
    default:
      // The parameters are folded into the first message's rendering: a change of one is not the messages'.
      return unavailable
        ? { cache_miss_reason: { type: 'unavailable' } }
        : changed('messages_changed', parted.common)
  }
}

// ─── OpenAI Responses ─────────────────────────────────────────────────────────────────────────────

/** The reasons of a `cache_miss` (OpenAI's `CacheMissReasonTypeEnum`). */
export type ResponsesCacheMissReason =
  | 'model_changed'
  | 'prompt_cache_key_changed'
  | 'service_tier_changed'
  | 'tools_changed'
  | 'text_format_changed'
  | 'reasoning_effort_changed'
  | 'verbosity_changed'
  | 'context_compacted'
  | 'input_changed'

/** A Response's `prompt_cache_diagnostics`. */
export type ResponsesDiagnostics =
  | {
      type: 'cache_miss'
      reason: ResponsesCacheMissReason
      cache_missed_tokens: number
      comparison_reusable_tokens: number
    }
  | { type: 'cache_hit' | 'comparison_response_not_found' | 'unavailable' }

const asRecord = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}

/** The settings an OpenAI fingerprint keeps, each with the API's default where unset. */
export function responsesSettings(body: Record<string, unknown>): Record<string, string> {
  const text = asRecord(body.text)
  const tier = body.service_tier
  return {
    prompt_cache_key: canonicalJson(body.prompt_cache_key ?? null),
    // `auto` runs on the project's default tier: unset, `auto` and `default` are one tier.
    service_tier: canonicalJson(tier === undefined || tier === null || tier === 'auto' ? 'default' : tier),
    text_format: canonicalJson(text.format ?? { type: 'text' }),
    reasoning_effort: canonicalJson(asRecord(body.reasoning).effort ?? null),
    verbosity: canonicalJson(text.verbosity ?? 'medium'),
  }
}

/** The settings reasons in the order OpenAI's table lists them, tools between them (prompt order). */
const RESPONSES_SETTINGS: ReadonlyArray<[key: string, reason: ResponsesCacheMissReason]> = [
  ['prompt_cache_key', 'prompt_cache_key_changed'],
  ['service_tier', 'service_tier_changed'],
]
const RESPONSES_FORMAT: ReadonlyArray<[key: string, reason: ResponsesCacheMissReason]> = [
  ['text_format', 'text_format_changed'],
  ['reasoning_effort', 'reasoning_effort_changed'],
  ['verbosity', 'verbosity_changed'],
]

/**
 * OpenAI's diagnosis of `current` against the response `comparison_response_id` named (`previous`;
 * undefined when no record of it is kept): the first classified reason, in the order of the guide's
 * table (model, cache key, service tier, tools, text format, reasoning effort, verbosity, then the input:
 * `context_compacted` where the input diverges at a compaction item, else `input_changed`). A change is a
 * `cache_miss` only where it cost reuse: a request that could read everything the compared response left
 * cached is a `cache_hit`. `compactionAt` says whether the current input item at an index is a compaction.
 */
export function responsesDiagnosis(
  previous: Fingerprint | undefined,
  current: Fingerprint,
  compactionAt: (index: number) => boolean = () => false,
): ResponsesDiagnostics {
  if (previous === undefined) return { type: 'comparison_response_not_found' }
  const miss = (reason: ResponsesCacheMissReason, common: number): ResponsesDiagnostics => {
    const lost = missed(previous, common)
    return lost === 0
      ? { type: 'cache_hit' }
      : { type: 'cache_miss', reason, cache_missed_tokens: lost, comparison_reusable_tokens: previous.cached }
  }
  if (previous.model !== current.model) return miss('model_changed', 0)
  for (const [key, reason] of RESPONSES_SETTINGS)
    if (differs(previous, current, [key])) return miss(reason, 0)
  const parted = divergence(previous, current)
  if (parted?.part === 'tools') return miss('tools_changed', parted.common)
  for (const [key, reason] of RESPONSES_FORMAT) if (differs(previous, current, [key])) return miss(reason, 0)
  if (parted === undefined) return { type: 'cache_hit' }
  const compacted = parted.part === 'input' && compactionAt(parted.index)
  return miss(compacted ? 'context_compacted' : 'input_changed', parted.common)
}
