// The report vocabulary: one row per provider request (steps.csv) and one per scenario, variant and
// provider (summary.csv). Column order is the CSV contract of ARCHITECTURE.md.

import type { LoopName } from '../harness/loops/types.ts'
import type { HeaderReason, ProviderDiagnosis, ProviderId, Route } from '../harness/types.ts'
import type { BreakChange, ConversationKind } from '../providers/wire/exchange.ts'

// What changed at a break is defined beside the exchanges a capture keeps (a capture carries it).
export type { BreakChange }

/** The `steps.csv` columns, in contract order. */
export const STEP_COLUMNS = [
  'run_id',
  'scenario',
  'variant',
  'provider',
  'model',
  'route',
  'turn',
  'step',
  'attempt',
  'header_reason',
  'starts_series',
  'input_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'uncached_tokens',
  'output_tokens',
  'hit_ratio',
  'ideal_cache_read_tokens',
  'lost_tokens',
  'break_node',
  'break_event_seq',
  'break_cause',
  'cost_usd',
  'virtual_time_s',
  'latency_ms',
  'provider_cause',
  'provider_lost_tokens',
  'provider_lost_usd',
  'predicted_cache_read_tokens',
  'predicted_cache_write_tokens',
  'loop',
  'session',
  'conversation_kind',
  'agent',
  'simulated_as',
  'price_source',
  'provider_diagnosis',
  'provider_diagnosis_missed_tokens',
] as const

/** Why the cache did not carry over to a request. */
export type BreakCause =
  | 'system-replace'
  | 'compaction-summary'
  | 'tool-result-prune'
  | 'tools-changed'
  | 'config-changed'
  | 'ttl-expired'
  | 'below-minimum'
  | 'lookback-miss'
  | 'routing-miss'
  /**
   * Provider side, on a simulator under serve's memory budget: a still-live entry was evicted to keep
   * within `--memory-budget`, so the request read less than the provider's cache would have given it.
   */
  | 'evicted'
  | 'prefix-drift'
  | 'after-slot'
  | 'image-offload'
  | 'history-rewrite'
  /** Captured traffic: a message of the history changed in place. */
  | 'message-edited'
  /** Captured traffic: messages of the history were dropped. */
  | 'history-truncated'
  /** Captured traffic: messages of the history were replaced by fewer (a summary). */
  | 'history-summarized'
  /**
   * Provider side: the provider's own rules left out part of what the client resent unchanged (earlier
   * turns' reasoning items or thinking blocks), so the prompt stopped extending the cached one there.
   */
  | 'reasoning-dropped'
  /** Imported transcripts: the session was resumed in a new process before the rewrite. */
  | 'resume'
  /** Imported transcripts: a rewrite nothing in the transcript explains. */
  | 'unexplained'
  /** A gateway between client and provider changed the request (see `GatewayChangeKind`). */
  | GatewayChangeKind

/**
 * What a gateway changed in a request that matters to a cache, comparing what the client sent it with what
 * it sent upstream (reports/gateway-changes.ts).
 */
export type GatewayChangeKind =
  /** Cache marks (`cache_control`) the client set are gone upstream. */
  | 'gateway-cache-marks-dropped'
  /** Cache marks upstream that the client did not set. */
  | 'gateway-cache-marks-added'
  /** As many marks, on other blocks. */
  | 'gateway-cache-marks-moved'
  /** The system text upstream is the client's with text before it. */
  | 'gateway-system-prefixed'
  /** The system text upstream is another text. */
  | 'gateway-system-rewritten'
  /** Fewer content blocks upstream than the client sent (same wire). */
  | 'gateway-blocks-stripped'
  /** More content blocks upstream than the client sent (same wire). */
  | 'gateway-blocks-injected'
  /** `prompt_cache_key` set upstream where the client set none. */
  | 'gateway-cache-key-set'
  /** `prompt_cache_key` upstream differs from the client's. */
  | 'gateway-cache-key-overwritten'
  /** The client's `prompt_cache_key` is gone upstream. */
  | 'gateway-cache-key-dropped'
  /** The same tools in another order. */
  | 'gateway-tools-reordered'
  /** Tools added or removed. */
  | 'gateway-tools-changed'
  /** The request went upstream on another wire API (Anthropic Messages to OpenAI Chat, or back). */
  | 'gateway-wire-translated'
  /** The model upstream is another than the client asked for (`model claude-sonnet-4-6 → gpt-4.1`). */
  | 'gateway-model-changed'
  /** Fields of the client's request that nothing upstream carries (`thinking`, `metadata`, …). */
  | 'gateway-fields-dropped'
  /** The upstream's answer had usage (reported, or counted by the simulator that served it); the client got none. */
  | 'gateway-usage-dropped'
  /** The client was told every count was 0 while the upstream request had tokens. */
  | 'gateway-usage-zeroed'

/** What names a series of rows: its run, scenario, variant, provider and model. */
export interface SeriesLabels {
  runId: string
  scenario: string
  variant: string
  provider: ProviderId
  model: string
}

