// DSH's real published agent loop driven by a scenario script: a Cordis context with DSH's LLM runtime,
// session store, system prompt, tool runtime, agent registry, agent loop and DeepSeek adapter, DSH's
// JSONL session store writing under the run's sessions folder, and, when installed, DSH's token meter,
// tool-result pruner and basic compaction. Scenario events become DSH calls (followup, steer, inject, a
// prompt section, tool registrations, the pruner's pass, a manual compaction, a restart that resumes from
// the store); the model's answers, summaries and tool results are the script's. Each request DSH sends is
// tagged in flight with the script's answer, the virtual time and the session, and described from DSH's
// own log.

import { existsSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { CachelabError } from '../../errors.ts'
import { resolveText, type StepScript, type TextSpec, type TurnScript } from '../../script.ts'
import type { AssistantMessage, HeaderReason, ToolSchema } from '../../types.ts'
import { type DshModules, ensurePromiseWithResolvers } from './modules.ts'
import { type DshEventView, type DshMessageView, latestHeader, wireSources } from './sources.ts'
import { DSH_STORE_FOLDER, jsonlPersistence } from './store.ts'

/** DSH's provider route of its DeepSeek adapter. */
export const DSH_PROVIDER = 'deepseek-official'

/** The host DSH's DeepSeek adapter is pointed at (the mock providers answer it in process). */
export const DSH_BASE_URL = 'https://api.deepseek.com'

/** The environment variable DSH's adapter reads its (simulated) key from. */
export const DSH_KEY_VARIABLE = 'CACHELAB_DSH_API_KEY'

/** What DSH sent for one provider request, read off its log when the request left. */
export interface DshRequest {
  /** A loop step, or the summarizer call of a compaction (its step is 0, as the model loop's). */
  purpose: 'step' | 'summary'
  turn: number
  step: number
  /** Requests of this turn and step before this one (DSH retries only with its retry plugin). */
  attempt: number
  /** The reason of the `request/header` DSH wrote for this request, if it wrote one. */
  headerReason: HeaderReason | undefined
  /** DSH log length when the request left: the events that produced it are below. */
  logLength: number
  /** Per wire message, the DSH event seq that produced it (system slot: the request header). */
  sources: number[]
  /** The answer the script gives this request. */
  scripted: AssistantMessage
}

/** What the driver asks of its environment. */
export interface DshDriverHooks {
  /** Move virtual time forward (tool calls take time). */
  advance(seconds: number): void
  /** The request is leaving: the extra HTTP headers it carries to the mock provider. */
  request(request: DshRequest): Record<string, string>
}

/** How a driver is set up. */
export interface DshDriverOptions {
  modules: DshModules
  /** cachelab's session id: seeds the script's texts as the model loop seeds them. */
  sessionId: string
  /** The wire model name. */
  model: string
  maxTokens?: number
  system: string
  tools: readonly ToolSchema[]
  /** Tools declared at some point of the script: the order DSH lists them in is theirs. */
  toolOrder: readonly string[]
  /** The run's sessions folder: DSH's store writes under its `dsh/` folder. */
  directory: string
  /**
   * The budgets DSH's tool-result pruner is installed with (from the script's prune), or undefined when the
   * script does not prune or the pruner is not installed.
   */
  pruner?: DshPrunerConfig
  /**
   * Prune under pressure as DSH's compaction does, at `agent/pre-step` (mid-turn too): when DSH's own token
   * meter measures at least this many tokens, DSH's pruner runs. The threshold is the script's; DSH's
   * default (80% of the model's context window) is one no scenario reaches. Needs `pruner`.
   */
  pressureTokens?: number
  /** Install DSH's basic compaction (manual only: the script says when). */
  compaction: boolean
  /** Seconds each tool call takes. */
  toolSeconds: number
  hooks: DshDriverHooks
}

/** DSH's tool-result pruner configuration (Unicode code points). */
export interface DshPrunerConfig {
  thresholdChars: number
  headChars: number
  tailChars: number
}

/** What one explicit pruner pass did. */
export interface DshPruneOutcome {
  /** Tool results replaced. */
  pruned: number
}

/**
 * Input that arrives while a step's request is in flight (seed 003), as step scripts list it under
 * `arrivals` where the model loop delivers them (issue 14). Read structurally so the DSH side is keyed on
 * the same names: a steer is DSH's `steer`, a followup its `followup`, an injection its `inject`.
 */
export type DshArrival =
  | { delivery: 'steer'; text: TextSpec }
  | { delivery: 'followup'; text: TextSpec; steps: StepScript[] }
  | { delivery: 'inject'; text: TextSpec; plugin: string }

/** The Cordis and DSH surfaces the driver touches (DSH is loaded at run time). */
interface DshContext {
  plugin(plugin: unknown, config?: unknown): Promise<unknown>
  on(event: string, listener: (...args: never[]) => unknown): () => void
  tools: { register(definition: unknown): () => void }
  systemPrompt: { section(section: unknown): () => void }
  agents: {
    resume(options: { resumeSessionId: string; agentOptions?: unknown }): Promise<{ agent: DshAgent }>
  }
  agentLoop: { create(id: string, options: unknown): DshAgent }
  sessionPersistence: { locate(meta: { id: string }): { path?: string } }
  toolResultPruner?: { pruneSession(session: DshSession): { entries?: readonly unknown[] } }
  tokenMeter?: { measure(session: DshSession): { totalTokens: number } }
  compaction?: { compactNow(agent: DshAgent, signal: AbortSignal): Promise<unknown> }
  fiber: { dispose(): Promise<void> }
}

interface DshAgent {
  followup(message: unknown): void
  steer(message: unknown): void
  inject(message: unknown): void
  session: DshSession
}

interface DshSession {
  id: string
  events: readonly DshEventView[]
  surface: { nodes: readonly number[]; replaceGeneration?: number }
}

/** Routes in-flight requests of each live DSH session to its driver (one fetch wrapper per process). */
const routes = new Map<string, (headers: Headers) => void>()
let unwrapped: typeof fetch | undefined

function installFetch(): void {
  if (unwrapped !== undefined) return
  const original = globalThis.fetch
  unwrapped = original
  globalThis.fetch = (input, init) => {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))
    const route = routes.get(headers.get('x-deepseek-harness-session-id') ?? '')
    if (route === undefined) return original(input, init)
    route(headers)
    return original(input, { ...init, headers })
  }
}

