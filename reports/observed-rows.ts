// The imported-transcript port: requests an agent recorded (Claude Code, Codex, DSH, Gemini CLI,
// opencode, pi, qwen-code) become the same step rows as a run's, through the one row core. A transcript
// holds usage and timestamps, rarely the request, so a break is read off the usage: a request that read less than the previous one of its
// session left cached (by each provider's rule) rewrote that prefix. What the transcript shows before it
// classifies it: an idle gap past the lifetime the writes indicate (provider side, `ttl-expired`), a
// compaction, a model switch, a resume, a setting, tool or system-prompt change, or nothing (`unexplained`).

import type { Vendor } from '../providers/catalog.ts'
import { findModel, type ModelEntry, standInModel, vendorOf } from '../providers/catalog.ts'
import type { Attribution } from './attribution.ts'
import { costUsd } from './cost.ts'
import type { ObservedRequest, TranscriptEvent } from './observed/transcripts/types.ts'
import { bucketsOf, type ConversationLabels, type RowLabels, stepRow } from './rows.ts'
import type { BreakCause, StepRow } from './types.ts'

/** Why a request wrote or missed what it did: the classes of the rewrites table. */
export type RewriteClass =
  /** A session's first request: nothing was cached for it yet. */
  | 'session-start'
  /** A sidechain's or subagent's first request. */
  | 'sidechain-start'
  /** Writes of what a request added to an intact prefix: the cost of growing, not a rewrite. */
  | 'growth'
  | 'ttl-expired'
  | 'compaction'
  | 'model-switch'
  | 'resume'
  | 'config-change'
  | 'tools-change'
  | 'system-change'
  /** A message already sent was rebuilt (an agent's first message rendered anew on resume). */
  | 'message-edit'
  /** A rewrite nothing in the transcript explains. */
  | 'unexplained'

/** A shortfall smaller than this many tokens is noise (a few framing tokens), not a rewrite. */
export const REWRITE_THRESHOLD_TOKENS = 1024

/** One request's place in the rewrites table. */
export interface Rewrite {
  class: RewriteClass
  /** Tokens written to the cache by the request. */
  writeTokens: number
  /** Tokens the previous request left cached that this one did not read. */
  missedTokens: number
  /** Seconds since the session's previous request (absent on a session's first). */
  gapSeconds?: number
}

/** The catalog entry a recorded model is priced and simulated as, and whether the name was mapped. */
export interface ImportedModel {
  entry: ModelEntry
  /** Set when the recorded name is not in the catalog: the catalog name used instead. */
  mappedFrom?: string
}

/**
 * The catalog entry for a recorded model name: the name itself, else its stand-in (`standInModel`: the
 * name without a date suffix, then the vendor's model sharing the most of its name at both ends).
 */
export function importedModel(vendor: Vendor, model: string): ImportedModel {
  const exact = findModel(vendor, model)
  if (exact !== undefined) return { entry: exact }
  return { entry: standInModel(vendor, model), mappedFrom: model }
}

/** Seconds a prefix stays cached after its last use, as the provider's rules and the writes indicate. */
function lifetimeSeconds(entry: ModelEntry, previous: ObservedRequest): number {
  switch (entry.cache.kind) {
    case 'anthropic':
    case 'bedrock':
      return (previous.usage.cacheWrite1h ?? 0) > 0
        ? entry.cache.ttlSeconds['1h']
        : entry.cache.ttlSeconds['5m']
    case 'openai-prefix':
      return entry.cache.idleEvictionSeconds
    case 'openai-breakpoint':
      return entry.cache.ttlSeconds
    case 'deepseek':
      return entry.cache.evictionSeconds
    case 'gemini':
      return entry.cache.implicitRetentionSeconds
  }
}

/**
 * Tokens the previous request left cached for an unchanged extension of it to read: Anthropic and
 * GPT-5.6 what it read plus what it wrote; OpenAI's automatic cache its whole input on the 128-token grid
 * past the minimum; Gemini its whole input from the minimum on; DeepSeek its input and output in 128-token units (recorded DeepSeek sessions read
 * exactly that, notes/2026-11-30-import-classification.md).
 */
function carriedTokens(entry: ModelEntry, previous: ObservedRequest): number {
  const usage = previous.usage
  const grid = (tokens: number, minimum: number) => (tokens < minimum ? 0 : Math.floor(tokens / 128) * 128)
  switch (entry.cache.kind) {
    case 'anthropic':
    case 'bedrock':
    case 'openai-breakpoint':
      return (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0)
    case 'openai-prefix':
      return grid(usage.input, entry.cache.minTokens)
    case 'deepseek':
      return grid(usage.input + usage.output, 0)
    case 'gemini':
      // The implicit cache keeps the whole prompt (an explicit cache is read whole by every request).
      return usage.input < entry.cache.minTokens ? 0 : usage.input
  }
}

