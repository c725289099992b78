// Test helpers for reports: step rows sketched from their token buckets, sessions of them with the first
// successful request marked cold, as rows.ts marks it. Used by the reports and CLI tests.

import type { ProviderDiagnosis, ProviderId } from '../harness/types.ts'
import type { ConversationKind } from '../providers/wire/exchange.ts'
import type { BreakCause, BreakChange, StepRow } from './types.ts'

/** The parts of a step row a test cares about; the rest get plain defaults. */
export interface StepSketch {
  scenario?: string
  variant?: string
  provider?: ProviderId
  model?: string
  turn?: number
  step?: number
  attempt?: number
  /** Cache-read tokens. */
  read?: number
  /** Cache-write tokens. */
  write?: number
  /** Uncached tokens. */
  uncached?: number
  /** A failed attempt: every token column 0. */
  failed?: boolean
  /** Answered without usage: a request whose numbers are unknown (0 here), the simulator's read beside it. */
  unreported?: { predictedRead: number }
  /** Tokens the request would have read had it extended the previous one, beyond those it read. */
  lost?: number
  breakCause?: BreakCause
  providerCause?: BreakCause
  providerLost?: number
  breakNode?: string
  breakEventSeq?: number
  /** What changed at the break. */
  breakChange?: BreakChange
  cold?: boolean
  /** Virtual time of the request, in seconds. */
  at?: number
  /** A captured agent's conversation: its session, kind, agent, and the model simulated in its place. */
  session?: string
  conversationKind?: ConversationKind
  agent?: string
  simulatedAs?: string
  /** The provider's own cache diagnostics of the request. */
  providerDiagnosis?: ProviderDiagnosis
}

/** One step row; buckets sum to the input, the hit ratio is read / input. */
export function stepRow(sketch: StepSketch = {}): StepRow {
  // A failed attempt and one answered without usage have no numbers.
  const empty = sketch.failed === true || sketch.unreported !== undefined
  const read = empty ? 0 : (sketch.read ?? 0)
  const write = empty ? 0 : (sketch.write ?? 0)
  const uncached = empty ? 0 : (sketch.uncached ?? 0)
  const input = read + write + uncached
  const lost = empty ? 0 : (sketch.lost ?? 0)
  const cost = (uncached * 3 + read * 0.3 + write * 3.75) / 1_000_000
  return {
    runId: 'sim-test',
    scenario: sketch.scenario ?? 'append-only',
    variant: sketch.variant ?? 'default',
    provider: sketch.provider ?? 'anthropic',
    model: sketch.model ?? 'test-model',
    route: 'unsupported',
    turn: sketch.turn ?? 1,
    step: sketch.step ?? 1,
    attempt: sketch.attempt ?? 0,
    headerReason: undefined,
    startsSeries: false,
    ok: sketch.failed !== true,
    ...(sketch.unreported !== undefined ? { usageNotReported: true as const } : {}),
    cold: sketch.cold ?? false,
    inputTokens: input,
    cacheReadTokens: read,
    cacheWriteTokens: write,
    uncachedTokens: uncached,
    outputTokens: empty ? 0 : 10,
    hitRatio: input === 0 ? undefined : read / input,
    idealCacheReadTokens: read + lost,
    lostTokens: lost,
    breakNode: sketch.breakNode,
    breakEventSeq: sketch.breakEventSeq,
    breakCause: sketch.breakCause,
    providerCause: sketch.providerCause,
    providerLostTokens: empty ? 0 : (sketch.providerLost ?? 0),
    providerLostUsd: empty ? 0 : ((sketch.providerLost ?? 0) * 2.7) / 1_000_000,
    costUsd: cost,
    idealCostUsd: cost - (lost * 2.7) / 1_000_000,
    virtualTimeS: sketch.at ?? 0,
    latencyMs: 100,
    predictedCacheReadTokens: sketch.unreported?.predictedRead,
    predictedCacheWriteTokens: sketch.unreported === undefined ? undefined : 0,
    ...(sketch.session !== undefined ? { session: sketch.session } : {}),
    ...(sketch.conversationKind !== undefined ? { conversationKind: sketch.conversationKind } : {}),
    ...(sketch.agent !== undefined ? { agent: sketch.agent } : {}),
    ...(sketch.simulatedAs !== undefined ? { simulatedAs: sketch.simulatedAs } : {}),
    ...(sketch.providerDiagnosis !== undefined ? { providerDiagnosis: sketch.providerDiagnosis } : {}),
    ...(sketch.breakChange !== undefined ? { breakChange: sketch.breakChange } : {}),
  }
}

/** A session's rows: steps numbered 1, 2, … in turn 1 unless sketched, the first successful one cold. */
export function sessionRows(
  labels: Pick<
    StepSketch,
    'scenario' | 'variant' | 'provider' | 'model' | 'session' | 'conversationKind' | 'agent' | 'simulatedAs'
  >,
  sketches: readonly StepSketch[],
): StepRow[] {
  let seenSuccess = false
  return sketches.map((sketch, index) => {
    const cold = sketch.failed !== true && !seenSuccess
    if (sketch.failed !== true) seenSuccess = true
    return stepRow({ step: index + 1, ...labels, ...sketch, cold })
  })
}

/** The session id of `capturedAgent`'s Claude Code session. */
export const CAPTURED_SESSION = '15fe7312-9de3-42a8-a2ae-00744a981652'

/**
 * A capture of a coding agent, in the order its conversations' files are read: a Claude Code session's
 * subagent, side request, compaction and main conversation (which switches model at 2.1 and changes its
 * tools at 3.1), then a second session of one conversation.
 */
export function capturedAgent(): StepRow[] {
  const session = CAPTURED_SESSION
  const agent = 'claude-code/2.1.328'
  const base = { scenario: 'capture', provider: 'anthropic', agent } as const
  const sub = { ...base, session, conversationKind: 'subagent', model: 'claude-haiku-4-5' } as const
  return [
    ...sessionRows({ ...sub, variant: `${session}.subagent-a3c29f83d9214c246` }, [
      { write: 5000, uncached: 3 },
      { read: 5000, uncached: 50 },
    ]),
    ...sessionRows({ ...sub, variant: `${session}.side-title-5e1f0a2b`, conversationKind: 'side' }, [
      { write: 300, uncached: 3 },
    ]),
    ...sessionRows({ ...sub, variant: `${session}.compaction-1`, conversationKind: 'compaction' }, [
      { read: 9000, write: 14, uncached: 1300 },
    ]),
    ...sessionRows({ ...base, variant: session, model: 'claude-opus-5-5' }, [
      { write: 10_000, uncached: 3 },
      { read: 10_000, uncached: 100 },
      { write: 10_100, uncached: 3, turn: 2, step: 1, breakCause: 'config-changed', breakNode: 'model' },
      { read: 10_100, uncached: 50, turn: 2, step: 2 },
      {
        write: 10_200,
        uncached: 3,
        lost: 10_150,
        turn: 3,
        step: 1,
        breakCause: 'tools-changed',
        breakNode: 'tools[0]',
      },
    ]).map((row) => (row.turn >= 2 ? { ...row, model: 'claude-haiku-4-5' } : row)),
    ...sessionRows({ ...base, variant: 'fdf5a279-6f6b-4ccc-b408-7bed182d60ab', model: 'claude-opus-5-5' }, [
      { write: 11_900, uncached: 3 },
      { read: 11_900, uncached: 50 },
    ]),
  ]
}
