// State shared by the mock handlers of one mock-provider instance: the simulators (one cache per
// vendor, like one organization's account), the fault queue, deterministic ids, the replies a model
// gives, and a call observer.

import type { AssistantMessage } from '../../harness/types.ts'
import { providerOfApi } from '../capture/tracker.ts'
import { simulationModel, vendorOf } from '../catalog.ts'
import { CacheSimulators, type SimulatorOptions } from '../sim/index.ts'
import { sharedTokenCounter } from '../sim/tokens.ts'
import { type PreviousRequest, type Simulation, SimulatorRejection } from '../sim/types.ts'
import type { WireApi } from '../types.ts'
import { type Answer, renderAnswer } from './answer.ts'
import {
  declaredTools,
  outputCapOf,
  positionOf,
  reasonsOn,
  thinkingBudgetOf,
  toolChoiceOf,
} from './conversation.ts'
import { type Fault, FaultQueue } from './faults.ts'
import { decideReply, type ReplyBook, type ReplyProblem, replySeed } from './reply.ts'
import type { MockRequest } from './request.ts'

/** Unix time of virtual time 0 (2026-01-01T00:00:00Z); keeps `created` fields deterministic. */
export const EPOCH_SECONDS = 1_767_225_600

/** What a handler reports about each request it served. */
export interface MockCall {
  api: WireApi
  /** Virtual time of the request, seconds. */
  at: number
  body: Record<string, unknown>
  output: AssistantMessage
  /** Absent when the request failed before simulation (a fault or a rejection). */
  simulation?: Simulation
  status: number
  /** The session the request declared (`x-cachelab-session`). */
  session?: string
  /** The loopback server's id of the HTTP exchange. */
  exchange?: string
}

export interface MockContextOptions {
  simulator?: SimulatorOptions
  /** Virtual clock used when a request carries no time header (seconds). */
  clock?: () => number
  /** What the model answers per session, turn and step (a replies file); the default answers otherwise. */
  replies?: ReplyBook
}

/** The tool-call id prefix of each API's answers. */
const CALL_PREFIX: Readonly<Record<WireApi, string>> = {
  'openai-chat': 'call_sim',
  'deepseek-chat': 'call_sim',
  'openai-responses': 'call_sim',
  'anthropic-messages': 'toolu_sim',
}

export class MockContext {
  readonly faults = new FaultQueue()
  simulators: CacheSimulators
  private readonly options: MockContextOptions
  private serial = 0
  /** Called for every request served; the loopback server logs through it. */
  observer: ((call: MockCall) => void) | undefined
  /**
   * The previous request of the session the next request belongs to, set by whoever drives the session
   * (the scenario runner): the simulation of the next request then computes its counterfactual against it.
   */
  previous: PreviousRequest | undefined
  /**
   * For a request `previous` does not cover (a capture, where the server tells sessions apart itself):
   * the previous request of the session the request belongs to.
   */
  previousFor: ((api: WireApi, request: MockRequest) => PreviousRequest | undefined) | undefined
  /**
   * The session of a request, for its replies, where the server tells sessions apart itself (an
   * in-process capture); otherwise the session the request declares (which the loopback server sets).
   */
  sessionOf: ((api: WireApi, request: MockRequest) => string | undefined) | undefined
  /** What the model answers per session, turn and step; replaceable between tests. */
  replies: ReplyBook | undefined

  constructor(options: MockContextOptions = {}) {
    this.options = options
    this.simulators = new CacheSimulators(options.simulator)
    this.replies = options.replies
  }

  /** Forget every cached prefix and pending fault (a fresh account), optionally with other simulator options. */
  reset(simulator?: SimulatorOptions): void {
    this.simulators = new CacheSimulators({ ...this.options.simulator, ...simulator })
    this.faults.clear()
    this.serial = 0
    this.previous = undefined
  }

  now(): number {
    return this.options.clock?.() ?? 0
  }

  /** A deterministic id with the provider's prefix. */
  nextId(prefix: string): string {
    this.serial += 1
    return `${prefix}${String(this.serial).padStart(6, '0')}`
  }

  record(call: MockCall): void {
    this.observer?.(call)
  }

