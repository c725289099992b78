// The external-loop port: requests an external agent loop (DSH's published loop) sent, with the mock
// provider's view of each, become step rows through the one row core. The break is found on the wire
// (the capture digests, as for captured traffic) and named by the loop's own session log: each wire
// message knows the event that produced it, and a header, a replacement or a resume written since the
// previous request explains a break there.

import type { LoopName } from '../harness/loops/types.ts'
import type { HeaderReason, Route, Usage } from '../harness/types.ts'
import type { Prices } from '../providers/catalog.ts'
import type { PreviousRequest } from '../providers/sim/types.ts'
import { bodyModel } from '../providers/types.ts'
import { digestRequest, type RequestDigest } from '../providers/wire/digest.ts'
import type { Attribution } from './attribution.ts'
import { type RowLabels, stepRow } from './rows.ts'
import type { Observation } from './session-row-builder.ts'
import type { BreakCause, SeriesLabels, StepRow } from './types.ts'
import { wireBreak, withProviderSide } from './wire-attribution.ts'

/** The part of an external loop's log event attribution reads. */
export interface LoopEvent {
  type: string
  seq: number
  data: unknown
  surfaceOp?: unknown
}

/** What an external loop knows about one of its requests. */
export interface LoopRequest {
  /** A loop step, or a compaction's summarizer call (which does not continue the conversation). */
  purpose: 'step' | 'summary'
  turn: number
  step: number
  attempt: number
  /** Virtual time, seconds. */
  at: number
  headerReason: HeaderReason | undefined
  /** Loop log length when the request left. */
  logLength: number
  /** Per wire message, the seq of the loop event that produced it. */
  sources: readonly number[]
}

/** One request with the provider's answer. */
export interface LoopExchange {
  request: LoopRequest
  body: Record<string, unknown>
  /** The provider's usage, normalized; undefined for a failed request. */
  usage: Usage | undefined
  /** The simulator's view; undefined for a request it did not simulate. */
  observation: Observation | undefined
  latencyMs: number
}

/** Labels and lookups of one external-loop session. */
export interface LoopRowContext extends SeriesLabels {
  prices: Prices
  route: Route
  loop: LoopName
  /** The loop's log as it grows. */
  events(): readonly LoopEvent[]
}

/** A row, the digest of its request (for the side-by-side with another loop), and its break's event. */
export interface LoopRow {
  row: StepRow
  digest: RequestDigest | undefined
  /** The type of the loop event the break is attributed to. */
  breakEventType: string | undefined
}

interface Previous {
  digest: RequestDigest
  observation: Observation
  logLength: number
  /** The model the request's body named. */
  model: string | undefined
}

/** Events that rewrite what earlier requests sent: a header, a surface replacement, a compaction. */
function rewrites(event: LoopEvent): boolean {
  if (event.type === 'request/header' || event.type.startsWith('compaction/')) return true
  return typeof event.surfaceOp === 'object' && event.surfaceOp !== null
}

/**
 * The cause of a break once the loop's log names its event: a surface replacement of a tool result (after
 * its `compaction/prune` pricing event) is a prune, a replacement by a user message or a compaction
 * summary is summary compaction; otherwise the cause read off the wire stands.
 */
export function loopCause(event: LoopEvent | undefined, wireCause: BreakCause): BreakCause {
  if (event === undefined) return wireCause
  if (event.type === 'compaction/prune') return 'tool-result-prune'
  if (event.type === 'compaction/summary' || event.type === 'compaction/start') return 'compaction-summary'
  if (typeof event.surfaceOp !== 'object' || event.surfaceOp === null) return wireCause
  if (event.type === 'tool/result') return 'tool-result-prune'
  if (event.type === 'user/message') return 'compaction-summary'
  return wireCause
}