function uninstallFetch(): void {
  if (routes.size > 0 || unwrapped === undefined) return
  globalThis.fetch = unwrapped
  unwrapped = undefined
}

/** One DSH agent over one session, driven turn by turn. */
export class DshDriver {
  private readonly options: DshDriverOptions
  private context: DshContext | undefined
  private agent: DshAgent | undefined
  private system: string
  private readonly active = new Map<string, () => void>()
  private tools: readonly ToolSchema[]
  private turnScript: { number: number; script: TurnScript; startSeq: number } | undefined
  private turnNumber = 0
  /** Followups that arrived while a turn ran, each with the steps of the DSH turn it opens. */
  private readonly followups: Array<readonly StepScript[]> = []
  /** The summary the next summarizer call answers with, while a compaction runs. */
  private summary: string | undefined
  private compactions = 0
  /** Scripted tool results by call id. */
  private readonly results = new Map<string, { text: string; isError: boolean }>()
  private readonly attempts = new Map<string, number>()
  /** Steps DSH asked for beyond the script, by turn. */
  readonly unscripted: Array<{ turn: number; step: number }> = []

  private constructor(options: DshDriverOptions) {
    this.options = options
    this.system = options.system
    this.tools = options.tools
  }

  /** Build DSH's runtime and a new agent over a new session. */
  static async start(options: DshDriverOptions): Promise<DshDriver> {
    ensurePromiseWithResolvers()
    // DSH's adapter reads its key from the environment on every request; the mock providers take any key.
    process.env[DSH_KEY_VARIABLE] ??= 'cachelab-simulated-key'
    const driver = new DshDriver(options)
    const context = await driver.compose()
    driver.clearStoredLog(context)
    driver.agent = context.agentLoop.create(options.sessionId, driver.agentOptions())
    driver.route()
    return driver
  }

  /** The live session's events (DSH's own log). */
  get events(): readonly DshEventView[] {
    return this.session.events
  }

  private get session(): DshSession {
    if (this.agent === undefined) throw new CachelabError('invariant', 'the DSH agent is not running')
    return this.agent.session
  }

  /** Run one user turn: a followup, then wait until DSH's agent is idle again. */
  async turn(script: TurnScript): Promise<void> {
    const agent = this.agent
    const context = this.context
    if (agent === undefined || context === undefined)
      throw new CachelabError('invariant', 'DSH is not running')
    if (Array.isArray(script.user))
      throw new CachelabError('invariant', 'a turn with image blocks cannot be sent through DSH')
    this.turnNumber += 1
    this.turnScript = { number: this.turnNumber, script, startSeq: this.session.events.length }
    const text = resolveText(script.user as TextSpec, `${this.options.sessionId}:user:${this.turnNumber}`)
    const idle = waitForIdle(context, agent)
    agent.followup(this.userMessage(text, { kind: 'user' }))
    await idle
  }

