// Running scenarios: each (scenario, variant, provider) is one session driven through the loop, the
// adapter and the official SDK, against the mock providers (simulated) or the real API (live). Produces
// report rows and writes each session's event log.

import { join } from 'node:path'
import { VirtualClock } from '../harness/clock.ts'
import { CachelabError } from '../harness/errors.ts'
import { AgentLoop } from '../harness/loop.ts'
import { DEFAULT_POLICIES, type Policies } from '../harness/policies.ts'
import type { LoopEnvironment, LoopSetup, RequestRecord, World } from '../harness/ports.ts'
import { hashString, seededRandom } from '../harness/random.ts'
import { DEFAULT_PACE, resolveText, type ScriptAction } from '../harness/script.ts'
import { JsonlSessionWriter } from '../harness/store.ts'
import type { ProviderId, SessionEvent } from '../harness/types.ts'
import { withCacheRules } from '../providers/catalog.ts'
import { diagnosable } from '../providers/diagnostics.ts'
import {
  adapterDefaults,
  adapterPort,
  createAdapter,
  type Endpoint,
  liveEndpoint,
  type MockProviders,
  type ModelEntry,
  resolveModel,
  simulatedEndpoint,
} from '../providers/index.ts'
import type { MockCall } from '../providers/mock/context.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { type PreviousRequest, type SimCounts, SimulatorRejection } from '../providers/sim/types.ts'
import type { BuildOptions } from '../providers/types.ts'
import { digestRequest, type RequestDigest } from '../providers/wire/digest.ts'
import { type Observation, SessionRowBuilder } from '../reports/session-row-builder.ts'
import type { StepRow } from '../reports/types.ts'
import { chooseModel, type NotApplicable, variantUnmet } from './requirements.ts'
import type { Scenario, Variant } from './types.ts'

/** One session of a run. */
export interface SessionPlan {
  scenario: Scenario
  variant: Variant
  provider: ProviderId
  /** The model to run on (planMatrix sets the scenario's choice); `SessionOptions.model` otherwise. */
  model?: string
}

export interface SessionOptions {
  runId: string
  /** Model when the plan names none; the catalog default of each provider otherwise. */
  model?: string
  stream: boolean
  /** Simulated: the mock providers to run against. Live: undefined. */
  mock?: MockProviders
  /** Live: environment with keys and base URLs. */
  env?: Readonly<Record<string, string | undefined>>
  /** Directory for `<scenario>.<variant>.<provider>.jsonl`; no logs are written without it. */
  sessionsDir?: string
  /** Live: the predictor to feed, shared across a run's sessions like the provider's own cache. */
  predictor?: CacheSimulators
  /** The clock to run on; a shared predictor needs one shared clock so time never runs backwards. */
  clock?: VirtualClock
  /** Keep each request's capture digest (for comparing this loop with another, request by request). */
  digests?: boolean
  /**
   * Ask the provider for its own cache diagnostics on every request after the first, where its API and
   * model offer them (providers/diagnostics.ts `diagnosable`): the rows carry its reason beside
   * cachelab's cause. Default: on in a live run, off on the simulator.
   */
  diagnostics?: boolean
  /**
   * Called with each row as its request finishes, and the request it was made from: for progress output
   * while a long session runs, and for the matrix benchmark's replay of the same bodies.
   */
  onRow?: (row: StepRow, record: RequestRecord) => void
}

/** The session id of a plan, also its log file's base name. */
export function sessionIdOf(plan: SessionPlan): string {
  return `${plan.scenario.name}.${plan.variant.name}.${plan.provider}`
}

/** Request-building defaults per provider: OpenAI routes by a per-session cache key; Anthropic caches automatically. */
export function defaultBuild(provider: ProviderId, sessionId: string, stream: boolean): BuildOptions {
  switch (provider) {
    case 'openai-chat':
    case 'openai-responses':
      return { stream, promptCacheKey: sessionId }
    case 'anthropic':
      return { stream, breakpoints: 'automatic', anthropicTtl: '5m' }
    case 'deepseek':
    case 'gemini':
      return { stream }
    case 'bedrock':
      return { stream, breakpoints: 'automatic', anthropicTtl: '5m' }
    default:
      // A compatible provider: the adapter puts the key where the provider reads it, or drops it.
      return { stream, promptCacheKey: sessionId }
  }
}

/** The result of one session. */
export interface SessionResult {
  rows: StepRow[]
  /** Per row, the simulator's counts (in a live run, its prediction of what the provider would report). */
  predicted: Array<SimCounts | undefined>
  events: readonly SessionEvent[]
  entry: ModelEntry
  /** Per row, the digest of its request (undefined for a failed one), when `digests` was asked for. */
  digests?: Array<RequestDigest | undefined>
}

