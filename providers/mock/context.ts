// State shared by the mock handlers of one mock-provider instance: the simulators (one cache per
// vendor, like one organization's account), the virtual clock, the faults (header, queue, schedule),
// the stored Responses, deterministic ids, the validation switch, the replies a model gives, and a call
// observer.

import type { AssistantMessage } from '../../harness/types.ts'
import { type ModelEntry, simulationModel, type Vendor, vendorOf } from '../catalog.ts'
import { CacheSimulators, type SimulatorOptions } from '../sim/index.ts'
import { sharedTokenCounter } from '../sim/tokens.ts'
import { type PreviousRequest, type Simulation, SimulatorRejection } from '../sim/types.ts'
import { type BuiltInWireApi, bodyShape, isBuiltInApi, type WireApi } from '../types.ts'
import { contentHash } from '../wire/digest.ts'
import { type Placement, providerOfApi } from '../wire/exchange.ts'
import { ItemReuse } from '../wire/item-reuse.ts'
import { jsonOutputOf, lastUserText, systemText } from '../wire/wire-text.ts'
import { type Answer, renderAnswer } from './answer.ts'
import {
  declaredTools,
  outputCapOf,
  positionOf,
  reasonsOn,
  thinkingBudgetOf,
  toolChoiceOf,
} from './conversation.ts'
import { DEFAULT_FINGERPRINT_BYTES, FingerprintStore } from './diagnostics.ts'
import { checkFaultRules } from './fault-spec.ts'
import {
  describeFault,
  type Fault,
  FaultQueue,
  type FaultRule,
  FaultSchedule,
  type ScheduledChoice,
} from './faults.ts'
import { decideReply, type ReplyBook, type ReplyRequest, replySeed } from './reply.ts'
import type { HandedBody, MockAnswer, MockRequest } from './request.ts'
import { type ChainedRequest, ResponsesStore } from './responses-store.ts'
import { validateRequest } from './validation/index.ts'

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
  /**
   * Why the client got no answer although the request was simulated: a fault inside the answer (a cut
   * stream, an error event; not streamed, a 500). The prompt was processed, so the simulator cached it.
   */
  failure?: string
  /** The session the request declared (`x-cachelab-session`). */
  session?: string
  /** The loopback server's id of the HTTP exchange. */
  exchange?: string
  /** The request's headers that tell its agent and session (`MockRequest.headers`). */
  headers: Readonly<Record<string, string>>
  /** Why the API refused the request, when it did (a validation rule or an unknown reference). */
  refusal?: string
}

export interface MockContextOptions {
  simulator?: SimulatorOptions
  /** Virtual clock used when a request carries no time header (seconds). */
  clock?: () => number
  /** A fault schedule: the rules that fail chosen requests (checked; a bad rule is an input error). */
  faults?: readonly FaultRule[]
  /**
   * Skip the validation that refuses what the real API refuses (roles, tool pairing, parameters a model
   * does not take, unknown `previous_response_id`, unresolved `item_reference`): every well-formed body is
   * simulated. The simulator's own refusals (breakpoints, TTLs, system roles) still apply.
   */
  lenient?: boolean
  /** What the model answers per session, turn and step (a replies file); the default answers otherwise. */
  replies?: ReplyBook
  /**
   * Let the handlers replace the items of a body they parse with equal ones of earlier requests (default
   * true): the simulators then skip the history a session sends again. The numbers are the same either way.
   */
  reuseItems?: boolean
  /**
   * Bytes of request fingerprints kept for the providers' cache diagnostics (`DEFAULT_FINGERPRINT_BYTES`
   * when absent; serve gives a share of its memory budget): past it, the oldest can no longer be named.
   */
  fingerprintBytes?: number
}

/** Bytes of earlier requests' items a context keeps for reuse (a run's sessions, one after another). */
const REUSE_BYTES = 64 * 1024 * 1024

/** The tool-call id prefix of each API's answers. */
const CALL_PREFIX: Readonly<Record<BuiltInWireApi, string>> = {
  'openai-chat': 'call_sim',
  'deepseek-chat': 'call_sim',
  'openai-responses': 'call_sim',
  'anthropic-messages': 'toolu_sim',
  'bedrock-converse': 'tooluse_sim',
  'gemini-generate': 'gemini_call_sim',
}