  /**
   * DSH's tool-result pruner over the current surface, between turns: every result over its threshold is
   * replaced (head, marker, tail), each replacement priced by a `compaction/prune` event before it.
   */
  prune(): DshPruneOutcome {
    const pruner = this.context?.toolResultPruner
    if (pruner === undefined)
      throw new CachelabError('invariant', "DSH's tool-result pruner is not installed")
    const result = pruner.pruneSession(this.session)
    return { pruned: result.entries?.length ?? 0 }
  }

  /**
   * DSH's manual compaction (`compactNow`, what its `/compact` command calls) on the idle agent: DSH picks
   * the range, its summarizer call is answered with the script's summary. False when DSH found no range.
   */
  async compact(summaryTokens: number): Promise<boolean> {
    const compaction = this.context?.compaction
    const agent = this.agent
    if (compaction === undefined || agent === undefined)
      throw new CachelabError('invariant', "DSH's basic compaction is not installed")
    this.compactions += 1
    this.summary = resolveText(
      { tokens: summaryTokens },
      `${this.options.sessionId}:compaction-${this.compactions}`,
    )
    try {
      return (await compaction.compactNow(agent, new AbortController().signal)) !== null
    } finally {
      this.summary = undefined
    }
  }

  /** A plugin's context: DSH's `inject` (next-step input that does not wake the agent). */
  inject(text: string, plugin: string): void {
    this.agent?.inject(this.userMessage(text, { kind: 'plugin', plugin, form: 'relay' }))
  }

  /** The rendered prompt changes: DSH's prompt section now renders the new text. */
  setSystem(text: string): void {
    this.system = text
  }

  /** The active tool set changes: tools are registered and unregistered in DSH's tool runtime. */
  setTools(tools: readonly ToolSchema[]): void {
    this.tools = tools
    this.registerTools()
  }

  /** A new process: the runtime is torn down and a new one resumes the session from DSH's store. */
  async restart(): Promise<void> {
    routes.delete(this.options.sessionId)
    await this.context?.fiber.dispose()
    this.active.clear()
    const context = await this.compose()
    const handle = await context.agents.resume({
      resumeSessionId: this.options.sessionId,
      agentOptions: this.agentOptions(),
    })
    this.agent = handle.agent
    this.route()
  }

  /** Tear the runtime down. */
  async close(): Promise<void> {
    routes.delete(this.options.sessionId)
    uninstallFetch()
    await this.context?.fiber.dispose()
    this.context = undefined
  }

  /** The file DSH's store writes this session's log to. */
  logFile(): string | undefined {
    return this.context?.sessionPersistence.locate({ id: this.options.sessionId }).path
  }

  private agentOptions() {
    const { model, maxTokens } = this.options
    return { provider: DSH_PROVIDER, model, ...(maxTokens !== undefined ? { maxTokens } : {}) }
  }

  private async compose(): Promise<DshContext> {
    const { modules, directory, toolOrder } = this.options
    const Context = modules.cordis.Context as new () => DshContext
    const context = new Context()
    await context.plugin(modules.llm.default)
    await context.plugin(modules.session.default)
    await context.plugin(modules.systemPrompt.default, {
      includeHarnessIdentity: false,
      includeRuntimeContext: false,
      toolOrder: [...toolOrder, modules.systemPrompt.TOOL_ORDER_REST as string],
    })
    await context.plugin(modules.tools.default)
    await context.plugin(modules.agent.default)
    await context.plugin(modules.agentLoop.default, { agents: [] })
    const root = join(directory, DSH_STORE_FOLDER)
    const store = modules.plugins.jsonlStore
    // DSH's published store where it loads (one event per line, uncompressed: readable, and a break's seq
    // is a line); on Node 20 the same layout and lines through DSH's persistence seam (store.ts).
    if (store.status === 'loaded')
      await context.plugin(store.module.default, { root, compression: 'none', packChunks: false })
    else
      await context.plugin(
        jsonlPersistence(modules.persistence.default as abstract new (ctx: never) => object, root),
      )
    const { tokenMeter, pruner, compaction } = modules.plugins
    if (tokenMeter.status === 'loaded' && (this.options.pruner !== undefined || this.options.compaction))
      await context.plugin(tokenMeter.module.default)
    if (pruner.status === 'loaded' && this.options.pruner !== undefined) {
      await context.plugin(pruner.module.default, this.options.pruner)
      const threshold = this.options.pressureTokens
      if (threshold !== undefined) this.relievePressure(context, threshold)
    }
    // Manual only: the script's compact is the trigger. DSH's pressure compaction stays off, so it cannot
    // prune or summarize where the script does not.
    if (compaction.status === 'loaded' && this.options.compaction)
      await context.plugin(compaction.module.default, { auto: false })
    // Thinking off: the model loop's DeepSeek requests carry no reasoning either.
    await context.plugin(modules.deepseek, {
      baseURL: DSH_BASE_URL,
      reasoningEffort: 'off',
      apiKeyEnv: DSH_KEY_VARIABLE,
    })
    // The scenario's rendered prompt as DSH's complete prompt: one section, re-read at every assembly.
    context.systemPrompt.section({
      name: 'cachelab:scenario-system',
      order: 0,
      complete: true,
      text: () => this.system,
    })
    this.context = context
    this.registerTools()
    return context
  }