/** The latest event of a type written before `end`. */
function latestBefore(events: readonly LoopEvent[], type: string, end: number): LoopEvent | undefined {
  for (let seq = Math.min(end, events.length) - 1; seq >= 0; seq -= 1) {
    const event = events[seq]
    if (event?.type === type) return event
  }
  return undefined
}

/**
 * The loop event behind a wire break: the event that produced the message at the divergent node when it
 * is new since the previous request, else the latest rewriting event written since then (a header change
 * or resume, a replacement), else the node's own event.
 */
export function breakEvent(
  node: string | undefined,
  current: LoopRequest,
  previousLogLength: number,
  events: readonly LoopEvent[],
): LoopEvent | undefined {
  const match = node === undefined ? null : /^messages\[(\d+)\]/.exec(node)
  const source = match === null ? undefined : current.sources[Number(match[1])]
  if (source !== undefined && source >= previousLogLength) return events[source]
  for (let seq = current.logLength - 1; seq >= previousLogLength; seq -= 1) {
    const event = events[seq]
    if (event !== undefined && rewrites(event)) return event
  }
  return source === undefined ? undefined : events[source]
}

/** Rows of one external-loop session, request by request; holds only the previous successful request. */
export class LoopRowBuilder {
  private readonly context: LoopRowContext
  private previous: Previous | undefined

  constructor(context: LoopRowContext) {
    this.context = context
  }

  add(exchange: LoopExchange): LoopRow {
    const { request, observation, usage } = exchange
    const labels: RowLabels & { loop: LoopName } = {
      runId: this.context.runId,
      scenario: this.context.scenario,
      variant: this.context.variant,
      provider: this.context.provider,
      model: this.context.model,
      route: this.context.route,
      turn: request.turn,
      step: request.step,
      attempt: request.attempt,
      headerReason: request.headerReason,
      startsSeries: false,
      virtualTimeS: request.at,
      latencyMs: exchange.latencyMs,
      loop: this.context.loop,
    }
    if (usage === undefined || observation === undefined)
      return {
        row: stepRow({ labels, conversation: { loop: labels.loop } }),
        digest: undefined,
        breakEventType: undefined,
      }
    const digest = digestRequest(exchange.body, observation.prompt)
    const previous = this.previous
    let attribution: Attribution | undefined
    let breakEventType: string | undefined
    if (previous !== undefined) {
      const found = wireBreak(previous.digest, digest, false, {
        previous: previous.observation.prompt,
        current: observation.prompt,
      })
      if (found !== undefined) {
        const events = this.context.events()
        // A summarizer call diverges from the conversation because of the compaction that sent it.
        const event =
          request.purpose === 'summary'
            ? latestBefore(events, 'compaction/start', request.logLength)
            : breakEvent(found.node, request, previous.logLength, events)
        const cause = request.purpose === 'summary' ? 'compaction-summary' : loopCause(event, found.cause)
        attribution = { ...found, cause, ...(event !== undefined ? { eventSeq: event.seq } : {}) }
        breakEventType = event?.type
      }
    }
    // The next step continues the conversation, not the summarizer call.
    if (request.purpose === 'step')
      this.previous = { digest, observation, logLength: request.logLength, model: bodyModel(exchange.body) }
    const row = stepRow({
      labels,
      conversation: { loop: labels.loop },
      measured: {
        usage,
        cold: previous === undefined,
        counterfactual: withProviderSide(
          attribution,
          previous === undefined ? undefined : observation.trace.counterfactual,
          observation.counts.read,
        ),
        attribution,
        prices: this.context.prices,
      },
    })
    return { row, digest, breakEventType }
  }

  /** The previous request of the session, for the next simulation's counterfactual. */
  previousRequest(): PreviousRequest | undefined {
    const previous = this.previous
    if (previous === undefined) return undefined
    const { machine, carry } = previous.observation.trace
    return {
      prompt: previous.observation.prompt,
      ...(machine !== undefined ? { machine } : {}),
      ...(previous.model !== undefined ? { model: previous.model } : {}),
      carry,
    }
  }
}