/** Run one session to the end of its script. */
export async function runSession(plan: SessionPlan, options: SessionOptions): Promise<SessionResult> {
  const { scenario, variant, provider } = plan
  const sessionId = sessionIdOf(plan)
  const entry = resolveModel(provider, plan.model ?? options.model)
  const unmet = variantUnmet(variant, entry)
  if (unmet !== undefined)
    throw new CachelabError('usage', `${sessionId} is not applicable on ${entry.model}: it ${unmet}`)
  const policies: Policies = { ...DEFAULT_POLICIES, ...variant.policies }
  const setup: LoopSetup = {
    policies,
    route: policies.route ?? entry.route,
    adapterDefaults: adapterDefaults(provider),
    toolUpdate: policies.toolUpdates ?? entry.toolUpdate,
    pace: { ...DEFAULT_PACE, ...scenario.pace },
    maxRetries: 2,
  }
  const endpoint = endpointFor(provider, options)
  const adapter = createAdapter(provider, endpoint)
  const build: BuildOptions = { ...defaultBuild(provider, sessionId, options.stream), ...variant.build }
  const mode = options.mock === undefined ? 'live' : 'simulated'
  const diagnostics = (options.diagnostics ?? mode === 'live') && diagnosable(adapter.api, entry)
  const port = adapterPort({
    adapter,
    build,
    mode,
    secrets: mode === 'live' ? [endpoint.apiKey] : [],
    diagnostics,
  })
  const clock = options.clock ?? new VirtualClock()
  const rows: StepRow[] = []
  const predicted: Array<SimCounts | undefined> = []
  const digests: Array<RequestDigest | undefined> = []
  let loop: AgentLoop | undefined
  const builder = new SessionRowBuilder({
    runId: options.runId,
    scenario: scenario.name,
    variant: variant.name,
    provider,
    model: entry.model,
    prices: entry.prices,
    predicted: mode === 'live',
    get log() {
      return loop?.session.log ?? []
    },
  })
  const observe = observerFor(
    options.mock,
    adapter.api,
    variant.rules === undefined ? undefined : [withCacheRules(entry, variant.rules)],
    options.predictor,
    () => builder.previousRequest(),
  )
  const file = options.sessionsDir === undefined ? undefined : join(options.sessionsDir, `${sessionId}.jsonl`)
  let writer = file === undefined ? undefined : JsonlSessionWriter.create(file)
  const env: LoopEnvironment = {
    sessionId,
    clock,
    random: seededRandom(hashString(sessionId)),
    llm: {
      // The simulation of each request is told the session's previous request, for its counterfactual.
      send: (call) => {
        if (options.mock !== undefined) options.mock.context.previous = builder.previousRequest()
        return port.send(call)
      },
    },
    sink: (event) => writer?.append(event),
    onRequest: (record) => {
      const observation = observe(record)
      const row = builder.add(record, observation)
      rows.push(row)
      options.onRow?.(row, record)
      predicted.push(observation?.counts)
      if (options.digests === true)
        digests.push(
          observation === undefined || !record.outcome.ok
            ? undefined
            : digestRequest(record.outcome.wire.body, observation.prompt),
        )
    },
  }
  const simulatorModels = variant.rules === undefined ? undefined : [withCacheRules(entry, variant.rules)]
  options.mock?.context.reset(simulatorModels === undefined ? {} : { models: simulatorModels })
  loop = AgentLoop.start(env, setup)
  const world: World = {
    system: resolveText(scenario.system, `${scenario.name}:system`),
    tools: scenario.tools,
    config: {
      provider,
      model: entry.model,
      ...(scenario.maxTokens !== undefined ? { maxTokens: scenario.maxTokens } : {}),
    },
    prefixSource: resolveText(scenario.prefixSource ?? '', `${scenario.name}:prefix`),
  }
  try {
    for (const action of variant.script ?? scenario.script) {
      if (variant.skip?.includes(action.kind)) continue
      loop = await perform(action, loop, world, {
        env,
        setup,
        clock,
        options,
        file,
        scenario,
        writer: () => writer,
        setWriter: (next) => (writer = next),
      })
    }
  } finally {
    writer?.close()
  }
  return {
    rows,
    predicted,
    events: loop.session.log,
    entry,
    ...(options.digests === true ? { digests } : {}),
  }
}

interface PerformContext {
  env: LoopEnvironment
  setup: LoopSetup
  clock: VirtualClock
  options: SessionOptions
  file: string | undefined
  scenario: Scenario
  writer(): JsonlSessionWriter | undefined
  setWriter(writer: JsonlSessionWriter | undefined): void
}