/** One provider request (a retried attempt is its own row). */
export interface StepRow extends SeriesLabels {
  route: Route
  turn: number
  /** 0 for a compaction summarizer call. */
  step: number
  attempt: number
  headerReason: HeaderReason | undefined
  startsSeries: boolean
  /** False for a failed attempt (its token columns are 0). */
  ok: boolean
  /**
   * Set on a request the provider answered (`ok`, counted as a request) without telling the client its
   * usage (a stream without `stream_options.include_usage`, a gateway that zeroes it): its token, ratio,
   * ideal, loss and cost fields are unknown — 0 here, so sums over rows count only what was reported, and
   * empty in steps.csv. The simulator's count of it, where one exists, is in the `predicted*` fields.
   */
  usageNotReported?: true
  /** First successful request of its session: reported, but outside the warm hit ratio. */
  cold: boolean
  inputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  uncachedTokens: number
  outputTokens: number
  /** cache_read / input; undefined when input is 0. */
  hitRatio: number | undefined
  idealCacheReadTokens: number
  lostTokens: number
  breakNode: string | undefined
  breakEventSeq: number | undefined
  breakCause: BreakCause | undefined
  /** What changed at the break, where the source held the content (issue 45); absent otherwise. */
  breakChange?: BreakChange
  /**
   * On a request that marked nothing for caching where its provider caches only what is marked
   * (Anthropic, Bedrock): what it would have cost with the mark a client that asks sends, simulated on a
   * cache of its own. Absent on every other request.
   */
  markedCostUsd?: number
  /**
   * Why the provider side cost this request tokens on top of `lostTokens` (`ttl-expired`, `lookback-miss`,
   * `routing-miss`); set with `providerLostTokens` > 0, alongside a client-side `breakCause` when both happened.
   */
  providerCause: BreakCause | undefined
  /**
   * Tokens a warm cache (nothing expired, no lookback window, the previous request's machine) would have
   * read on top of the ideal: what an idle gap or the provider's reach cost.
   */
  providerLostTokens: number
  /** What `providerLostTokens` cost: the request's cost at its ideal minus its cost at the warm read. */
  providerLostUsd: number
  costUsd: number
  /** Cost had the request read its ideal. */
  idealCostUsd: number
  virtualTimeS: number
  latencyMs: number
  /**
   * The simulator's prediction of the cache read and write, beside the provider's own usage: set when the
   * usage came from the real provider (a live capture), empty when the simulator served the request. On a
   * request whose usage was not reported, the simulator's count (what the simulated provider billed, or
   * live its prediction) where one exists: never passed off as the usage.
   */
  predictedCacheReadTokens: number | undefined
  predictedCacheWriteTokens: number | undefined
  /** The agent loop that sent the request (`model`, `dsh`); absent for traffic no run's loop sent. */
  loop?: LoopName
  /**
   * The session the request's conversation (its variant) belongs to, where a session holds several
   * (captured agents: the agent's own session id); absent where the variant is the session.
   */
  session?: string
  /** The conversation's kind: `main` (also when absent), `subagent`, `side` or `compaction`. */
  conversationKind?: ConversationKind
  /** The agent and version that sent the request, where the request says (`claude-code/2.1.328`). */
  agent?: string
  /**
   * The catalog model whose rules and prices stood in for `model`, when the catalog lacks it: the row is
   * simulated and priced as that model.
   */
  simulatedAs?: string
  /**
   * The provider's own cache diagnostics of the request against the session's previous one, in its words
   * (`system_changed`, `input_changed`, `none`, `cache_hit`, …), where the request asked for them (a keyed
   * run on an API and model that offer them); reports/diagnosis.ts maps them to cachelab's causes.
   */
  providerDiagnosis?: ProviderDiagnosis
}

/** One (scenario, variant, provider) of a run. */
export interface SummaryRow extends SeriesLabels {
  requests: number
  failedAttempts: number
  /**
   * Requests (counted in `requests`) answered without usage: the sums below leave them out. Absent when
   * every request reported its usage; equal to `requests` when none did, and then summary.csv leaves the
   * token and cost cells empty rather than write 0.
   */
  usageNotReported?: number
  inputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  uncachedTokens: number
  outputTokens: number
  /** Token-weighted: read / input over successful requests, each session's first (cold) request excluded. */
  hitRatioWarm: number | undefined
  /**
   * The sums behind `hitRatioWarm`, so a session can sum its conversations' (never average their ratios);
   * absent on a row read back from summary.csv, which keeps the ratio alone.
   */
  warmInputTokens?: number
  warmCacheReadTokens?: number
  /** Token-weighted over every successful request. */
  hitRatioAll: number | undefined
  /** write / input over every successful request. */
  writeRatio: number | undefined
  idealCacheReadTokens: number
  lostTokens: number
  /** Tokens the provider side cost (idle expiry, lookback, routing): the sum of the rows'. */
  providerLostTokens: number
  providerLostUsd: number
  costUsd: number
  idealCostUsd: number
  /** Rows with a break cause. */
  breaks: number
  /** Scenario claims that read this session and hold on its provider. */
  claimsHeld: number
  /** Scenario claims that read this session and fail on its provider. */
  claimsFailed: number
  largestBreak: { lostTokens: number; turn: number; step: number; cause: BreakCause | undefined } | undefined
  /** The agent loop of the session's rows, when a run's loop sent them. */
  loop?: LoopName
  /** The session the conversation belongs to, the kind and the agent, as its rows say. */
  session?: string
  conversationKind?: ConversationKind
  agent?: string
  /**
   * The part of `costUsd` priced at a stand-in's prices (rows of a model the catalog lacks, `simulatedAs`);
   * absent when every row was priced as its own model.
   */
  standInCostUsd?: number
  /**
   * Requests of the session that marked nothing for caching where the provider caches only what is marked,
   * what they cost, and what they would have cost marked (`StepRow.markedCostUsd`). Absent when none.
   */
  nothingMarked?: { requests: number; costUsd: number; markedCostUsd: number }
  /**
   * Set when no measured request of the session reached its model's caching minimum (`minTokens`, the
   * largest of its models'): nothing of it could be cached, however it was marked.
   */
  belowMinimum?: { requests: number; minTokens: number }
}

