// One scenario session on a client-library loop: the script's turns go to the library's loop, every
// request it sends reaches the simulated providers through a loopback `serve` (configured with the base
// URL docs/serve.md's client table gives, so a library behaves as it does behind serve or any gateway), and
// each becomes a step row through the external-loop port. The runner owns the scripted answers, the tool
// results and the virtual clock; what a library loop cannot express is listed, never faked.

import { VirtualClock } from '../harness/clock.ts'
import { CachelabError } from '../harness/errors.ts'
import type {
  LibraryLoop,
  LibraryToolCall,
  LibraryToolResult,
  ReportedUsage,
} from '../harness/loops/libraries/types.ts'
import type { Inexpressible } from '../harness/loops/types.ts'
import { DEFAULT_PACE, resolveText, type ScriptAction, type StepScript } from '../harness/script.ts'
import type { AssistantMessage, Usage } from '../harness/types.ts'
import { isBuiltInVendor, vendorOf, withCacheRules } from '../providers/catalog.ts'
import { type ModelEntry, modeledLatencyMs, resolveModel } from '../providers/index.ts'
import type { MockCall } from '../providers/mock/context.ts'
import type { LoopbackServer } from '../providers/mock/loopback.ts'
import { encodeScript, SCRIPT_HEADER, SESSION_HEADER, TIME_HEADER } from '../providers/mock/script.ts'
import { wireUsage } from '../providers/mock/usage.ts'
import type { SimCounts } from '../providers/sim/types.ts'
import type { RequestDigest } from '../providers/wire/digest.ts'
import { type LoopEvent, LoopRowBuilder } from '../reports/loop-rows.ts'
import type { StepRow } from '../reports/types.ts'
import type { SessionPlan } from './run.ts'
import { sessionIdOf } from './run.ts'

/** The key every library loop sends; the loopback server takes any. */
export const LIBRARY_API_KEY = 'cachelab-library-loop'

/** Why a scenario action has no counterpart in a minimal library loop. */
export const LIBRARY_INEXPRESSIBLE: Readonly<
  Partial<Record<ScriptAction['kind'] | 'cancel' | 'arrival' | 'image', string>>
> = {
  'set-prefix-source': 'a session prefix is a DSH design; the library loops have none',
  'set-config': 'a call-configuration change is not wired into the library loops',
  'start-series': 'an explicit request series is a DSH design; the library loops have none',
  inject: 'plugin injection is a DSH design; a library loop takes input only as user turns',
  compact: 'the libraries have no compaction of their own; an application built on them would add it',
  prune: 'the libraries have no tool-result pruning of their own; an application built on them would add it',
  'pressure-prune':
    'the libraries have no pressure compaction of their own; an application built on them would add it',
  restart: 'the minimal library loops keep their history in memory; a restart is the application’s',
  cancel: 'a cancelled step needs an abort mid-stream, which the minimal library loops do not drive',
  arrival:
    'input arriving mid-turn needs a queue of the loop’s own; the minimal library loops take input between turns',
  image: 'image input is not wired into the library loops',
}

/** One request a library loop sent, with what the wire says and what the library said. */
export interface LibraryRequestView {
  /** What the simulator served (undefined for a request refused or failed before simulation). */
  wire: Usage | undefined
  /** What the library reported to its caller for the request. */
  reported: ReportedUsage | undefined
  /** The API's refusal, when it refused the request. */
  refusal: string | undefined
  status: number
  /** Cache markers (`cache_control`) in the request body: the breakpoints the library sent. */
  breakpoints: number
  /** Where those markers sit, as JSON paths in document order. */
  markers: readonly string[]
}

/** What one library session produced. */
export interface LibrarySessionResult {
  rows: StepRow[]
  /** Per row, the digest of its request (undefined for a failed one): for the side-by-side. */
  digests: Array<RequestDigest | undefined>
  /** Per row, the scenario event its break is attributed to. */
  breakEventTypes: Array<string | undefined>
  /** Per row, the wire against the library's own view. */
  requests: LibraryRequestView[]
  /** Scenario events the loop could not express. */
  inexpressible: Inexpressible[]
  /** Errors the library raised, per turn that stopped on one. */
  errors: Array<{ turn: number; message: string }>
  entry: ModelEntry
}

export interface LibrarySessionOptions {
  runId: string
  /** A loopback server on the sim upstream, shared by the run's library sessions. */
  server: LoopbackServer
  loop: LibraryLoop
}

/** The usage the simulator served, from its counts (the wire's truth). */
export function servedUsage(call: MockCall, counts: SimCounts, reportsWrites: boolean): Usage {
  return {
    input: counts.input,
    uncached: counts.uncached,
    cacheRead: counts.read,
    cacheWrite: counts.write,
    ...(counts.write5m > 0 ? { cacheWrite5m: counts.write5m } : {}),
    ...(counts.write1h > 0 ? { cacheWrite1h: counts.write1h } : {}),
    output: counts.output,
    ...(counts.reasoning !== undefined ? { reasoning: counts.reasoning } : {}),
    raw: wireUsage(call.api, counts, reportsWrites) as Usage['raw'],
  }
}

