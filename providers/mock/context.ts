// State shared by the mock handlers of one mock-provider instance: the simulators (one cache per
// vendor, like one organization's account), the stored Responses, the fault queue, deterministic ids,
// the validation switch, and a call observer.

import type { AssistantMessage } from '../../harness/types.ts'
import { providerOfApi } from '../capture/tracker.ts'
import { type ModelEntry, simulationModel, type Vendor, vendorOf } from '../catalog.ts'
import { CacheSimulators, type SimulatorOptions } from '../sim/index.ts'
import { type PreviousRequest, type Simulation, SimulatorRejection } from '../sim/types.ts'
import type { WireApi } from '../types.ts'
import { type Fault, FaultQueue } from './faults.ts'
import type { MockRequest } from './request.ts'
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
  /** The session the request declared (`x-cachelab-session`). */
  session?: string
  /** The loopback server's id of the HTTP exchange. */
  exchange?: string
}

export interface MockContextOptions {
  simulator?: SimulatorOptions
  /** Virtual clock used when a request carries no time header (seconds). */
  clock?: () => number
  /**
   * Skip the validation that refuses what the real API refuses (roles, tool pairing, parameters a model
   * does not take, unknown `previous_response_id`, unresolved `item_reference`): every well-formed body is
   * simulated. The simulator's own refusals (breakpoints, TTLs, system roles) still apply.
   */
  lenient?: boolean
}

export class MockContext {
  readonly faults = new FaultQueue()
  /** The Responses this account stored, for `previous_response_id` and `item_reference`. */
  readonly responses = new ResponsesStore()
  simulators: CacheSimulators
  private readonly options: MockContextOptions
  /** The simulators' model overrides, which validation reads too. */
  private models: SimulatorOptions['models']
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

  constructor(options: MockContextOptions = {}) {
    this.options = options
    this.simulators = new CacheSimulators(options.simulator)
    this.models = options.simulator?.models
  }

  /** Forget every cached prefix and pending fault (a fresh account), optionally with other simulator options. */
  reset(simulator?: SimulatorOptions): void {
    const options = { ...this.options.simulator, ...simulator }
    this.simulators = new CacheSimulators(options)
    this.models = options.models
    this.faults.clear()
    this.responses.clear()
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
    if (refusal !== undefined) this.recordFailure(api, request, refusal.status)
    return refusal
  }

  /**
   * A Responses request read against the stored responses: the chain before its input and its item
   * references resolved. An unknown id or reference is the API's refusal (reported), unless lenient.
   */
  chainResponses(request: MockRequest): ChainedRequest | SimulatorRejection {
    const chained = this.responses.chain(request.body, !this.lenient)
    if (chained instanceof SimulatorRejection) this.recordFailure('openai-responses', request, chained.status)
    return chained
  }

  /** The model entry the simulators use for a model name (their overrides first, then the catalog). */
  private modelEntry(vendor: Vendor, model: string): ModelEntry {
    const override = this.models?.find((entry) => entry.vendor === vendor && entry.model === model)
    return override ?? simulationModel(vendor, model)
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
   * Simulate a request against this account's caches and report it. A request the provider refuses is
   * reported with its status and returned as the rejection, for the handler to answer in its API's form.
   */
  simulate(api: WireApi, request: MockRequest): Simulation | SimulatorRejection {
    const { body, output, at } = request
    const labels = labelsOf(request)
    try {
      const previous = this.previous ?? this.previousFor?.(api, request)
      const simulation = this.simulators.simulate(api, {
        body,
        at,
        output,
        ...(previous !== undefined ? { previous } : {}),
      })
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
