// The faults the mock providers inject, each the way the real API fails (see the `Fault` type): an HTTP
// error with the provider's body and retry headers, a stream cut mid-way, or an error event inside a 200
// stream. Three sources: a per-request header, a queue (the scenario runner's), and a schedule of rules
// (`serve --faults FILE`, `startCachelabMocks({ faults })`) that picks requests by session, position and
// provider. The syntax of the header and the schedule file is in fault-spec.ts.

import type { Fault, ProviderId } from '../../harness/types.ts'

export type { Fault }

/** The request header that fails one request: `x-cachelab-fault: 429;retry-after-ms=10`. */
export const FAULT_HEADER = 'x-cachelab-fault'

/** One rule of a fault schedule: which requests fail, and how. Every field given must match. */
export interface FaultRule {
  /**
   * The session id (as a capture names it: `x-cachelab-session`, a conversation key, or inferred), or `*`:
   * every session on its own, `times` counting per session. Absent: any request, counted over all.
   */
  session?: string
  /** The n-th request overall, from 1, counted as the handlers accept requests (a retry is a request). */
  request?: number
  /** The n-th request of the request's session, from 1 (a retry is a request). */
  sessionRequest?: number
  /** The provider the request is sent to. */
  provider?: ProviderId
  /** How the request fails. */
  fault: Fault
  /** How many matching requests the rule fails (per session with `session: "*"`); 1 when absent. */
  times?: number
}

/** A fault a request's header asks for. */
export interface HeaderFault {
  fault: Fault
  /** How many identical requests in a row fail (the first attempt and `times - 1` retries). */
  times: number
  /** The header as sent: with the request body, it tells a retry from a new request. */
  text: string
}

/** Faults queued for the next requests, in order. */
export class FaultQueue {
  private readonly queue: Fault[] = []

  push(...faults: Fault[]): void {
    this.queue.push(...faults)
  }

  take(): Fault | undefined {
    return this.queue.shift()
  }

  /** The fault the next `take` returns, left queued. */
  peek(): Fault | undefined {
    return this.queue[0]
  }

  get pending(): number {
    return this.queue.length
  }

  clear(): void {
    this.queue.length = 0
  }
}

/** What a request is, as far as a schedule's rules can tell. */
export interface ScheduledRequest {
  provider: ProviderId
  /** Absent when neither a header nor a capture names the session. */
  session: string | undefined
}

/** The rule a schedule picked for a request: its fault, and `spend` once the fault has happened. */
export interface ScheduledChoice {
  fault: Fault
  spend: () => void
}

/**
 * A fault schedule's state: the requests counted so far (overall and per session) and the faults each
 * rule has spent (per session for a `*` rule). Rules are tried in order; the first that matches and has
 * faults left wins.
 */
export class FaultSchedule {
  readonly rules: readonly FaultRule[]
  /** Faults spent, by rule index and then by session (`''` for a rule counted over all requests). */
  private readonly used: Array<Map<string, number>>
  private requests = 0
  private readonly sessionRequests = new Map<string, number>()
  private spentCount = 0

  /** `rules` as checked by `checkFaultRules` (fault-spec.ts). */
  constructor(rules: readonly FaultRule[] = []) {
    this.rules = rules
    this.used = rules.map(() => new Map<string, number>())
  }

  /**
   * Count one request and return the rule that fails it, if any. The rule is spent only by `spend`, so
   * a fault inside an answer that never comes (the simulator refused the request) is not used up.
   */
  next(request: ScheduledRequest): ScheduledChoice | undefined {
    this.requests += 1
    const sessionKey = request.session ?? ''
    const sessionRequest = (this.sessionRequests.get(sessionKey) ?? 0) + 1
    this.sessionRequests.set(sessionKey, sessionRequest)
    for (const [index, rule] of this.rules.entries()) {
      const used = this.used[index]
      if (used === undefined) continue
      const key = rule.session === '*' ? sessionKey : ''
      if ((used.get(key) ?? 0) >= (rule.times ?? 1)) continue
      if (rule.provider !== undefined && rule.provider !== request.provider) continue
      if (rule.session !== undefined && rule.session !== '*' && rule.session !== request.session) continue
      if (rule.request !== undefined && rule.request !== this.requests) continue
      if (rule.sessionRequest !== undefined && rule.sessionRequest !== sessionRequest) continue
      return {
        fault: rule.fault,
        spend: () => {
          used.set(key, (used.get(key) ?? 0) + 1)
          this.spentCount += 1
        },
      }
    }
    return undefined
  }

  /** Faults spent so far, over all rules. */
  get spent(): number {
    return this.spentCount
  }
}

/** The retry headers of a rate limit: exactly those the fault names. */
export function retryHeaders(fault: Extract<Fault, { kind: 'rate-limit' }>): Record<string, string> {
  return {
    ...(fault.retryAfterMs !== undefined ? { 'retry-after-ms': String(fault.retryAfterMs) } : {}),
    ...(fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {}),
  }
}

/** A fault in a few words, for a capture's record of the failed attempt. */
export function describeFault(fault: Fault): string {
  switch (fault.kind) {
    case 'rate-limit':
      return 'rate limit'
    case 'overloaded':
      return 'overloaded'
    case 'server-error':
      return 'server error'
    case 'stream-cut':
      return `stream cut after ${fault.afterFrames} frames`
    case 'stream-error':
      return 'error event in the stream'
  }
}