/** Run one session of a plan on a library loop. */
export async function runLibrarySession(
  plan: SessionPlan,
  options: LibrarySessionOptions,
): Promise<LibrarySessionResult> {
  const { scenario, variant } = plan
  const { loop, server } = options
  const context = server.context
  if (context === undefined) throw new Error('library loops need a loopback server on the sim upstream')
  if (!loop.providers.includes(plan.provider))
    throw new CachelabError('usage', `the ${loop.name} loop does not speak to ${plan.provider}`)
  const vendor = vendorOf(plan.provider)
  if (!isBuiltInVendor(vendor))
    throw new CachelabError('usage', `the library loops run on built-in providers only, not ${plan.provider}`)
  // One id for every loop on the plan: the scripted texts and the model's reasoning are seeded by it, so
  // each loop's requests carry the same words and the first wire node that differs from the reference's
  // is the library's doing. Sessions share no state: the simulator is reset below.
  const sessionId = sessionIdOf(plan)
  const entry = resolveModel(plan.provider, plan.model)
  const clock = new VirtualClock()
  const pace = { ...DEFAULT_PACE, ...scenario.pace }
  const script = variant.script ?? scenario.script
  const actions = script.filter((action) => !variant.skip?.includes(action.kind))
  const events: LoopEvent[] = []
  const note = (type: string, data: unknown, rewritesHead = false) =>
    events.push({
      type,
      seq: events.length,
      data,
      ...(rewritesHead ? { surfaceOp: { op: 'replace-head' } } : {}),
    })
  const builder = new LoopRowBuilder({
    runId: options.runId,
    scenario: scenario.name,
    variant: variant.name,
    provider: plan.provider,
    model: entry.model,
    prices: entry.prices,
    // Every library sends the system prompt at the head of the request: a change rewrites it.
    route: 'unsupported',
    loop: loop.name,
    events: () => events,
  })
  context.reset(variant.rules === undefined ? {} : { models: [withCacheRules(entry, variant.rules)] })
  const result: LibrarySessionResult = {
    rows: [],
    digests: [],
    breakEventTypes: [],
    requests: [],
    inexpressible: [],
    errors: [],
    entry,
  }

  // The turn in progress: its number, its steps, the step the next request answers, and the tool results
  // its scripted answers promised.
  let turn = 0
  let steps: readonly StepScript[] = []
  let step = 1
  const results = new Map<string, LibraryToolResult>()
  const pendingResults: LibraryToolResult[] = []

  const scriptedReply = (): AssistantMessage => {
    const stepScript = steps[step - 1]
    if (stepScript === undefined) {
      result.inexpressible.push({
        action: 'turn',
        turn,
        reason: `the library asked for step ${step}, which the script does not have (answered "Done.")`,
      })
      return { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] }
    }
    const content: AssistantMessage['content'] = []
    if (stepScript.text !== undefined)
      content.push({
        type: 'text',
        text: resolveText(stepScript.text, `${sessionId}:assistant:${turn}:${step}`),
      })
    for (const [index, call] of (stepScript.toolCalls ?? []).entries()) {
      const callId = `call_${turn}_${step}_${index}`
      content.push({ type: 'tool-call', callId, name: call.name, arguments: JSON.stringify(call.arguments) })
      const promised = {
        output: resolveText(call.result, `${sessionId}:tool:${turn}:${step}:${index}`),
        isError: call.isError === true,
      }
      results.set(callId, promised)
      pendingResults.push(promised)
    }
    if (content.length === 0) content.push({ type: 'text', text: 'Done.' })
    return { role: 'assistant', content }
  }

  let nextReply: string | undefined
  let attempt = 0
  const headers = (): Record<string, string> => {
    // One scripted answer per step: decided on the first ask, kept for its retries.
    // The model reasons as it would unscripted: a thinking-mode answer carries its reasoning, and a
    // library that does not pass it back meets the API's refusal.
    nextReply ??= encodeScript({ ...scriptedReply(), reasoning: 'as-requested' })
    context.previous = builder.previousRequest()
    return { [SCRIPT_HEADER]: nextReply, [TIME_HEADER]: String(clock.now()), [SESSION_HEADER]: sessionId }
  }
  const wrappedFetch: typeof fetch = (input, init) => {
    const merged = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))
    for (const [name, value] of Object.entries(headers())) merged.set(name, value)
    return fetch(input, { ...init, headers: merged })
  }
  // Each request is rowed as the provider serves it, so the next one's counterfactual has it.
  let answeredThisTurn: LibraryRequestView[] = []
  context.observer = (call) => {
    const simulation = call.simulation
    const ok = call.status >= 200 && call.status < 300 && call.failure === undefined
    const reportsWrites =
      (call.api === 'openai-chat' || call.api === 'openai-responses') &&
      context.simulators.openai.reportsWrites(String(call.body.model))
    const wire =
      ok && simulation !== undefined ? servedUsage(call, simulation.counts, reportsWrites) : undefined
    const added = builder.add({
      request: {
        purpose: 'step',
        turn,
        step,
        attempt,
        at: call.at,
        headerReason: undefined,
        logLength: events.length,
        sources: [],
      },
      body: call.body,
      usage: wire,
      observation:
        wire === undefined || simulation === undefined
          ? undefined
          : { prompt: simulation.prompt, trace: simulation.trace, counts: simulation.counts },
      latencyMs: wire === undefined ? 60 : modeledLatencyMs(wire),
    })
    result.rows.push(added.row)
    result.digests.push(added.digest)
    result.breakEventTypes.push(added.breakEventType)
    const markers = cacheMarkerPaths(call.body)
    const view: LibraryRequestView = {
      wire,
      reported: undefined,
      refusal: call.refusal,
      status: call.status,
      breakpoints: markers.length,
      markers,
    }
    result.requests.push(view)
    clock.advance((wire === undefined ? 60 : modeledLatencyMs(wire)) / 1000)
    if (wire === undefined) {
      attempt += 1
      return
    }
    answeredThisTurn.push(view)
    nextReply = undefined
    attempt = 0
    step += 1
  }

  const execute = (call: LibraryToolCall): LibraryToolResult => {
    clock.advance(pace.toolSeconds)
    const promised = results.get(call.id) ?? pendingResults.shift()
    if (promised === undefined) return { output: 'No scripted result.', isError: true }
    const index = pendingResults.indexOf(promised)
    if (index >= 0) pendingResults.splice(index, 1)
    return promised
  }

  const session = await loop.open({
    provider: plan.provider,
    model: entry.model,
    system: resolveText(scenario.system, `${scenario.name}:system`),
    tools: scenario.tools,
    maxTokens: scenario.maxTokens,
    sessionKey: sessionId,
    transport: {
      baseURL: server.baseURLs[vendor],
      apiKey: LIBRARY_API_KEY,
      headers,
      fetch: wrappedFetch,
    },
  })

  try {
    for (const action of actions) {
      const seed = `${scenario.name}:${action.kind}:${events.length}`
      switch (action.kind) {
        case 'turn': {
          turn += 1
          if (Array.isArray(action.user)) {
            result.inexpressible.push({ action: 'turn', turn, reason: LIBRARY_INEXPRESSIBLE.image ?? '' })
            continue
          }
          if (action.steps.some((script) => script.cancel === true))
            result.inexpressible.push({ action: 'cancel', turn, reason: LIBRARY_INEXPRESSIBLE.cancel ?? '' })
          if (action.steps.some((script) => (script.arrivals ?? []).length > 0))
            result.inexpressible.push({
              action: 'arrival',
              turn,
              reason: LIBRARY_INEXPRESSIBLE.arrival ?? '',
            })
          steps = action.steps
          step = 1
          results.clear()
          pendingResults.length = 0
          nextReply = undefined
          note('user/message', { turn })
          answeredThisTurn = []
          attempt = 0
          const outcome = await session.turn(resolveText(action.user, `${seed}:user`), execute)
          if (outcome.error !== undefined) {
            result.errors.push({ turn, message: outcome.error })
            // The loop put its history back as it was before the turn: the next request rewrites what
            // this turn's requests sent, and its break is this event's, not the script's.
            note('turn/rolled-back', { turn, error: outcome.error }, true)
          }
          // What the library reported pairs with the requests it got an answer to, in order.
          for (const [index, view] of answeredThisTurn.entries()) view.reported = outcome.reported[index]
          clock.advance(pace.turnGapSeconds)
          break
        }
        case 'idle':
          clock.advance(action.seconds)
          break
        case 'set-system':
          session.setSystem(resolveText(action.text, seed))
          note('script/set-system', { turn }, true)
          break
        case 'set-tools':
          session.setTools(action.tools)
          note('script/set-tools', { turn }, true)
          break
        case 'fault':
          context.faults.push(action.fault)
          break
        case 'set-prefix-source':
        case 'set-config':
        case 'start-series':
        case 'inject':
        case 'compact':
        case 'prune':
        case 'pressure-prune':
        case 'restart':
          result.inexpressible.push({
            action: action.kind,
            turn,
            reason: LIBRARY_INEXPRESSIBLE[action.kind] ?? '',
          })
          break
        default: {
          const unreachable: never = action
          throw new Error(`unknown action ${JSON.stringify(unreachable)}`)
        }
      }
    }
  } finally {
    context.observer = undefined
  }
  return result
}

/**
 * Where a request body carries `cache_control` markers, as JSON paths in document order (`cache_control`
 * at the top level, `system[0]`, `messages[3].content[0]`): the breakpoints it asks for.
 */
export function cacheMarkerPaths(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => cacheMarkerPaths(item, `${path}[${index}]`))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, item]) => {
    if (key === 'cache_control') return item === null || item === undefined ? [] : [path === '' ? key : path]
    return cacheMarkerPaths(item, path === '' ? key : `${path}.${key}`)
  })
}
