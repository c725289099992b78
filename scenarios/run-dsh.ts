// One scenario session on DSH's real published loop: the script's actions become DSH calls, every
// request DSH sends is answered in process by the mock providers (its answer scripted, its time virtual),
// and each becomes a step row through the external-loop port. What DSH cannot express is listed, never
// faked.

import { VirtualClock } from '../harness/clock.ts'
import { CachelabError } from '../harness/errors.ts'
import { DshDriver, type DshPrunerConfig, type DshRequest } from '../harness/loops/dsh/driver.ts'
import {
  type DshModules,
  type DshPlugin,
  loadDshModules,
  type ModuleImporter,
} from '../harness/loops/dsh/modules.ts'
import type { Inexpressible } from '../harness/loops/types.ts'
import { DEFAULT_PACE, resolveText, type ScriptAction } from '../harness/script.ts'
import type { ToolSchema } from '../harness/types.ts'
import { withCacheRules } from '../providers/catalog.ts'
import { parseDeepSeekUsage } from '../providers/deepseek.ts'
import { type MockProviders, type ModelEntry, modeledLatencyMs, resolveModel } from '../providers/index.ts'
import type { MockCall } from '../providers/mock/context.ts'
import { encodeScript, SCRIPT_HEADER, SESSION_HEADER, TIME_HEADER } from '../providers/mock/script.ts'
import { wireUsage } from '../providers/mock/usage.ts'
import type { RequestDigest } from '../providers/wire/digest.ts'
import { type LoopRow, LoopRowBuilder } from '../reports/loop-rows.ts'
import type { StepRow } from '../reports/types.ts'
import type { SessionPlan } from './run.ts'
import { sessionIdOf } from './run.ts'

/** The provider DSH's published DeepSeek adapter speaks to. */
export const DSH_LOOP_PROVIDER = 'deepseek'

/** Why a scenario action has no DSH 0.1.0 counterpart. */
export const DSH_INEXPRESSIBLE: Readonly<Partial<Record<ScriptAction['kind'] | 'cancel', string>>> = {
  'set-prefix-source': 'DSH 0.1.0 has no session prefix (it was removed before this release)',
  'set-config': 'a call-config change needs an agent/request listener; the adapter does not drive one yet',
  'start-series': 'DSH 0.1.0 has no explicit request series (its headers have no series reason)',
  cancel:
    'a cancelled step: the adapter does not abort DSH mid-stream yet, so DSH keeps the answer the model loop discards (later requests differ from the model loop by that answer)',
}

/**
 * Why DSH cannot run a plugin-backed action here: the first plugin it needs that did not load (missing:
 * the command that installs it; unsupported: what the runtime lacks), or undefined when all loaded.
 */
export function pluginGap(plugins: readonly DshPlugin[], what: string): string | undefined {
  for (const plugin of plugins) {
    switch (plugin.status) {
      case 'loaded':
        continue
      case 'missing':
        return `${what} is a DSH plugin that is not installed: ${plugin.install}`
      case 'unsupported':
        return `${what}: ${plugin.reason}`
      default: {
        const unreachable: never = plugin
        throw new Error(`unknown plugin state ${JSON.stringify(unreachable)}`)
      }
    }
  }
  return undefined
}

/**
 * DSH's pruner budgets for a script's prune: its threshold, and the kept characters split as DSH's defaults
 * split them (head 4,096, tail 1,024: four fifths head). DSH always keeps head and tail, so the script's
 * `keep` (head, middle, tail) and `skipLastNodes` have no DSH counterpart; the note says so.
 */
export function prunerConfig(action: PruneAction | PressureAction): DshPrunerConfig {
  const headChars = Math.round((action.keepChars * 4) / 5)
  return { thresholdChars: action.thresholdChars, headChars, tailChars: action.keepChars - headChars }
}

type PruneAction = Extract<ScriptAction, { kind: 'prune' }>
type PressureAction = Extract<ScriptAction, { kind: 'pressure-prune' }>

/** What one DSH session produced. */
export interface DshSessionResult {
  rows: StepRow[]
  /** Per row, the digest of its request (undefined for a failed one): for the side-by-side. */
  digests: Array<RequestDigest | undefined>
  /** Per row, the DSH event type its break is attributed to. */
  breakEventTypes: Array<string | undefined>
  /** Scenario events DSH could not express. */
  inexpressible: Inexpressible[]
  entry: ModelEntry
}