/** The `summary.csv` columns, in order. */
export const SUMMARY_COLUMNS = [
  'run_id',
  'scenario',
  'variant',
  'provider',
  'model',
  'requests',
  'failed_attempts',
  'input_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'uncached_tokens',
  'output_tokens',
  'hit_ratio_warm',
  'hit_ratio_all',
  'write_ratio',
  'ideal_cache_read_tokens',
  'lost_tokens',
  'provider_lost_tokens',
  'provider_lost_usd',
  'cost_usd',
  'ideal_cost_usd',
  'breaks',
  'largest_break_lost_tokens',
  'largest_break_turn',
  'largest_break_step',
  'largest_break_cause',
  'claims_held',
  'claims_failed',
  'loop',
  'session',
  'conversation_kind',
  'agent',
  'stand_in_cost_usd',
  'usage_not_reported',
  'nothing_marked_requests',
  'nothing_marked_cost_usd',
  'marked_cost_usd',
  'below_minimum_requests',
  'caching_minimum_tokens',
] as const

/** A scenario claim's outcome on one provider. */
export interface ClaimResult {
  scenario: string
  provider: ProviderId
  /** The claim's id within its scenario. */
  claim: string
  text: string
  /** The variants it reads. */
  variants: string[]
  /** `not-run` when a variant it reads has no rows on the provider (filtered out or not applicable). */
  status: 'holds' | 'fails' | 'not-run'
  /** What it observed (empty when not run). */
  observed: string
}

/** The `claims.csv` columns, in order. */
export const CLAIM_COLUMNS = [
  'scenario',
  'provider',
  'claim',
  'status',
  'variants',
  'text',
  'observed',
] as const

/** One break of a session (a step row with a cause): what `breaks.csv` and the gate compare. */
export interface BreakRow {
  scenario: string
  variant: string
  provider: ProviderId
  model: string
  turn: number
  step: number
  attempt: number
  /** The client-side or, alone, provider-side cause (the step row's `break_cause`). */
  cause: BreakCause | undefined
  node: string | undefined
  eventSeq: number | undefined
  lostTokens: number
  /** Cost of the lost tokens: the row's cost minus its ideal cost. */
  lostUsd: number
  providerCause: BreakCause | undefined
  providerLostTokens: number
  providerLostUsd: number
  inputTokens: number
  cacheReadTokens: number
  /** The agent loop that sent the request, when a run's loop did. */
  loop?: LoopName
  /** The session the conversation belongs to and the conversation's kind, as the step row says. */
  session?: string
  conversationKind?: ConversationKind
  /** The model of the session's previous successful request, where this request switched from it. */
  previousModel?: string
  /** What changed at the break, as the step row says. */
  change?: BreakChange
  /**
   * On a `history-summarized` break, the compaction that made the summary: its conversation's requests in
   * the same session, what they read of the cache, wrote to it (never read again: the history they
   * summarize is rewritten) and cost. Shown in the break's line; breaks.csv keeps its columns.
   */
  compaction?: CompactionCost
}

/** What a compaction's summary requests cost, beside the rewrite they caused. */
export interface CompactionCost {
  requests: number
  inputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  costUsd: number
}

/** The `breaks.csv` columns, in order. */
export const BREAK_COLUMNS = [
  'scenario',
  'variant',
  'provider',
  'model',
  'turn',
  'step',
  'attempt',
  'break_cause',
  'break_node',
  'break_event_seq',
  'lost_tokens',
  'lost_usd',
  'provider_cause',
  'provider_lost_tokens',
  'provider_lost_usd',
  'input_tokens',
  'cache_read_tokens',
  'loop',
  'session',
  'conversation_kind',
  'previous_model',
  'change_node',
  'change_kind',
  'change_field',
  'change_context',
  'change_before',
  'change_after',
] as const