/** The client-side cause and class an event names, the first that explains a rewrite. */
const EVENT_CLASSES: ReadonlyArray<{
  kind: TranscriptEvent['kind']
  class: RewriteClass
  cause: BreakCause
  node?: string
}> = [
  // A model switch first: the new model's cache holds nothing of the session, whatever else changed (a
  // capture names the model before any node).
  { kind: 'model-switch', class: 'model-switch', cause: 'config-changed', node: 'model' },
  // An agent's compaction replaced the history by a summary: a capture of the request says the same.
  { kind: 'compaction', class: 'compaction', cause: 'history-summarized' },
  { kind: 'system-change', class: 'system-change', cause: 'system-replace' },
  { kind: 'tools-change', class: 'tools-change', cause: 'tools-changed' },
  { kind: 'config-change', class: 'config-change', cause: 'config-changed' },
  { kind: 'message-edit', class: 'message-edit', cause: 'message-edited' },
  { kind: 'resume', class: 'resume', cause: 'resume' },
]

/** Events that break the prefix whatever the shortfall (`add`). */
const CERTAIN_BREAKS: ReadonlySet<TranscriptEvent['kind']> = new Set([
  'model-switch',
  'compaction',
  'message-edit',
])

/** What an import's rows are labelled with. */
export interface ObservedLabels {
  runId: string
}

/** A row and its place in the rewrites table. */
export interface ObservedRow {
  row: StepRow
  rewrite: Rewrite
  model: ImportedModel
}

/**
 * What a row says of its conversation: a sidechain or subagent is a conversation of its parent's session,
 * and a model the catalog lacks is priced as its stand-in, as a capture names them.
 */
function conversationOf(request: ObservedRequest, model: ImportedModel): ConversationLabels | undefined {
  if (request.parent === undefined && request.agent === undefined && model.mappedFrom === undefined)
    return undefined
  const labels: ConversationLabels = {}
  if (request.parent !== undefined) {
    labels.session = request.parent
    labels.conversationKind = request.kind ?? 'subagent'
  }
  if (request.agent !== undefined) labels.agent = request.agent
  if (model.mappedFrom !== undefined) labels.simulatedAs = model.entry.model
  return labels
}

/** Rows of one recorded session, request by request; holds only the previous request. */
export class ObservedRowBuilder {
  private readonly labels: ObservedLabels
  private previous: ObservedRequest | undefined
  /** When the previous request was made (Unix milliseconds), parsed once. */
  private previousAt = 0
  private turn = 0
  /** The catalog entry of each recorded model name met so far (the catalog does not change mid-import). */
  private readonly models = new Map<string, ImportedModel>()

  constructor(labels: ObservedLabels) {
    this.labels = labels
  }

  /**
   * Go on from a request counted elsewhere (a fork's copy of its parent's last request): the session's next
   * request is read against what that one left cached, and no row is made of it.
   */
  follow(request: ObservedRequest): void {
    this.previous = request
    this.previousAt = Date.parse(request.time)
  }

  add(request: ObservedRequest): ObservedRow {
    const vendor = vendorOf(request.provider)
    const modelKey = `${vendor}\u0000${request.model}`
    let model = this.models.get(modelKey)
    if (model === undefined) {
      model = importedModel(vendor, request.model)
      this.models.set(modelKey, model)
    }
    const entry = model.entry
    const previous = this.previous
    const previousAt = this.previousAt
    const at = Date.parse(request.time)
    this.previous = request
    this.previousAt = at
    this.turn += 1
    const labels: RowLabels = {
      runId: this.labels.runId,
      scenario: request.format,
      variant: request.session,
      provider: request.provider,
      model: request.model,
      route: entry.route,
      turn: request.turn ?? this.turn,
      step: request.step ?? 1,
      attempt: 0,
      headerReason: undefined,
      startsSeries: false,
      // Unix seconds: every session of an import on one clock (spans export at their real times).
      virtualTimeS: at / 1000,
      latencyMs: 0,
    }
    const usage = request.usage
    const read = usage.cacheRead ?? 0
    const writeTokens = usage.cacheWrite ?? 0
    if (previous === undefined) {
      const row = stepRow({
        labels,
        conversation: conversationOf(request, model),
        measured: {
          usage,
          cold: true,
          counterfactual: undefined,
          attribution: undefined,
          prices: entry.prices,
        },
      })
      const start: RewriteClass = request.parent !== undefined ? 'sidechain-start' : 'session-start'
      return {
        row,
        rewrite: { class: start, writeTokens, missedTokens: 0 },
        model,
      }
    }
    const gapSeconds = Math.max(0, (at - previousAt) / 1000)
    const carried = Math.min(carriedTokens(entry, previous), usage.input)
    const missed = Math.max(0, carried - read)
    let counterfactual: { ideal: number; warm: number; cause?: 'ttl-expired' } | undefined
    let attribution: Attribution | undefined
    let rewriteClass: RewriteClass = 'growth'
    // A model switch, a compaction or a rebuilt message always breaks the prefix (a model has its own
    // cache; the history sent is another), however little it cost: a capture names it at any size, and so
    // does the import. A shortfall with nothing of the kind shown is a rewrite past the noise floor only.
    const certain = request.events.some((event) => CERTAIN_BREAKS.has(event.kind))
    if (missed >= REWRITE_THRESHOLD_TOKENS || certain) {
      const lifetime = lifetimeSeconds(entry, previous)
      if (missed >= REWRITE_THRESHOLD_TOKENS && gapSeconds > lifetime) {
        // The provider's rules let it expire: no client loss; a warm cache would have read it.
        counterfactual = { ideal: read, warm: read + missed, cause: 'ttl-expired' }
        rewriteClass = 'ttl-expired'
      } else {
        counterfactual = { ideal: read + missed, warm: read + missed }
        const found = EVENT_CLASSES.find(({ kind }) => request.events.some((event) => event.kind === kind))
        rewriteClass = found?.class ?? 'unexplained'
        // A log that names its loop's own compaction event gives the loop's cause.
        const named = request.events.find((event) => event.kind === found?.kind)
        const node = named?.kind === 'message-edit' ? named.node : found?.node
        attribution = {
          cause: (named?.kind === 'compaction' ? named.cause : undefined) ?? found?.cause ?? 'unexplained',
          ...(node !== undefined ? { node } : {}),
        }
      }
    }
    const row = stepRow({
      labels,
      conversation: conversationOf(request, model),
      measured: { usage, cold: false, counterfactual, attribution, prices: entry.prices },
    })
    return {
      row,
      rewrite: { class: rewriteClass, writeTokens, missedTokens: missed, gapSeconds },
      model,
    }
  }
}