export interface DshSessionOptions {
  runId: string
  mock: MockProviders
  /** Where DSH's session store writes; a temporary directory is the caller's when absent. */
  sessionsDir: string
  /** Loads DSH's packages (tests simulate their absence). */
  importer?: ModuleImporter
  /** Already loaded packages (one load per run). */
  modules?: DshModules
}

/** Run one session of a plan on DSH's loop. */
export async function runDshSession(
  plan: SessionPlan,
  options: DshSessionOptions,
): Promise<DshSessionResult> {
  const { scenario, variant } = plan
  if (plan.provider !== DSH_LOOP_PROVIDER)
    throw new CachelabError('usage', `--loop dsh runs on the deepseek provider only, not ${plan.provider}`)
  const modules = options.modules ?? (await loadDshModules(options.importer))
  const sessionId = sessionIdOf(plan)
  const entry = resolveModel(plan.provider, plan.model)
  const mock = options.mock
  const clock = new VirtualClock()
  const pace = { ...DEFAULT_PACE, ...scenario.pace }
  const script = variant.script ?? scenario.script
  const actions = script.filter((action) => !variant.skip?.includes(action.kind))
  const rows: StepRow[] = []
  const digests: Array<RequestDigest | undefined> = []
  const breakEventTypes: Array<string | undefined> = []
  const inexpressible: Inexpressible[] = []
  let driver: DshDriver | undefined
  const builder = new LoopRowBuilder({
    runId: options.runId,
    scenario: scenario.name,
    variant: variant.name,
    provider: plan.provider,
    model: entry.model,
    prices: entry.prices,
    // DSH 0.1.0 keeps the prompt in its request header: a changed prompt rewrites the head.
    route: 'unsupported',
    loop: 'dsh',
    events: () => driver?.events ?? [],
  })
  const models = variant.rules === undefined ? undefined : [withCacheRules(entry, variant.rules)]
  mock.context.reset(models === undefined ? {} : { models })
  const calls: MockCall[] = []
  mock.context.observer = (call) => calls.push(call)
  let pending: { request: DshRequest; at: number } | undefined
  // The request before is rowed when the next one leaves (its answer is in by then) or at a turn's end.
  const flush = () => {
    if (pending === undefined) return
    const { request, at } = pending
    pending = undefined
    const call = calls.shift()
    calls.length = 0
    const added = rowOf(builder, request, at, call)
    clock.advance(added.row.latencyMs / 1000)
    rows.push(added.row)
    digests.push(added.digest)
    breakEventTypes.push(added.breakEventType)
  }
  let system = resolveText(scenario.system, `${scenario.name}:system`)
  const { tokenMeter, pruner, compaction } = modules.plugins
  const pruneGap = pluginGap([pruner, tokenMeter], 'tool-result pruning')
  const compactGap = pluginGap([compaction, tokenMeter], 'summary compaction')
  const pressure = actions.find((action): action is PressureAction => action.kind === 'pressure-prune')
  const firstPrune = actions.find((action): action is PruneAction => action.kind === 'prune') ?? pressure
  const prunes = firstPrune !== undefined && pruneGap === undefined
  driver = await DshDriver.start({
    modules,
    sessionId,
    model: entry.model,
    ...(scenario.maxTokens !== undefined ? { maxTokens: scenario.maxTokens } : {}),
    system,
    tools: scenario.tools,
    toolOrder: stableToolOrder(scenario.tools, actions),
    directory: options.sessionsDir,
    ...(prunes ? { pruner: prunerConfig(firstPrune) } : {}),
    ...(prunes && pressure !== undefined ? { pressureTokens: pressure.contextTokens } : {}),
    compaction: compactGap === undefined && actions.some((action) => action.kind === 'compact'),
    toolSeconds: pace.toolSeconds,
    hooks: {
      advance: (seconds) => clock.advance(seconds),
      request: (request) => {
        flush()
        const at = clock.now()
        pending = { request, at }
        mock.context.previous = builder.previousRequest()
        return {
          [SCRIPT_HEADER]: encodeScript(request.scripted),
          [TIME_HEADER]: String(at),
          [SESSION_HEADER]: sessionId,
        }
      },
    },
  })
  let turns = 0
  try {
    for (const action of actions) {
      const seed = `${scenario.name}:${action.kind}:${driver.events.length}`
      switch (action.kind) {
        case 'turn':
          if (Array.isArray(action.user)) {
            inexpressible.push({
              action: 'turn',
              turn: turns + 1,
              reason: 'image input needs an attachment store and an image-capable model entry',
            })
            turns += 1
            continue
          }
          turns += 1
          if (action.steps.some((step) => step.cancel === true))
            inexpressible.push({
              action: 'cancel',
              turn: turns,
              reason: DSH_INEXPRESSIBLE.cancel ?? '',
            })
          await driver.turn(action)
          flush()
          clock.advance(pace.turnGapSeconds)
          break
        case 'idle':
          clock.advance(action.seconds)
          break
        case 'set-system':
          system = resolveText(action.text, seed)
          driver.setSystem(system)
          break
        case 'set-tools':
          driver.setTools(action.tools)
          break
        case 'inject':
          driver.inject(resolveText(action.text, seed), action.plugin)
          break
        case 'fault':
          mock.context.faults.push(action.fault)
          break
        case 'restart':
          await driver.restart()
          break
        case 'prune': {
          const reason = pruneGap ?? differentBudgets(action, firstPrune)
          if (reason !== undefined) {
            inexpressible.push({ action: action.kind, turn: turns, reason })
            break
          }
          driver.prune()
          break
        }
        case 'compact':
          if (compactGap !== undefined) {
            inexpressible.push({ action: action.kind, turn: turns, reason: compactGap })
            break
          }
          if (!(await driver.compact(action.summaryTokens)))
            inexpressible.push({
              action: action.kind,
              turn: turns,
              reason: "DSH's manual compaction found no range to summarize",
            })
          flush()
          break
        case 'pressure-prune': {
          // Installed with the driver, as DSH's compaction is: it prunes at the pre-steps that measure over it.
          const reason = pruneGap ?? differentBudgets(action, firstPrune)
          if (reason !== undefined) inexpressible.push({ action: action.kind, turn: turns, reason })
          break
        }
        case 'set-prefix-source':
        case 'set-config':
        case 'start-series':
          inexpressible.push({
            action: action.kind,
            turn: turns,
            reason: DSH_INEXPRESSIBLE[action.kind] ?? '',
          })
          break
        default: {
          const unreachable: never = action
          throw new Error(`unknown action ${JSON.stringify(unreachable)}`)
        }
      }
    }
    for (const extra of driver.unscripted)
      inexpressible.push({
        action: 'turn',
        turn: extra.turn,
        reason: `DSH asked for step ${extra.step}, which the script does not have (answered "Done.")`,
      })
  } finally {
    flush()
    mock.context.observer = undefined
    await driver.close()
  }
  return { rows, digests, breakEventTypes, inexpressible, entry }
}

