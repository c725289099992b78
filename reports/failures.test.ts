import { describe, expect, it } from 'vitest'
import type { ProviderId, SessionEvent } from '../harness/types.ts'
import { providerOutcomes, runFailures, type SessionOutcome } from './failures.ts'
import { stepRow } from './testing.ts'

const ok = (turn: number, attempt = 0) => stepRow({ turn, attempt, read: 900, uncached: 100 })
const failed = (turn: number, attempt: number) => stepRow({ turn, attempt, failed: true })

/** An `assistant/attempt` event with a network error, as the loop logs a refused connection. */
const attemptEvent = (seq: number, message: string): SessionEvent =>
  ({
    seq,
    time: 0,
    type: 'assistant/attempt',
    data: { turn: 1, step: 1, attempt: 0, error: { type: 'network', message, retryable: true } },
  }) as SessionEvent

function session(provider: ProviderId, rows: SessionOutcome['rows'], events: SessionEvent[] = []) {
  return { provider, rows: rows.map((row) => ({ ...row, provider })), events }
}

describe('what each provider’s attempts came to', () => {
  it('counts attempts, failed attempts, and requests that failed after every retry apart', () => {
    const [outcome] = providerOutcomes([
      // Turn 1 succeeds on its third attempt; turn 2 fails all three; turn 3 succeeds at once.
      session(
        'anthropic',
        [failed(1, 0), failed(1, 1), ok(1, 2), failed(2, 0), failed(2, 1), failed(2, 2), ok(3)],
        [attemptEvent(5, 'Connection error.')],
      ),
    ])
    expect(outcome).toEqual({
      provider: 'anthropic',
      attempts: 7,
      failedAttempts: 5,
      failedRequests: 1,
      requests: 2,
      firstError: 'network: Connection error.',
    })
  })

  it('adds up every session of a provider, each provider apart, in first-seen order', () => {
    const outcomes = providerOutcomes([
      session('deepseek', [ok(1), ok(2)]),
      session('anthropic', [failed(1, 0)]),
      session('deepseek', [failed(1, 0), ok(1, 1)]),
    ])
    expect(outcomes.map((outcome) => [outcome.provider, outcome.requests, outcome.failedAttempts])).toEqual([
      ['deepseek', 3, 1],
      ['anthropic', 0, 1],
    ])
  })
})

describe('when a run fails', () => {
  const allFailed = providerOutcomes([
    session('anthropic', [failed(1, 0), failed(1, 1), failed(1, 2)], [attemptEvent(4, 'Connection error.')]),
  ])
  const retried = providerOutcomes([session('openai-chat', [failed(1, 0), ok(1, 1), ok(2)])])
  const gaveUp = providerOutcomes([session('deepseek', [ok(1), failed(2, 0), failed(2, 1), failed(2, 2)])])

  it('fails, simulated or live, a provider whose every attempt failed, with one line naming the first error', () => {
    for (const mode of ['simulated', 'live'] as const) {
      expect(runFailures(allFailed, mode)).toEqual([
        'anthropic: 3 of 3 attempts failed (network: Connection error.)',
      ])
    }
  })

  it('fails a live run with a request that failed after its retries; a simulated run keeps its scripted faults', () => {
    expect(runFailures(gaveUp, 'live')).toEqual([
      'deepseek: 1 of 2 requests failed after retries, 3 of 4 attempts',
    ])
    expect(runFailures(gaveUp, 'simulated')).toEqual([])
  })

  it('passes a run whose failed attempts were all retried successfully', () => {
    expect(runFailures(retried, 'live')).toEqual([])
    expect(runFailures(retried, 'simulated')).toEqual([])
  })
})