/** One class of the rewrites table. */
export interface RewriteSummary {
  class: RewriteClass
  /** Requests in the class. */
  requests: number
  writeTokens: number
  /** Share of every write token of the import (0–1). */
  writeShare: number
  missedTokens: number
  /** What the requests of the class cost above their ideal (client side) plus the provider side. */
  lostUsd: number
}

/** The rewrites table: per class, its requests, write tokens and their share, missed tokens and dollars. */
export function rewritesTable(entries: readonly ObservedRow[]): RewriteSummary[] {
  const tally = new RewritesTally()
  for (const entry of entries) tally.add(entry)
  return tally.result()
}

/** The rewrites table of rows added one at a time. */
export class RewritesTally {
  private totalWrites = 0
  private readonly byClass = new Map<RewriteClass, RewriteSummary>()

  add({ row, rewrite }: ObservedRow): void {
    this.totalWrites += rewrite.writeTokens
    const summary = this.byClass.get(rewrite.class) ?? {
      class: rewrite.class,
      requests: 0,
      writeTokens: 0,
      writeShare: 0,
      missedTokens: 0,
      lostUsd: 0,
    }
    summary.requests += 1
    summary.writeTokens += rewrite.writeTokens
    summary.missedTokens += rewrite.missedTokens
    summary.lostUsd += row.costUsd - row.idealCostUsd + row.providerLostUsd
    this.byClass.set(rewrite.class, summary)
  }

  result(): RewriteSummary[] {
    const totalWrites = this.totalWrites
    return [...this.byClass.values()]
      .map((summary) => ({
        ...summary,
        writeShare: totalWrites === 0 ? 0 : summary.writeTokens / totalWrites,
      }))
      .sort((a, b) => b.writeTokens - a.writeTokens || b.missedTokens - a.missedTokens)
  }
}

/**
 * What the import would have cost with every Anthropic prefix living 1 hour: writes at the 1-hour price,
 * and a prefix that expired after a gap under an hour read instead of rewritten. Other vendors keep
 * their cost (no lifetime option changes their price).
 */
export function costWithHourTtl(entries: readonly ObservedRow[]): number {
  let total = 0
  for (const entry of entries) total += hourTtlCost(entry)
  return total
}

/** One request's cost with every Anthropic prefix living 1 hour (`costWithHourTtl`). */
export function hourTtlCost({ row, rewrite, model }: ObservedRow): number {
  const prices = model.entry.prices
  if (model.entry.cache.kind !== 'anthropic' || prices.cacheWrite1h === undefined) return row.costUsd
  const saved =
    rewrite.class === 'ttl-expired' && (rewrite.gapSeconds ?? Number.POSITIVE_INFINITY) <= 3600
      ? Math.min(rewrite.missedTokens, row.cacheWriteTokens + row.uncachedTokens)
      : 0
  const buckets = bucketsOf({
    input: row.inputTokens,
    uncached: row.uncachedTokens,
    cacheRead: row.cacheReadTokens,
    cacheWrite: row.cacheWriteTokens,
    output: row.outputTokens,
    raw: {},
  })
  const writes = buckets.write5m + buckets.write1h
  const movedFromWrites = Math.min(saved, writes)
  const movedFromUncached = saved - movedFromWrites
  return costUsd(
    {
      uncached: row.uncachedTokens - movedFromUncached,
      read: row.cacheReadTokens + saved,
      write5m: 0,
      write1h: writes - movedFromWrites,
      output: row.outputTokens,
    },
    prices,
  )
}