/**
 * DSH's pruner is one service with one configuration per runtime: a later prune with other budgets than
 * the first cannot be run as scripted.
 */
function differentBudgets(
  action: PruneAction | PressureAction,
  first: PruneAction | PressureAction | undefined,
): string | undefined {
  if (first === undefined) return undefined
  if (action.thresholdChars === first.thresholdChars && action.keepChars === first.keepChars) return undefined
  return "DSH's pruner runs with one configuration per runtime, the script's first prune's budgets"
}

/** The row of one DSH request from the mock provider's record of it. */
function rowOf(
  builder: LoopRowBuilder,
  request: DshRequest,
  at: number,
  call: MockCall | undefined,
): LoopRow {
  const simulation = call?.simulation
  const ok = call !== undefined && call.status >= 200 && call.status < 300 && call.failure === undefined
  if (!ok || simulation === undefined)
    return builder.add({
      request: { ...request, at },
      body: call?.body ?? {},
      usage: undefined,
      observation: undefined,
      latencyMs: 60,
    })
  const usage = parseDeepSeekUsage(wireUsage('deepseek-chat', simulation.counts, false))
  return builder.add({
    request: { ...request, at },
    body: call.body,
    usage,
    observation: { prompt: simulation.prompt, trace: simulation.trace, counts: simulation.counts },
    latencyMs: modeledLatencyMs(usage),
  })
}

/**
 * The scenario's tool order for DSH's `toolOrder`: the initial tools present through the whole script (DSH
 * refuses an order naming a tool it does not know); any other tool follows in DSH's own (name) order.
 */
function stableToolOrder(initial: readonly ToolSchema[], actions: readonly ScriptAction[]): string[] {
  let names = initial.map((tool) => tool.name)
  for (const action of actions) {
    if (action.kind !== 'set-tools') continue
    const present = new Set(action.tools.map((tool) => tool.name))
    names = names.filter((name) => present.has(name))
  }
  return names
}
