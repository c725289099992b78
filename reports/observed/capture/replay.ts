// `serve --replay DIR`: a recorded capture answers again. Each request is matched to its session's
// recording by position (the n-th request of the session gets the n-th recorded exchange) and must send
// what the recording sent: the same model, the same prompt segment by segment. It then gets the recorded
// answer (text and tool calls, ids included) or the recorded failure, at the recorded time, and the
// simulator computes the usage. A request that differs is refused, naming the first differing node.

import type { Fault } from '../../../harness/types.ts'
import type { RequestDigest } from '../../../providers/wire/digest.ts'
import { firstDivergentSegment } from '../../../providers/wire/digest.ts'
import type { CapturedExchange, ReplayAnswers, ReplayStep } from '../../../providers/wire/exchange.ts'
import type { Capture } from './store.ts'

/** Where a request first differs from the one recorded at its place, as a wire node (or `model`). */
export function divergence(recorded: RequestDigest, current: RequestDigest): string | undefined {
  if (recorded.config.model !== current.config.model) return 'model'
  const index =
    firstDivergentSegment(recorded.segments, current.segments) ??
    (current.segments.length > recorded.segments.length ? recorded.segments.length : undefined)
  if (index === undefined) return undefined
  return (current.segments[index] ?? recorded.segments[index])?.[0] ?? 'the request'
}

/**
 * The failure inside a 200 answer that a recorded error names, for the replay to fail the same way:
 * - a cut stream, after as many frames as the mock's own fault said (a live provider's cut counts no
 *   frames of the mock's, so one);
 * - an error event, or an error in a JSON answer (the mock fails a request that does not stream with the
 *   API's 500, which the client also sees as a failure).
 * A client that left or stopped reading failed on its own side: its request is answered.
 */
export function faultInside(error: string | undefined): Fault | undefined {
  if (error === undefined) return undefined
  if (error.startsWith('error event in the stream') || error.startsWith('error in the answer'))
    return { kind: 'stream-error' }
  const cut = /^stream cut(?: after (\d+) frames?)?$/.exec(error)
  if (cut === null) return undefined
  return { kind: 'stream-cut', afterFrames: cut[1] === undefined ? 1 : Number(cut[1]) }
}

export class ReplaySource implements ReplayAnswers {
  private readonly capture: Capture
  private readonly sessions = new Map<string, CapturedExchange[]>()
  private readonly positions = new Map<string, number>()

  constructor(capture: Capture) {
    this.capture = capture
  }

  /** The recording's sessions. */
  get recorded(): readonly string[] {
    return this.capture.sessions
  }

  /** Match the next request of `session` against its recording; a match moves the session on. */
  next(session: string, digest: RequestDigest): ReplayStep {
    const exchanges = this.exchangesOf(session)
    if (exchanges === undefined) {
      const known = this.capture.sessions.slice(0, 5).join(', ')
      return {
        kind: 'mismatch',
        message: `session ${session} is not in the recording (it has ${this.capture.sessions.length}: ${known}${this.capture.sessions.length > 5 ? ', …' : ''})`,
      }
    }
    const position = this.positions.get(session) ?? 0
    const exchange = exchanges[position]
    if (exchange === undefined)
      return {
        kind: 'mismatch',
        message: `session ${session} has ${exchanges.length} recorded requests; this is request ${position + 1}`,
      }
    const node = divergence(exchange.digest, digest)
    if (node !== undefined)
      return {
        kind: 'mismatch',
        message: `request ${position + 1} of session ${session} (turn ${exchange.turn}.${exchange.step}) differs from the recording at ${node}`,
      }
    this.positions.set(session, position + 1)
    if (exchange.status < 200 || exchange.status >= 300) return { kind: 'failure', exchange }
    const fault = faultInside(exchange.error)
    return { kind: 'answer', exchange, answer: exchange.answer, ...(fault !== undefined ? { fault } : {}) }
  }

  private exchangesOf(session: string): CapturedExchange[] | undefined {
    const known = this.sessions.get(session)
    if (known !== undefined) return known
    if (!this.capture.sessions.includes(session)) return undefined
    const exchanges = this.capture.read(session)
    this.sessions.set(session, exchanges)
    return exchanges
  }
}