export class MockContext {
  /** Faults for the next requests, in order (before the schedule's). */
  readonly faults = new FaultQueue()
  /** The fault schedule and its counts; `reset` starts it over from the options' rules. */
  schedule: FaultSchedule
  simulators: CacheSimulators
  private readonly options: MockContextOptions
  private readonly rules: readonly FaultRule[]
  /** The Responses this account stored, for `previous_response_id` and `item_reference`. */
  readonly responses = new ResponsesStore()
  /** What the providers keep of each request to answer a later one's cache diagnostics against it. */
  readonly fingerprints: FingerprintStore
  /** The simulators' model overrides, which validation reads too. */
  private models: SimulatorOptions['models']
  private serial = 0
  /** Seconds added to the clock by `advance`. */
  private offset = 0
  /** The latest time `now` gave: the clock never runs backwards. */
  private latest = Number.NEGATIVE_INFINITY
  /** How many times in a row each request with a fault header has failed, by request and header. */
  private readonly headerFailures = new Map<string, number>()
  /** The fault inside the answer chosen for a request, until the simulator has accepted the request. */
  private readonly insideAnswer = new WeakMap<MockRequest, ScheduledChoice>()
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
   * The session of a request whose `session` is unset, for the fault schedule: in process, the recorder
   * tells sessions apart as a capture does.
   */
  sessionFor: ((api: WireApi, request: MockRequest) => string | undefined) | undefined
  /**
   * The place of a request the loopback server did not place (`MockRequest.placement`): in process, the
   * recorder places requests as a capture does, so the replies number turns and steps as the capture.
   */
  placementFor: ((api: WireApi, request: MockRequest) => Placement | undefined) | undefined
  /** What the model answers per session, turn and step; replaceable between tests. */
  replies: ReplyBook | undefined
  /** Bodies the loopback server parsed, by its exchange id, for the handler to take instead of parsing again. */
  private readonly handedBodies = new Map<string, HandedBody>()
  /**
   * Earlier requests' items, for the bodies a handler parses itself (in process: the loopback server hands
   * its own over): a session's history then reaches the simulators as the objects they already linearized.
   */
  private readonly reuse = new ItemReuse()

  constructor(options: MockContextOptions = {}) {
    this.options = options
    this.rules = checkFaultRules(options.faults ?? [])
    this.schedule = new FaultSchedule(this.rules)
    this.simulators = new CacheSimulators(options.simulator)
    this.models = options.simulator?.models
    this.replies = options.replies
    this.fingerprints = new FingerprintStore(options.fingerprintBytes ?? DEFAULT_FINGERPRINT_BYTES)
  }

  /**
   * Forget every cached prefix and pending fault (a fresh account), optionally with other simulator
   * options. The fault schedule starts over from its rules; the clock keeps its time (it never runs back).
   */
  reset(simulator?: SimulatorOptions): void {
    const options = { ...this.options.simulator, ...simulator }
    this.simulators = new CacheSimulators(options)
    this.models = options.models
    this.faults.clear()
    this.schedule = new FaultSchedule(this.rules)
    this.headerFailures.clear()
    this.responses.clear()
    this.fingerprints.clear()
    this.serial = 0
    this.previous = undefined
  }

  /** Virtual time in seconds: the clock plus every `advance`, never less than a time it gave before. */
  now(): number {
    this.latest = Math.max(this.latest, (this.options.clock?.() ?? 0) + this.offset)
    return this.latest
  }

