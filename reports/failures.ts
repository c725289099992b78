// Whether a run's providers answered: per provider, the attempts sent, those that failed, the requests
// the loop gave up on after its retries, and the first failure's reason. `cachelab run` exits 1 on them.

import type { ProviderId, SessionEvent } from '../harness/types.ts'
import type { StepRow } from './types.ts'

/** One session of a run, as the failure check reads it. */
export interface SessionOutcome {
  provider: ProviderId
  /** The session's rows in the order they were sent (a retried attempt is its own row). */
  rows: readonly StepRow[]
  /** The session log; its `assistant/attempt` events carry each failure's (redacted) error. */
  events: readonly SessionEvent[]
}

/** What one provider's requests came to over a run. */
export interface ProviderOutcome {
  provider: ProviderId
  /** Every attempt sent: successful requests and failed attempts. */
  attempts: number
  failedAttempts: number
  /** Requests that never succeeded: their last attempt failed and no retry followed. */
  failedRequests: number
  /** Requests that succeeded (on some attempt). */
  requests: number
  /** The first failed attempt's error as a user reads it; undefined when nothing failed. */
  firstError: string | undefined
}

/** Per provider, in first-seen order, what its attempts came to. */
export function providerOutcomes(sessions: readonly SessionOutcome[]): ProviderOutcome[] {
  const outcomes = new Map<ProviderId, ProviderOutcome>()
  for (const session of sessions) {
    let outcome = outcomes.get(session.provider)
    if (outcome === undefined) {
      outcome = {
        provider: session.provider,
        attempts: 0,
        failedAttempts: 0,
        failedRequests: 0,
        requests: 0,
        firstError: undefined,
      }
      outcomes.set(session.provider, outcome)
    }
    for (const [index, row] of session.rows.entries()) {
      outcome.attempts += 1
      if (row.ok) {
        outcome.requests += 1
        continue
      }
      outcome.failedAttempts += 1
      // A retry is the next row with the next attempt number; a new request starts again at attempt 0.
      if (session.rows[index + 1]?.attempt !== row.attempt + 1) outcome.failedRequests += 1
    }
    outcome.firstError ??= firstError(session.events)
  }
  return [...outcomes.values()]
}

function firstError(events: readonly SessionEvent[]): string | undefined {
  for (const event of events) {
    if (event.type !== 'assistant/attempt') continue
    const { status, type, message } = event.data.error
    return `${status !== undefined ? `HTTP ${status} ` : ''}${type}: ${message}`
  }
  return undefined
}

/**
 * The one-line reason per provider that fails a run: every attempt failed, or, live, some request failed
 * after its retries (a live run measures the real provider, so a hole in it is not a result). A simulated
 * run keeps its scripted faults: they are what flaky-provider measures.
 */
export function runFailures(outcomes: readonly ProviderOutcome[], mode: 'simulated' | 'live'): string[] {
  const lines: string[] = []
  for (const outcome of outcomes) {
    const reason = outcome.firstError === undefined ? '' : ` (${outcome.firstError})`
    if (outcome.attempts > 0 && outcome.failedAttempts === outcome.attempts) {
      lines.push(`${outcome.provider}: ${outcome.attempts} of ${outcome.attempts} attempts failed${reason}`)
    } else if (mode === 'live' && outcome.failedRequests > 0) {
      const requests = outcome.requests + outcome.failedRequests
      lines.push(
        `${outcome.provider}: ${outcome.failedRequests} of ${requests} requests failed after retries, ${outcome.failedAttempts} of ${outcome.attempts} attempts${reason}`,
      )
    }
  }
  return lines
}