async function perform(
  action: ScriptAction,
  loop: AgentLoop,
  world: World,
  context: PerformContext,
): Promise<AgentLoop> {
  const seed = `${context.scenario.name}:${action.kind}:${loop.session.nextSeq}`
  switch (action.kind) {
    case 'turn':
      await loop.turn(action, world)
      context.clock.advance(context.setup.pace.turnGapSeconds)
      return loop
    case 'idle':
      context.clock.advance(action.seconds)
      return loop
    case 'set-system':
      world.system = resolveText(action.text, seed)
      return loop
    case 'set-tools':
      world.tools = action.tools
      return loop
    case 'set-config':
      world.config = { ...world.config, ...action.config }
      return loop
    case 'set-prefix-source':
      world.prefixSource = resolveText(action.text, seed)
      return loop
    case 'inject':
      loop.inject(resolveText(action.text, seed), action.plugin)
      return loop
    case 'compact':
      await loop.compact(action.retainNodes, action.summaryTokens, world)
      return loop
    case 'prune':
      loop.prune(action)
      return loop
    case 'pressure-prune': {
      const { kind: _kind, ...pressure } = action
      world.pressurePrune = pressure
      return loop
    }
    case 'start-series':
      loop.startSeries()
      return loop
    case 'fault':
      context.options.mock?.context.faults.push(action.fault)
      return loop
    case 'restart': {
      // A new process: the log is read back from disk when there is one, and a new loop instance resumes it.
      let events: readonly SessionEvent[] = loop.session.log
      if (context.file !== undefined) {
        context.writer()?.close()
        const resumed = JsonlSessionWriter.resume(context.file)
        context.setWriter(resumed.writer)
        events = resumed.log.events
      }
      return AgentLoop.resume(context.env, context.setup, [...events])
    }
  }
}

function endpointFor(provider: ProviderId, options: SessionOptions): Endpoint {
  if (options.mock !== undefined) return simulatedEndpoint(provider)
  const found = liveEndpoint(provider, options.env ?? process.env)
  if ('missing' in found) throw new CachelabError('usage', `--live needs ${found.missing} for ${provider}`)
  return found.endpoint
}

/**
 * How a run sees each request through the simulator: the mock provider's own simulation when simulated,
 * a predictor fed the same requests when live.
 */
function observerFor(
  mock: MockProviders | undefined,
  api: ReturnType<typeof createAdapter>['api'],
  models: ModelEntry[] | undefined,
  shared: CacheSimulators | undefined,
  previous: () => PreviousRequest | undefined,
) {
  if (mock !== undefined) {
    let last: MockCall | undefined
    mock.context.observer = (call) => {
      last = call
    }
    return (record: RequestRecord): Observation | undefined => {
      const call = last
      last = undefined
      if (call?.simulation === undefined || !record.outcome.ok) return undefined
      return { prompt: call.simulation.prompt, trace: call.simulation.trace, counts: call.simulation.counts }
    }
  }
  const predictor = shared ?? new CacheSimulators(models === undefined ? {} : { models })
  return (record: RequestRecord): Observation | undefined => {
    if (!record.outcome.ok) return undefined
    try {
      const before = previous()
      const simulation = predictor.simulate(api, {
        body: record.outcome.wire.body,
        at: record.call.at,
        output: record.outcome.message,
        ...(before !== undefined ? { previous: before } : {}),
      })
      return { prompt: simulation.prompt, trace: simulation.trace, counts: simulation.counts }
    } catch (error) {
      // The provider accepted a request the simulator would refuse: no prediction for it.
      if (error instanceof SimulatorRejection) return undefined
      throw error
    }
  }
}

/** The sessions of a matrix and the variants that cannot run on their scenario's model. */
export interface MatrixPlan {
  /** Every session to run, in order: scenarios × variants (filtered) × providers. */
  plans: SessionPlan[]
  /** Variants left out because the model their scenario runs on cannot serve them, in the same order. */
  notApplicable: NotApplicable[]
}

/**
 * Plan a matrix: per (scenario, provider) one model for all of the scenario's variants (see
 * `chooseModel`); the chosen variants it can serve become sessions, the others not-applicable entries.
 */
export function planMatrix(
  scenarios: readonly Scenario[],
  providers: readonly ProviderId[],
  options: { variants?: readonly string[]; model?: string } = {},
): MatrixPlan {
  const plans: SessionPlan[] = []
  const notApplicable: NotApplicable[] = []
  for (const scenario of scenarios) {
    const choices = providers
      .filter((provider) => scenario.providers === undefined || scenario.providers.includes(provider))
      .map((provider) => ({ provider, choice: chooseModel(scenario, provider, options.model) }))
    const chosen =
      options.variants === undefined
        ? scenario.variants
        : scenario.variants.filter((variant) => options.variants?.includes(variant.name))
    for (const variant of chosen) {
      for (const { provider, choice } of choices) {
        const model = choice.entry.model
        const skipped = choice.notApplicable.find((entry) => entry.variant === variant)
        if (skipped === undefined) plans.push({ scenario, variant, provider, model })
        else
          notApplicable.push({
            scenario: scenario.name,
            variant: variant.name,
            provider,
            model,
            reason: skipped.reason,
          })
      }
    }
  }
  return { plans, notApplicable }
}