  /**
   * Move virtual time forward, so an idle gap (a TTL expiry) takes no real time. A request's
   * `x-cachelab-at` header still sets that one request's time, leaving the clock alone. Under a memory
   * budget, what the move expired goes at once (a server left idle holds none of it); a later request's
   * counterfactual still knows what its session's previous request left, so the gap is named either way.
   */
  advance(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0)
      throw new RangeError(`the clock only moves forward: cannot advance it by ${seconds} seconds`)
    this.offset += seconds
    this.simulators.advanceTo(this.now())
  }

  /** Seconds `advance` has added in all. */
  get advanced(): number {
    return this.offset
  }

  /** A deterministic id with the provider's prefix. */
  nextId(prefix: string): string {
    this.serial += 1
    return `${prefix}${String(this.serial).padStart(6, '0')}`
  }

  /**
   * Hand the handler of exchange `exchange` the body the loopback server parsed (its items possibly
   * reused from earlier requests), so the handler reads those objects rather than parsing the text again.
   * The server takes back what the handler did not take (`takeBody`) once the handler has answered.
   */
  handOver(exchange: string, handed: HandedBody): void {
    this.handedBodies.set(exchange, handed)
  }

  /**
   * Replace, in place, the items of a body a handler just parsed that equal an earlier request's with
   * those objects (content-keyed: the numbers are the same either way), within `REUSE_BYTES`.
   */
  reuseItems(body: Record<string, unknown>): void {
    if (this.options.reuseItems === false) return
    this.reuse.reuse(body)
    this.reuse.trim(REUSE_BYTES)
  }

  /** Items `reuseItems` replaced, in all (tests read it). */
  get reusedItems(): number {
    return this.reuse.reused
  }

  /** The body handed over for `exchange` and its place, once; undefined when there is none. */
  takeBody(exchange: string): HandedBody | undefined {
    const body = this.handedBodies.get(exchange)
    this.handedBodies.delete(exchange)
    return body
  }

  record(call: MockCall): void {
    this.observer?.(call)
  }

  /** Whether validation is off (`lenient`). */
  get lenient(): boolean {
    return this.options.lenient === true
  }

  /**
   * The API's refusal of a request its handler accepted as well-formed, or undefined (always, when
   * lenient). Runs before faults and simulation, as the API validates before it processes; a refusal is
   * reported with its status.
   */
  refuse(api: WireApi, request: MockRequest, headers: Headers): SimulatorRejection | undefined {
    if (this.lenient) return undefined
    const betas = (headers.get('anthropic-beta') ?? '').split(',').map((beta) => beta.trim())
    const model = typeof request.body.model === 'string' ? request.body.model : ''
    const refusal = validateRequest(api, {
      body: request.body,
      model: this.modelEntry(vendorOf(providerOfApi(api)), model),
      betas,
    })
    if (refusal !== undefined) this.recordFailure(api, request, refusal.status, refusal.message)
    return refusal
  }

  /**
   * A Responses request read against the stored responses: the chain before its input and its item
   * references resolved. An unknown id or reference is the API's refusal (reported), unless lenient.
   */
  chainResponses(request: MockRequest): ChainedRequest | SimulatorRejection {
    const chained = this.responses.chain(request.body, !this.lenient)
    if (chained instanceof SimulatorRejection)
      this.recordFailure('openai-responses', request, chained.status, chained.message)
    return chained
  }

  /** The model entry the simulators use for a model name (their overrides first, then the catalog). */
  modelEntry(vendor: Vendor, model: string): ModelEntry {
    const override = this.models?.find((entry) => entry.vendor === vendor && entry.model === model)
    return override ?? simulationModel(vendor, model)
  }

  /**
   * Choose the fault of a request the handler accepted and, if it fails the request before any output
   * (`response` gives the API's form of it, or `undefined` for a fault inside the answer), answer with
   * it: the fault is spent, the failure reported, and the request never reaches the simulator, as the
   * API refuses it before processing it. A fault inside the answer is spent only once the simulator has
   * accepted the request (`simulate`; the handler then reads it with `answerFault`), so a request the
   * simulator refuses never uses it up.
   */
  failEarly(
    api: WireApi,
    request: MockRequest,
    response: (fault: Fault) => MockAnswer | undefined,
  ): MockAnswer | undefined {
    const choice = this.chooseFault(api, request)
    if (choice === undefined) return undefined
    const early = response(choice.fault)
    if (early === undefined) {
      this.insideAnswer.set(request, choice)
      return undefined
    }
    choice.spend()
    this.recordFailure(api, request, early.status)
    return early
  }

  /**
   * The fault a simulated request fails with inside its answer (a cut stream, an error event; not
   * streamed, a 500), for the handler to shape; undefined when it has none.
   */
  answerFault(request: MockRequest): Fault | undefined {
    const choice = this.insideAnswer.get(request)
    this.insideAnswer.delete(request)
    return choice?.fault
  }

  /** Report a request answered with `status` before any simulation (a fault, or the API's refusal and why). */
  recordFailure(api: WireApi, request: MockRequest, status: number, refusal?: string): void {
    const { body, output, at } = request
    this.record({
      api,
      at,
      body,
      output,
      status,
      ...labelsOf(request),
      ...(refusal !== undefined ? { refusal } : {}),
    })
  }

  /**
   * What the model answers a request the handler accepted: the header's script, else the replies' rule
   * that matches it, else the default; reasoning where the request or the model asks for it; cut at the
   * request's output cap. The texts rules match (system prompt, latest user message) are read only when
   * there are rules.
   */
  answer(api: WireApi, request: MockRequest): Answer {
    const { body } = request
    // The capture's place of the request, where one is kept: the turn, step and kind the capture reports.
    const placement = request.placement ?? this.placementFor?.(api, request)
    // The body's readers read its shape: a compatible provider's API is OpenAI Chat's or Anthropic's.
    const shape = bodyShape(api)
    const position = positionOf(shape, body)
    const jsonOutput = jsonOutputOf(shape, body)
    const facts: ReplyRequest = {
      session: placement?.session ?? request.session ?? this.sessionFor?.(api, request),
      ...(placement !== undefined ? { conversation: placement.conversation, kind: placement.kind } : {}),
      position:
        placement === undefined ? position : { ...position, turn: placement.turn, step: placement.step },
      tools: declaredTools(shape, body),
      toolChoice: toolChoiceOf(shape, body),
      ...(jsonOutput !== undefined ? { jsonOutput } : {}),
      ...(this.replies !== undefined && request.script === undefined
        ? { systemText: systemText(shape, body), lastUserText: lastUserText(body) }
        : {}),
    }
    const reply = decideReply(facts, request.script, this.replies)
    const model = typeof body.model === 'string' ? body.model : ''
    const mode = this.modelEntry(vendorOf(providerOfApi(api)), model).reasoning ?? 'on-request'
    const budget = shape === 'anthropic-messages' ? thinkingBudgetOf(body) : undefined
    const cap = outputCapOf(shape, body)
    return renderAnswer(reply, {
      reasons: reasonsOn(shape, body, mode),
      ...(budget !== undefined ? { budget } : {}),
      ...(cap !== undefined ? { cap } : {}),
      counter: this.options.simulator?.counter ?? sharedTokenCounter,
      seed: replySeed(facts, 'reasoning'),
      callId: () =>
        this.nextId(
          isBuiltInApi(api)
            ? CALL_PREFIX[api]
            : shape === 'anthropic-messages'
              ? CALL_PREFIX[shape]
              : 'call_sim',
        ),
    })
  }

  /**
   * Simulate a request against this account's caches and report it. A request the provider refuses is
   * reported with its status and returned as the rejection, for the handler to answer in its API's form.
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
        ...(previous !== undefined ? { previous } : {}),
        ...(request.routingKey !== undefined ? { routingKey: request.routingKey } : {}),
        ...(answer?.outputTokens !== undefined ? { outputTokens: answer.outputTokens } : {}),
        ...(answer?.reasoning !== undefined && !answer.reasoning.redacted
          ? { reasoning: answer.reasoning.text }
          : {}),
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
      // A fault inside the answer happens now that the prompt is processed (and cached).
      const inside = this.insideAnswer.get(request)
      inside?.spend()
      const failure =
        inside === undefined
          ? {}
          : { status: body.stream === true ? 200 : 500, failure: describeFault(inside.fault) }
      this.record({ api, at, body, output, simulation, status: 200, ...failure, ...labels })
      return simulation
    } catch (error) {
      if (!(error instanceof SimulatorRejection)) throw error
      this.insideAnswer.delete(request)
      this.record({ api, at, body, output, status: error.status, ...labels, refusal: error.message })
      return error
    }
  }

  /**
   * The fault of a request; every request is counted on the schedule, whichever source wins. The
   * request's own header comes first: it fails `times` identical requests in a row (the first attempt
   * and the client's retries), then the next identical one is served and the count starts over. Then
   * the queue, then the schedule.
   */
  private chooseFault(api: WireApi, request: MockRequest): ScheduledChoice | undefined {
    const session = request.session ?? this.sessionFor?.(api, request)
    const scheduled = this.schedule.next({ provider: providerOfApi(api), session })
    const header = request.fault
    if (header !== undefined) {
      const key = contentHash(JSON.stringify([api, session ?? null, header.text, request.body]))
      const failed = this.headerFailures.get(key) ?? 0
      if (failed < header.times)
        return { fault: header.fault, spend: () => this.headerFailures.set(key, failed + 1) }
      this.headerFailures.delete(key)
    }
    const queued = this.faults.peek()
    if (queued !== undefined) return { fault: queued, spend: () => this.faults.take() }
    return scheduled
  }
}

/** The labels a report of a request carries: its declared session, exchange id and wire headers. */
function labelsOf(request: MockRequest): Pick<MockCall, 'session' | 'exchange' | 'headers'> {
  return {
    ...(request.session !== undefined ? { session: request.session } : {}),
    ...(request.exchange !== undefined ? { exchange: request.exchange } : {}),
    headers: request.headers,
  }
}