  /**
   * DSH's step-pressure hook, with the script's threshold: at every `agent/pre-step`, DSH's token meter
   * measures the session and, at or above the threshold, DSH's pruner runs before the step's request is
   * assembled — where DSH's basic compaction relieves pressure, with its pruning pass and no summary.
   */
  private relievePressure(context: DshContext, threshold: number): void {
    context.on('agent/pre-step', (async (payload: { agent: DshAgent }, next: () => Promise<unknown>) => {
      const { tokenMeter, toolResultPruner } = context
      if (tokenMeter !== undefined && toolResultPruner !== undefined) {
        const measured = tokenMeter.measure(payload.agent.session).totalTokens
        if (measured >= threshold) toolResultPruner.pruneSession(payload.agent.session)
      }
      return next()
    }) as never)
  }

  private route(): void {
    installFetch()
    routes.set(this.options.sessionId, (headers) => {
      // DSH's adapter marks its summarizer call (purpose `compaction`) with this header.
      const summary = headers.get('x-deepseek-harness-compact') === '1'
      const request = summary ? this.describeSummary() : this.describe()
      for (const [name, value] of Object.entries(this.options.hooks.request(request)))
        headers.set(name, value)
      if (!summary) this.deliverArrivals(request)
    })
  }

  /** Forget a previous run's log of this session: DSH's store never overwrites a log. */
  private clearStoredLog(context: DshContext): void {
    const path = context.sessionPersistence.locate({ id: this.options.sessionId }).path
    if (path !== undefined && existsSync(dirname(path))) rmSync(dirname(path), { recursive: true })
  }

  /** Input the script says arrives while this request is in flight, through DSH's own delivery. */
  private deliverArrivals(request: DshRequest): void {
    const agent = this.agent
    const script = this.turnScript?.script.steps[request.step - 1] as
      | (StepScript & { arrivals?: readonly DshArrival[] })
      | undefined
    if (agent === undefined || script?.arrivals === undefined) return
    for (const [index, arrival] of script.arrivals.entries()) {
      const text = resolveText(
        arrival.text,
        `${this.options.sessionId}:${arrival.delivery}:${request.turn}:${request.step}:${index}`,
      )
      switch (arrival.delivery) {
        case 'steer':
          agent.steer(this.userMessage(text, { kind: 'user' }))
          break
        case 'followup':
          this.followups.push(arrival.steps)
          agent.followup(this.userMessage(text, { kind: 'user' }))
          break
        case 'inject':
          agent.inject(this.userMessage(text, { kind: 'plugin', plugin: arrival.plugin, form: 'relay' }))
          break
        default: {
          const unreachable: never = arrival
          throw new CachelabError('invariant', `unknown arrival ${JSON.stringify(unreachable)}`)
        }
      }
    }
  }

  /** Make DSH's registered tools the active set: register what is new, unregister what left. */
  private registerTools(): void {
    const context = this.context
    if (context === undefined) return
    const names = new Set(this.tools.map((tool) => tool.name))
    for (const [name, dispose] of this.active) {
      if (names.has(name)) continue
      dispose()
      this.active.delete(name)
    }
    for (const tool of this.tools) {
      if (this.active.has(tool.name)) continue
      this.active.set(tool.name, context.tools.register(this.toolDefinition(tool)))
    }
  }

  /** A tool whose execution returns the script's result for the call (and takes the script's time). */
  private toolDefinition(tool: ToolSchema) {
    return {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      output: { schema: { type: 'string' }, render: (_args: unknown, value: unknown) => textBlocks(value) },
      execute: async (_args: unknown, execution: { callId: string }) => {
        this.options.hooks.advance(this.options.toolSeconds)
        const result = this.results.get(execution.callId)
        if (result === undefined) return 'No scripted result.'
        if (result.isError) throw new Error(result.text)
        return result.text
      },
    }
  }