  /**
   * What the model answers a request the handler accepted: the header's script, else the replies' rule
   * for its session, turn and step, else the default; reasoning where the request or the model asks for
   * it; cut at the request's output cap. A rule the request cannot satisfy is a problem to answer with.
   */
  answer(api: WireApi, request: MockRequest): Answer | ReplyProblem {
    const { body } = request
    const facts = {
      session: this.sessionOf?.(api, request) ?? request.session,
      position: positionOf(api, body),
      tools: declaredTools(api, body),
      toolChoice: toolChoiceOf(api, body),
    }
    const reply = decideReply(facts, request.script, this.replies)
    if ('problem' in reply) return reply
    const model = typeof body.model === 'string' ? body.model : ''
    const mode = simulationModel(vendorOf(providerOfApi(api)), model).reasoning ?? 'on-request'
    const budget = api === 'anthropic-messages' ? thinkingBudgetOf(body) : undefined
    const cap = outputCapOf(api, body)
    return renderAnswer(reply, {
      reasons: reasonsOn(api, body, mode),
      ...(budget !== undefined ? { budget } : {}),
      ...(cap !== undefined ? { cap } : {}),
      counter: this.options.simulator?.counter ?? sharedTokenCounter,
      seed: replySeed(facts, 'reasoning'),
      callId: () => this.nextId(CALL_PREFIX[api]),
    })
  }

  /**
   * Answer a request the handler accepted with the next queued fault, if that fault fails a request
   * before any output (`response` gives the API's form of it, or `undefined` for a fault inside a
   * stream): the fault is taken, the failure reported, and the request never reaches the simulator,
   * as the API refuses it before processing it. A fault inside a stream stays queued: the handler takes
   * it once the simulator has accepted the request, so a rejected request never uses it up.
   */
  failEarly(
    api: WireApi,
    request: MockRequest,
    response: (fault: Fault) => Response | undefined,
  ): Response | undefined {
    const next = this.faults.peek()
    const early = next === undefined ? undefined : response(next)
    if (early === undefined) return undefined
    this.faults.take()
    this.recordFailure(api, request, early.status)
    return early
  }

  /** Report a request answered with `status` before any simulation (a fault). */
  recordFailure(api: WireApi, request: MockRequest, status: number): void {
    const { body, output, at } = request
    this.record({ api, at, body, output, status, ...labelsOf(request) })
  }

  /**
   * Simulate a request against this account's caches and report it, with the answer the model gives (its
   * reasoning and output tokens). A request the provider refuses is reported with its status and
   * returned as the rejection, for the handler to answer in its API's form.
   */
  simulate(api: WireApi, request: MockRequest, answer?: Answer): Simulation | SimulatorRejection {
    const { body, at } = request
    const output = answer?.message ?? request.output
    const labels = labelsOf(request)
    try {
      const previous = this.previous ?? this.previousFor?.(api, request)
      const simulated = this.simulators.simulate(api, {
        body,
        at,
        output,
        ...(answer?.outputTokens !== undefined ? { outputTokens: answer.outputTokens } : {}),
        ...(answer?.reasoning !== undefined && !answer.reasoning.redacted
          ? { reasoning: answer.reasoning.text }
          : {}),
        ...(previous !== undefined ? { previous } : {}),
      })
      // The usage of every API reports the part of the output spent reasoning.
      const simulation =
        answer?.reasoning === undefined
          ? simulated
          : {
              ...simulated,
              counts: {
                ...simulated.counts,
                reasoning: Math.min(answer.reasoning.tokens, simulated.counts.output),
              },
            }
      this.record({ api, at, body, output, simulation, status: 200, ...labels })
      return simulation
    } catch (error) {
      if (!(error instanceof SimulatorRejection)) throw error
      this.record({ api, at, body, output, status: error.status, ...labels })
      return error
    }
  }
}

/** The labels a report of a request carries: its declared session and exchange id. */
function labelsOf(request: MockRequest): Pick<MockCall, 'session' | 'exchange'> {
  return {
    ...(request.session !== undefined ? { session: request.session } : {}),
    ...(request.exchange !== undefined ? { exchange: request.exchange } : {}),
  }
}
