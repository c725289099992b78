// The mock providers for a user's own tests (the `cachelab/msw` entry point): the MSW handlers that answer
// the official SDKs' requests to the real API hosts from the cache simulators, and `startCachelabMocks`,
// which serves them in process and records every request — told into sessions as `serve --record` does,
// no header needed — into the same step rows as a run, with their ideal, lost tokens and breaks.

import { setupServer } from 'msw/node'
import { MockContext, type MockContextOptions } from '../providers/mock/context.ts'
import type { FaultRule } from '../providers/mock/faults.ts'
import { mockHandlers } from '../providers/mock/handlers.ts'
import type { ReplyBook } from '../providers/mock/reply.ts'
import { type ReplyRuleInput, readReplies, repliesFromRules } from '../providers/mock/reply-file.ts'
import { releaseResponseClones } from '../providers/mock/server.ts'
import type { CapturedExchange } from '../providers/wire/exchange.ts'
import { CAPTURE_SCENARIO, captureRows } from './capture-rows.ts'
import { recordContext } from './observed/capture/recorder.ts'
import type { StepRow } from './types.ts'

export { type MockCall, MockContext, type MockContextOptions } from '../providers/mock/context.ts'
export { FAULT_HEADER, type Fault, type FaultRule } from '../providers/mock/faults.ts'
export { mockHandlers } from '../providers/mock/handlers.ts'
export type { ReplyRuleInput } from '../providers/mock/reply-file.ts'
export { type MockProviders, releaseResponseClones, startMockProviders } from '../providers/mock/server.ts'
export type { CapturedExchange } from '../providers/wire/exchange.ts'

/** What the mocks recorded. */
export interface CachelabRecorder {
  /** Every request so far, in order, as step rows (scenario `capture`, one variant per session). */
  rows(): StepRow[]
  /** The rows of one session. */
  rows(session: string): StepRow[]
  /** Every request so far as recorded exchanges (digests, usage, the simulator's view). */
  exchanges(): readonly CapturedExchange[]
  /** The conversations seen (a session's main conversation is named as the session), in order of their first request. */
  sessions(): string[]
  /** Forget what was recorded and the sessions seen (the caches stay warm; `context.reset()` empties them). */
  clear(): void
}

/** Options of the mocks. */
export interface CachelabMocksOptions {
  /** Simulator options: other cache rules than the catalog's, a seed for best-effort behaviour. */
  simulator?: MockContextOptions['simulator']
  /**
   * Virtual time in seconds (idle gaps, TTLs). Defaults to wall-clock seconds since the mocks started;
   * `advance(seconds)` moves it forward, and a request's `x-cachelab-at` header sets that request's time.
   */
  clock?: () => number
  /**
   * A fault schedule: which requests fail (by session, n-th request overall or of a session, provider)
   * and how, as in `serve --faults FILE`. A request's `x-cachelab-fault` header fails that one request.
   */
  faults?: readonly FaultRule[]
  /** The scenario column of the rows; `capture` by default. */
  scenario?: string
  /**
   * Accept what the real APIs refuse (see docs/providers.md, "What the mocks refuse"): every well-formed body
   * is simulated.
   */
  lenient?: boolean
  /**
   * What the model answers per session, turn and step: the path of a replies file (JSON Lines or a JSON
   * array), or its rules. Without it (and for requests no rule covers) the default answers: one declared
   * tool called after a user message, `OK.` otherwise. Validated at once: a bad rule throws naming it.
   */
  replies?: string | readonly ReplyRuleInput[]
}

/** The replies of the options, validated. */
function repliesOf(replies: CachelabMocksOptions['replies']): ReplyBook | undefined {
  if (replies === undefined) return undefined
  return typeof replies === 'string' ? readReplies(replies) : repliesFromRules(replies)
}

/** The handlers, their shared state and the recorder, for a user's own `setupServer`. */
export interface CachelabHandlers {
  handlers: ReturnType<typeof mockHandlers>
  context: MockContext
  recorder: CachelabRecorder
}

/** The mocks running in process. */
export interface CachelabMocks {
  context: MockContext
  recorder: CachelabRecorder
  /** Move virtual time forward by `seconds` (a TTL expiry without the wait); `context.advance` too. */
  advance(seconds: number): void
  /** Stop intercepting. */
  close(): void
}

/**
 * The mock providers' handlers with a recorder, to pass to your own `setupServer(...handlers)` (for
 * example beside your app's other handlers).
 */
export function cachelabHandlers(options: CachelabMocksOptions = {}): CachelabHandlers {
  const started = Date.now()
  const replies = repliesOf(options.replies)
  const context = new MockContext({
    clock: options.clock ?? (() => (Date.now() - started) / 1000),
    ...(options.simulator !== undefined ? { simulator: options.simulator } : {}),
    ...(options.faults !== undefined ? { faults: options.faults } : {}),
    ...(options.lenient !== undefined ? { lenient: options.lenient } : {}),
    ...(replies !== undefined ? { replies } : {}),
  })
  const recorded: CapturedExchange[] = []
  const record = (exchange: CapturedExchange) => recorded.push(exchange)
  // The recorder tells each request into its session (replies and fault rules go by it, as in `serve`).
  recordContext(context, record)
  const labels = { runId: 'msw', scenario: options.scenario ?? CAPTURE_SCENARIO }
  const recorder: CachelabRecorder = {
    rows: (session?: string) => {
      const rows = captureRows(recorded, labels)
      return session === undefined ? rows : rows.filter((row) => row.variant === session)
    },
    exchanges: () => recorded,
    sessions: () => [...new Set(recorded.map((exchange) => exchange.conversation))],
    clear: () => {
      recorded.length = 0
      recordContext(context, record)
    },
  }
  return { handlers: mockHandlers(context), context, recorder }
}

/**
 * Start the mock providers in process: the official SDKs' requests to api.openai.com, api.anthropic.com
 * and api.deepseek.com are answered by the simulators and recorded; anything else unhandled is an error.
 * Call `close` when done.
 */
export function startCachelabMocks(options: CachelabMocksOptions = {}): CachelabMocks {
  const { handlers, context, recorder } = cachelabHandlers(options)
  const server = setupServer(...handlers)
  server.listen({ onUnhandledRequest: 'error' })
  releaseResponseClones(server)
  return {
    context,
    recorder,
    advance: (seconds) => context.advance(seconds),
    close: () => server.close(),
  }
}