  private userMessage(text: string, source: Record<string, unknown>) {
    const create = this.options.modules.llm.createUserMessage as (input: unknown) => unknown
    return create({ content: [{ type: 'text', text }], source })
  }

  /** The request leaving now, read off DSH's log: its step, header reason and message sources. */
  private describe(): DshRequest {
    const events = this.session.events
    this.followTurn(events)
    const start = latestOf(events, 'step/start')
    const position = (start?.data ?? { turn: this.turnNumber, step: 1 }) as { turn: number; step: number }
    const key = `${position.turn}.${position.step}`
    const attempt = this.attempts.get(key) ?? 0
    this.attempts.set(key, attempt + 1)
    const header = latestHeader(events)
    const fresh = header !== undefined && start !== undefined && header.seq > start.seq
    const reason = fresh ? ((header.data as { reason?: HeaderReason }).reason ?? undefined) : undefined
    const project = this.options.modules.session.deriveEventMessage as (
      event: DshEventView,
    ) => DshMessageView | null
    return {
      purpose: 'step',
      turn: this.turnScript?.number ?? position.turn,
      step: position.step,
      attempt,
      headerReason: reason,
      logLength: events.length,
      sources: wireSources(events, this.session.surface.nodes, project),
      scripted: this.scriptedReply(position.step),
    }
  }

  /**
   * A followup that arrived during a turn opens a DSH turn of its own when that turn ends: once DSH has
   * started a turn after the scripted one, the queued followup's steps answer it.
   */
  private followTurn(events: readonly DshEventView[]): void {
    const current = this.turnScript
    const started = latestOf(events, 'turn/start')
    if (current === undefined || started === undefined || started.seq < current.startSeq) return
    const turnsSince = events.slice(current.startSeq).filter((event) => event.type === 'turn/start').length
    if (turnsSince < 2) return
    const steps = this.followups.shift()
    if (steps === undefined) return
    this.turnNumber += 1
    this.turnScript = {
      number: this.turnNumber,
      script: { kind: 'turn', user: '', steps: [...steps] },
      startSeq: started.seq,
    }
  }

  /** The summarizer call of a running compaction: step 0 of the current turn, answered with the summary. */
  private describeSummary(): DshRequest {
    const events = this.session.events
    const turn = this.turnScript?.number ?? this.turnNumber
    const key = `${turn}.0`
    const attempt = this.attempts.get(key) ?? 0
    this.attempts.set(key, attempt + 1)
    return {
      purpose: 'summary',
      turn,
      step: 0,
      attempt,
      headerReason: undefined,
      logLength: events.length,
      sources: [],
      scripted: { role: 'assistant', content: [{ type: 'text', text: this.summary ?? 'Summary.' }] },
    }
  }

  /** The script's answer to step `step` of the current turn; its tool results are kept for execution. */
  private scriptedReply(step: number): AssistantMessage {
    const turn = this.turnScript
    const script: StepScript | undefined = turn?.script.steps[step - 1]
    if (turn === undefined || script === undefined) {
      this.unscripted.push({ turn: turn?.number ?? 0, step })
      return { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] }
    }
    const { sessionId } = this.options
    const content: AssistantMessage['content'] = []
    if (script.text !== undefined)
      content.push({
        type: 'text',
        text: resolveText(script.text, `${sessionId}:assistant:${turn.number}:${step}`),
      })
    for (const [index, call] of (script.toolCalls ?? []).entries()) {
      const callId = `call_${turn.number}_${step}_${index}`
      content.push({ type: 'tool-call', callId, name: call.name, arguments: JSON.stringify(call.arguments) })
      this.results.set(callId, {
        text: resolveText(call.result, `${sessionId}:tool:${turn.number}:${step}:${index}`),
        isError: call.isError === true,
      })
    }
    if (content.length === 0) content.push({ type: 'text', text: 'Done.' })
    return { role: 'assistant', content }
  }
}

function textBlocks(value: unknown): Array<{ type: 'text'; text: string }> {
  return [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) }]
}

function latestOf(events: readonly DshEventView[], type: string): DshEventView | undefined {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]
    if (event?.type === type) return event
  }
  return undefined
}

/** Resolve once DSH reports the agent idle. */
function waitForIdle(context: DshContext, agent: DshAgent): Promise<void> {
  return new Promise((resolve) => {
    const dispose = context.on('agent/status', ((payload: { agent: unknown; status: string }) => {
      if (payload.agent !== agent || payload.status !== 'idle') return
      dispose()
      resolve()
    }) as (...args: never[]) => unknown)
  })
}
