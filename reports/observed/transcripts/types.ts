// The imported-transcript port's vocabulary: what a reader of an agent's own session files (Claude Code,
// Codex, DSH, pi) yields for each provider request — its recorded usage, when it happened, what the
// transcript shows happened before it, and, where the file holds it, the request itself. The report
// core turns these into the same rows as a run's (reports/observed-rows.ts).

import type { SeriesStartPolicy } from '../../../harness/policies.ts'
import type { AssistantMessage, ProviderId, Usage } from '../../../harness/types.ts'
import type { WireApi } from '../../../providers/types.ts'
import type { ConversationKind } from '../../../providers/wire/exchange.ts'

/** The transcript formats `cachelab import` reads. */
export type TranscriptFormat =
  | 'claude-code'
  | 'cline'
  | 'codex'
  | 'copilot'
  | 'droid'
  | 'dsh'
  | 'gemini-cli'
  | 'kilo'
  | 'opencode'
  | 'pi'
  | 'qwen-code'

export const TRANSCRIPT_FORMATS: readonly TranscriptFormat[] = [
  'claude-code',
  'cline',
  'codex',
  'copilot',
  'droid',
  'dsh',
  'gemini-cli',
  'kilo',
  'opencode',
  'pi',
  'qwen-code',
]

/**
 * Formats whose files detection takes for another's: a `kilo export` JSON has opencode's shape to the
 * field, so it is detected as opencode, and `--format kilo` names it.
 */
export const DETECTED_AS: Readonly<Partial<Record<TranscriptFormat, TranscriptFormat>>> = { kilo: 'opencode' }

/**
 * Where recorded usage comes from: a transcript, a keyed run's steps.csv (`cachelab run --live`) or a
 * `serve --upstream live --record` capture. The last two carry the simulator's prediction beside it.
 */
export type RecordSource = TranscriptFormat | 'keyed-run' | 'capture'

/** Something a transcript shows happened before a request, which can explain a cache rewrite. */
export type TranscriptEvent =
  /**
   * A compaction boundary or summary (Claude Code `compact_boundary`, Codex `compacted`, DSH `compaction/*`,
   * pi `compaction`). An agent's is the history replaced by a summary, what a capture of the same request
   * names `history-summarized`; a loop's log that names its own compaction event (DSH) gives its cause.
   */
  | { kind: 'compaction'; detail?: string; cause?: 'compaction-summary' }
  /** The model changed from the session's previous request. */
  | { kind: 'model-switch'; from: string; to: string }
  /** The session was resumed or continued in a new process (a new file header, a resume header reason). */
  | { kind: 'resume'; detail?: string }
  /** A request setting changed: effort, thinking level, reasoning summary, approval or sandbox policy. */
  | { kind: 'config-change'; detail: string }
  /** The tool list changed (where the transcript shows tools: DSH headers, Codex dynamic tools, Claude Code tool deltas). */
  | { kind: 'tools-change'; detail?: string }
  /** The system prompt or instructions changed (where the transcript holds them). */
  | { kind: 'system-change'; detail?: string }
  /**
   * A message already sent was sent again otherwise (Gemini CLI renders its first message, the workspace
   * listing, anew on resume): `node` is where the request first differs, as a capture names it.
   */
  | { kind: 'message-edit'; node: string; detail?: string }

/** One provider request as a transcript records it. */
export interface ObservedRequest {
  format: RecordSource
  /** `file:line` of the record that carries its usage (the first line of a deduplicated group). */
  source: string
  /** The session: the file's own session; a sidechain or subagent is a session of its own. */
  session: string
  /** The session this one branched from (a sidechain's or a fork's parent), when known. */
  parent?: string
  /**
   * What the conversation is to its `parent` session: a subagent (the default), a compaction
   * summarizer, or a side request (a title, a router) — as a capture names the same conversations.
   */
  kind?: Exclude<ConversationKind, 'main'>
  /** The agent and its version as the transcript records them (`codex/0.169.0`), when it does. */
  agent?: string
  provider: ProviderId
  /** The model as recorded (dated names are kept; the catalog maps prices by the nearest known name). */
  model: string
  /** When the request was made (or its response recorded), ISO 8601. */
  time: string
  /**
   * The recorded usage in disjoint buckets (`input` = read + write + uncached); `cacheWrite5m` /
   * `cacheWrite1h` where the transcript splits writes by lifetime.
   */
  usage: Usage
  /** What the transcript shows happened since the session's previous request, in order. */
  events: TranscriptEvent[]
  /** The user turn (from 1) and the request within it (from 1), where the transcript tells them. */
  turn?: number
  step?: number
  /** The provider's id of the request or response (the deduplication key), when recorded. */
  requestId?: string
  /**
   * Set on a copy of a request another session made, written again into this session's file (a Claude Code
   * `--fork-session` repeats its parent's entries; a Codex fork child opens with its parent's history):
   * never counted here, where the original is counted, but the request this session's next one continues
   * from. `from` is the session that made it, where the file says.
   */
  copied?: { from?: string }
  /**
   * The request as sent, where the transcript holds all of it (DSH logs, which keep the header and every
   * message); `estimated` says what was reconstructed rather than recorded.
   */
  request?: {
    api: WireApi
    body: Record<string, unknown>
    estimated?: string
    /**
     * The body leaves out tool schemas the agent sent (Codex rollouts record none): the simulator's read
     * of it, and of the requests replayed beside it on the same account, falls short of the provider's by
     * them, so it is no prediction to set beside the recorded usage. A translation (`--as`) still replays it.
     */
    withoutTools?: boolean
  }
  /**
   * The answer as recorded, where the transcript holds it (DSH logs): text, tool calls, and the reasoning
   * the next request may carry back. The replay renders it into the output-end cache units a next
   * request can read; it stays in memory (no output prints message text).
   */
  answer?: { message: AssistantMessage; reasoning?: string }
  /** The request re-derived under another series-start policy, when read with `ReadOptions.seriesStart`. */
  rederived?: PolicyRederivation
}

/**
 * Which policy a request's recorded system commits follow at a series start on an in-history route:
 * `either` when both policies commit the same there, `neither` when the log follows no rule cachelab knows.
 */
export type RecordedSeriesStart = SeriesStartPolicy | 'either' | 'neither'

/** A request re-derived under a series-start policy (`cachelab import --policy`), or why it cannot be. */
export type PolicyRederivation =
  | {
      kind: 'rederived'
      policy: SeriesStartPolicy
      /** The body the loop would have sent under `policy` (same wire as the recorded body). */
      body: Record<string, unknown>
      /** The request starts a series on an in-history route: the only place the two policies differ. */
      seriesStart: boolean
      /** At a series start, what the recorded system commits show. */
      recordedAs?: RecordedSeriesStart
      /** The first message index where `body` differs from the recorded body; absent when they are equal. */
      firstDifference?: number
    }
  | { kind: 'not-applicable'; reason: string }

/** What an agent counted for one session, by its own reckoning. */
export interface AgentTotal {
  session: string
  /** `file:line` of the record. */
  where: string
  /**
   * The id of the session's latest request before the record: a fork of the session starts from the total
   * written after the last request it copied (Claude Code carries a resumed session's total on).
   */
  after?: string
  costUsd: number
  /** Its token totals, summed over models, where it gives them. */
  tokens?: { input: number; cacheRead: number; cacheWrite: number; output: number }
}

/** A line a reader could not use: where it is and why. */
export interface TranscriptProblem {
  /** `file:line`. */
  where: string
  message: string
}

export interface ReadOptions {
  /** Skip (and count) a corrupt or torn line instead of failing on it. */
  lenient: boolean
  /** Told of every line skipped under `lenient`. */
  onProblem: (problem: TranscriptProblem) => void
  /**
   * Told of records read but not turned into requests for a reason that is no error — a provider
   * cachelab does not model, usage copied from a parent session's file — so a caller can count them.
   */
  onNote?: (note: TranscriptProblem) => void
  /**
   * Told of a session's own running total, where the agent writes one (Claude Code's `cost-state`): what
   * it counted for every request it made, recorded in the transcript or not. The latest one of a session
   * counts.
   */
  onAgentTotal?: (total: AgentTotal) => void
  /**
   * Also re-derive each request under this series-start policy (`request.rederived`), where the reader
   * can rebuild requests from the log's events (DSH).
   */
  seriesStart?: SeriesStartPolicy
}

/**
 * A reader of one transcript file: its requests in file order, streamed (a file is read line by line,
 * never held whole). A corrupt line fails with a `CachelabError` (kind `input`) naming `file:line`,
 * unless `lenient`.
 */
export type TranscriptReader = (file: string, options: ReadOptions) => AsyncIterable<ObservedRequest>
