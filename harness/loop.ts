// The agent loop under test: runs scripted turns over an event-sourced session log. Every request is
// derived from the log (deriveRequest) after the step's system-prompt, user and header events are
// committed, so the request sent is exactly what the log rebuilds. Provider I/O goes through an
// injected port; time through the virtual clock.

import {
  type PruneOptions,
  pruneTargets,
  shadowedTokens,
  summarizerRequest,
  summaryMessage,
  summaryRange,
} from './compaction.ts'
import { deriveRequest } from './derive.ts'
import { CachelabError } from './errors.ts'
import { fillerText } from './filler.ts'
import { messageTokens, requestTokens } from './meter.ts'
import type { LlmCall, LlmOutcome, LoopEnvironment, LoopSetup, RequestRecord, World } from './ports.ts'
import {
  composePrefix,
  decideHeader,
  type HeaderDecision,
  planImageOffload,
  projectSystemPrompt,
  projectTools,
  pruneText,
  type ToolProjection,
  toolUpdateText,
  withAdapterDefaults,
} from './projections.ts'
import { retryDelayMs } from './retry.ts'
import { type Arrival, resolveText, type StepScript, type TurnScript } from './script.ts'
import { SessionProjection } from './session.ts'
import {
  type AssistantMessage,
  CANCELLED_ATTEMPT,
  type DerivedRequest,
  type EventDraft,
  type Message,
  type RequestHeader,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  systemPromptUpdateOf,
  type TurnEndReason,
  type Usage,
  type UserMessage,
} from './types.ts'

export class AgentLoop {
  readonly session: SessionProjection
  private readonly env: LoopEnvironment
  private readonly setup: LoopSetup
  private headerLogged = false
  private requestGeneration: number
  private requestContentGeneration: number
  private frozenPrefix: Message[] | undefined
  private explicitSeries = false
  private lastTurn: number
  private compactions = 0
  /** The meter's estimate of the last step request and its answer: the context pressure after that call. */
  private measuredContext = 0
  /** Steers waiting for the next step. */
  private readonly steers: UserMessage[] = []
  /** Followups waiting for the running turn to end, each with the steps of the turn it opens. */
  private readonly followups: Array<{ user: UserMessage; steps: readonly StepScript[] }> = []

  private constructor(env: LoopEnvironment, setup: LoopSetup, session: SessionProjection) {
    this.env = env
    this.setup = setup
    this.session = session
    this.requestGeneration = session.replaceGeneration
    this.requestContentGeneration = session.contentGeneration
    this.lastTurn = session.log.reduce(
      (turn, event) => (event.type === 'turn/start' ? event.data.turn : turn),
      0,
    )
  }

  /** A new session: writes `session/start`. */
  static start(env: LoopEnvironment, setup: LoopSetup): AgentLoop {
    const loop = new AgentLoop(env, setup, SessionProjection.empty(env.sessionId))
    loop.append({
      type: 'session/start',
      data: { formatVersion: SESSION_FORMAT_VERSION, sessionId: env.sessionId },
    })
    return loop
  }

  /** A new loop instance over an existing log (a process restart): marks the seed end and continues. */
  static resume(env: LoopEnvironment, setup: LoopSetup, events: readonly SessionEvent[]): AgentLoop {
    const session = SessionProjection.fromEvents(events)
    if (session.sessionId !== env.sessionId) {
      throw new CachelabError(
        'input',
        `the log belongs to session ${session.sessionId}, not ${env.sessionId}`,
      )
    }
    const loop = new AgentLoop(env, setup, session)
    env.clock.advance(Math.max(0, session.lastTime - env.clock.now()))
    loop.append({ type: 'session/end-seed', data: {} })
    return loop
  }

  /** The next request explicitly starts a new message series. */
  startSeries(): void {
    this.explicitSeries = true
  }

  /**
   * Run one user turn through its scripted steps, then every followup queued while it ran: each opens a
   * turn of its own as soon as the previous one ends (seed 003), so no turn gap comes between them.
   * Returns how the last of those turns ended.
   */
  async turn(script: TurnScript, world: World): Promise<TurnEndReason> {
    const turn = this.lastTurn + 1
    const user: UserMessage = {
      role: 'user',
      content: Array.isArray(script.user)
        ? script.user
        : [{ type: 'text', text: resolveText(script.user, `${this.env.sessionId}:user:${turn}`) }],
    }
    let reason = await this.runTurn(user, script.steps, world)
    for (let next = this.followups.shift(); next !== undefined; next = this.followups.shift()) {
      reason = await this.runTurn(next.user, next.steps, world)
    }
    return reason
  }

  private async runTurn(
    user: UserMessage,
    steps: readonly StepScript[],
    world: World,
  ): Promise<TurnEndReason> {
    const turn = this.lastTurn + 1
    this.lastTurn = turn
    this.append({ type: 'turn/start', data: { turn } })
    let reason: TurnEndReason = 'completed'
    for (const [index, stepScript] of steps.entries()) {
      const outcome = await this.step(turn, index + 1, stepScript, world, index === 0 ? user : undefined)
      if (outcome !== 'answered') {
        reason = outcome === 'cancelled' ? 'aborted' : 'error'
        break
      }
    }
    this.append({ type: 'turn/end', data: { turn, reason } })
    return reason
  }

  /** A plugin injects context at the user position; it joins the next request. */
  inject(text: string, plugin: string): void {
    this.append({
      type: 'user/message',
      data: {
        turn: this.lastTurn,
        message: { role: 'user', content: [{ type: 'text', text }] },
        source: { kind: 'plugin', plugin },
      },
      surfaceOp: 'append',
    })
  }

  private async step(
    turn: number,
    step: number,
    script: StepScript,
    world: World,
    user?: UserMessage,
  ): Promise<'answered' | 'failed' | 'cancelled'> {
    this.relievePressure(world)
    this.append({ type: 'step/start', data: { turn, step } })
    this.projectSystem(turn, step, world)
    this.injectOpener(turn, world)
    const tools = this.projectToolUpdates(world)
    // The inbox is claimed at the step boundary: steers that arrived since the last step, then the turn's prompt.
    for (const message of [...this.steers.splice(0), ...(user !== undefined ? [user] : [])]) {
      this.append({
        type: 'user/message',
        data: { turn, message, source: { kind: 'user' } },
        surfaceOp: 'append',
      })
    }
    this.offloadImages()
    const header = this.commitHeader(world, tools)
    this.announceToolUpdate(turn, step, tools)
    const scripted = this.scriptedReply(turn, step, script)
    const sent = await this.send({ turn, step, purpose: 'step', scripted }, header, undefined, script.cancel)
    if (sent === undefined) {
      this.receive(turn, step, script.arrivals ?? [])
      this.append({ type: 'step/end', data: { turn, step } })
      return script.cancel === true ? 'cancelled' : 'failed'
    }
    this.append({
      type: 'assistant/message',
      data: {
        turn,
        step,
        attempt: sent.attempt,
        message: scripted,
        usage: sent.usage,
        latencyMs: sent.latencyMs,
      },
      surfaceOp: 'append',
    })
    this.env.onRequest?.(sent.record)
    this.measuredContext = requestTokens(sent.record.call.request) + messageTokens(scripted)
    for (const [index, call] of (script.toolCalls ?? []).entries()) {
      const block = scripted.content.filter((part) => part.type === 'tool-call')[index]
      if (block === undefined || block.type !== 'tool-call') continue
      this.append({
        type: 'tool/call',
        data: { turn, step, callId: block.callId, name: block.name, arguments: block.arguments },
      })
      this.env.clock.advance(this.setup.pace.toolSeconds)
      const text = resolveText(call.result, `${this.env.sessionId}:tool:${turn}:${step}:${index}`)
      this.append({
        type: 'tool/result',
        data: {
          turn,
          step,
          message: {
            role: 'tool',
            callId: block.callId,
            name: block.name,
            text,
            ...(call.isError ? { isError: true as const } : {}),
          },
        },
        surfaceOp: 'append',
      })
    }
    this.receive(turn, step, script.arrivals ?? [])
    this.append({ type: 'step/end', data: { turn, step } })
    return 'answered'
  }

  /**
   * Input that arrived while a step's request was in flight (seed 003): a steer waits for the next step,
   * a followup for the end of the turn, and an injection is committed at once, silently.
   */
  private receive(turn: number, step: number, arrivals: readonly Arrival[]): void {
    for (const [index, arrival] of arrivals.entries()) {
      const text = resolveText(
        arrival.text,
        `${this.env.sessionId}:${arrival.delivery}:${turn}:${step}:${index}`,
      )
      const message: UserMessage = { role: 'user', content: [{ type: 'text', text }] }
      switch (arrival.delivery) {
        case 'steer':
          this.steers.push(message)
          break
        case 'followup':
          this.followups.push({ user: message, steps: arrival.steps })
          break
        case 'inject':
          this.inject(text, arrival.plugin)
          break
        default: {
          const unreachable: never = arrival
          throw new CachelabError('invariant', `unknown arrival ${JSON.stringify(unreachable)}`)
        }
      }
    }
  }

  /**
   * DSH's pressure compaction at `agent/pre-step`, before the step's request is derived: when the context
   * measured after the previous call reaches the threshold, prune. It can fire at any step, mid-turn too.
   */
  private relievePressure(world: World): void {
    const pressure = world.pressurePrune
    if (pressure === undefined || this.measuredContext < pressure.contextTokens) return
    const { contextTokens: _trigger, ...options } = pressure
    this.prune(options)
  }

  /** Whether the next request begins a new series: explicitly, or because the surface was rewritten. */
  private seriesStarts(): boolean {
    return (
      this.explicitSeries ||
      this.session.replaceGeneration !== this.requestGeneration ||
      this.session.contentGeneration !== this.requestContentGeneration
    )
  }

  private projectSystem(turn: number, step: number, world: World): void {
    if (this.setup.policies.systemPrompt !== 'surface') return
    const commits = projectSystemPrompt(this.session.systemNodes(), world.system, {
      inHistory: this.setup.route === 'in-history',
      startsSeries: this.seriesStarts() || this.toolsChanged(world),
      seriesStart: this.setup.policies.seriesStart,
    })
    for (const commit of commits) {
      const message = { role: 'system' as const, text: commit.text }
      if (commit.kind === 'append') {
        this.append({ type: 'system/message', data: { turn, step, message }, surfaceOp: 'append' })
      } else {
        this.append({
          type: 'system/message',
          data: { turn, step, message },
          surfaceOp: { op: 'replace', startSeq: commit.seq, endSeq: commit.seq },
          sourceEventSeqs: [commit.seq],
        })
      }
    }
  }

  /** The `opener` policy: the session prefix as durable history, once, right after the system head. */
  private injectOpener(turn: number, world: World): void {
    if (this.setup.policies.sessionPrefix !== 'opener' || this.session.log.some(isOpener)) return
    const opener = composePrefix(world.prefixSource)[0]
    if (opener === undefined || opener.role !== 'user') return
    this.append({
      type: 'user/message',
      data: {
        turn,
        message: opener,
        source: { kind: 'plugin', plugin: OPENER },
      },
      surfaceOp: 'append',
    })
  }

  /** On a route without tool updates, a changed tool set rewrites the prefix, so it starts a series too. */
  private toolsChanged(world: World): boolean {
    if (this.setup.toolUpdate !== 'unsupported' || !this.headerLogged) return false
    const baseline = this.session.header?.header.tools ?? []
    return JSON.stringify(baseline) !== JSON.stringify(world.tools)
  }

  /** Declare the step's tools for the route's tool-update mode. */
  private projectToolUpdates(world: World): ToolProjection {
    const header = this.session.header?.header
    const previous =
      header === undefined ? undefined : { tools: header.tools ?? [], retired: header.retiredTools ?? [] }
    return projectTools(previous, world.tools, this.setup.toolUpdate)
  }

  /**
   * Announce additions and removals in history, after the header that declares them: an announcement
   * with additions names that header (`headerSeq`, DSH D), so it must already be in the log.
   */
  private announceToolUpdate(turn: number, step: number, projection: ToolProjection): void {
    const update = projection.update
    if (update === undefined) return
    const headerSeq = this.session.header?.seq
    this.append({
      type: 'developer/message',
      data: {
        turn,
        step,
        message: { role: 'developer', text: toolUpdateText(update) },
        ...(update.added.length > 0 && headerSeq !== undefined ? { headerSeq } : {}),
      },
      surfaceOp: 'append',
    })
  }

  /** Offload the oldest images once the request would carry more than the policy's limit. */
  private offloadImages(): void {
    const { imageLimit, imageQuantum, imageOffload } = this.setup.policies
    const targets = planImageOffload(this.session.liveImages(), imageLimit, imageQuantum, imageOffload)
    if (targets.length > 0) this.append({ type: 'image/offload', data: { mode: imageOffload, targets } })
  }

  /** Build this step's header, write it when the rules say so, and keep request/context current. */
  private commitHeader(world: World, tools: ToolProjection): HeaderDecision | undefined {
    const policies = this.setup.policies
    if (policies.sessionPrefix === 'frozen') this.frozenPrefix ??= composePrefix(world.prefixSource)
    const { config, adapterDefaults } = withAdapterDefaults(world.config, this.setup.adapterDefaults)
    const header: RequestHeader = {
      config,
      ...(adapterDefaults !== undefined ? { adapterDefaults } : {}),
      ...(policies.systemPrompt === 'header' && world.system !== '' ? { system: world.system } : {}),
      ...(tools.tools.length > 0 ? { tools: tools.tools } : {}),
      ...(tools.retired.length > 0 ? { retiredTools: tools.retired } : {}),
      ...(this.frozenPrefix !== undefined && this.frozenPrefix.length > 0
        ? { messagePrefix: this.frozenPrefix }
        : {}),
    }
    const afterSlot = policies.sessionPrefix === 'after-slot' ? composePrefix(world.prefixSource) : []
    if (afterSlot.length > 0) header.afterSlot = afterSlot
    const decision = decideHeader({
      loggedThisInstance: this.headerLogged,
      baseline: this.session.header?.header,
      header,
      startsSeries: this.seriesStarts(),
    })
    if (decision !== undefined) {
      this.append({
        type: 'request/header',
        data: {
          header,
          reason: decision.reason,
          ...(decision.reason === 'change' && decision.startsSeries ? { startsSeries: true } : {}),
        },
      })
    }
    this.headerLogged = true
    this.explicitSeries = false
    this.requestGeneration = this.session.replaceGeneration
    this.requestContentGeneration = this.session.contentGeneration
    const context = this.session.context
    const { provider, model } = world.config
    if (
      context === undefined ||
      context.provider !== provider ||
      context.model !== model ||
      context.route !== this.setup.route
    ) {
      const systemPromptUpdate = systemPromptUpdateOf(this.setup.route)
      this.append({
        type: 'request/context',
        data: { provider, model, ...(systemPromptUpdate !== undefined ? { systemPromptUpdate } : {}) },
      })
    }
    return decision
  }

  private scriptedReply(turn: number, step: number, script: StepScript): AssistantMessage {
    const content: AssistantMessage['content'] = []
    if (script.text !== undefined) {
      content.push({
        type: 'text',
        text: resolveText(script.text, `${this.env.sessionId}:assistant:${turn}:${step}`),
      })
    }
    for (const [index, call] of (script.toolCalls ?? []).entries()) {
      content.push({
        type: 'tool-call',
        callId: `call_${turn}_${step}_${index}`,
        name: call.name,
        arguments: JSON.stringify(call.arguments),
      })
    }
    if (content.length === 0) content.push({ type: 'text', text: 'Done.' })
    return { role: 'assistant', content }
  }

  /**
   * Send the current derived request (or `override`) with the SDKs' retry rules: each failed attempt is
   * an `assistant/attempt` event and a report row. Returns undefined when every attempt failed, or when
   * the user `cancel`s: the first attempt reaches the provider, and its answer is discarded.
   */
  private async send(
    call: { turn: number; step: number; purpose: 'step' | 'summary'; scripted: AssistantMessage },
    header: HeaderDecision | undefined,
    override?: DerivedRequest,
    cancel?: true,
  ): Promise<{ attempt: number; usage: Usage; latencyMs: number; record: RequestRecord } | undefined> {
    for (let attempt = 0; ; attempt += 1) {
      const request = override ?? deriveRequest(this.session)
      const logLength = this.session.nextSeq
      const full: LlmCall = { ...call, request, at: this.env.clock.now(), attempt }
      const answer = await this.env.llm.send(full)
      // A cancelled stream is abandoned before its final usage frame: the client never learns the usage.
      const outcome: LlmOutcome =
        cancel === true && answer.ok
          ? {
              ok: false,
              error: {
                type: CANCELLED_ATTEMPT,
                message: 'cancelled by the user; the attempt is discarded',
                retryable: false,
              },
              latencyMs: answer.latencyMs,
              wire: answer.wire,
            }
          : answer
      this.env.clock.advance(outcome.latencyMs / 1000)
      const record: RequestRecord = {
        sessionId: this.env.sessionId,
        call: full,
        ...(attempt === 0 && header !== undefined ? { header } : {}),
        route: this.setup.route,
        logLength,
        outcome,
      }
      if (outcome.ok) return { attempt, usage: outcome.usage, latencyMs: outcome.latencyMs, record }
      this.append({
        type: 'assistant/attempt',
        data: {
          turn: call.turn,
          step: call.step,
          attempt,
          error: outcome.error,
          latencyMs: outcome.latencyMs,
        },
      })
      this.env.onRequest?.(record)
      if (!outcome.error.retryable || attempt >= this.setup.maxRetries) return undefined
      this.env.clock.advance(retryDelayMs(attempt, outcome.retryAfterMs, this.env.random) / 1000)
    }
  }

  /**
   * Summary compaction: every live node after the system head except the last `retainNodes` is replaced by
   * one summary `user/message`. The summarizer call replays the conversation prefix or sends its own prompt.
   */
  async compact(retainNodes: number, summaryTokens: number, world: World): Promise<boolean> {
    const shadowed = summaryRange(this.session, retainNodes)
    if (shadowed === undefined) return false
    const compactionId = `compaction-${++this.compactions}`
    const replayPrefix = this.setup.policies.summaryReplayPrefix
    this.append({ type: 'compaction/start', data: { compactionId, kind: 'summary', replayPrefix } })
    const request = summarizerRequest(this.session, shadowed, replayPrefix, world.config)
    const summary = fillerText(summaryTokens, `${this.env.sessionId}:${compactionId}`)
    const scripted: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: summary }] }
    const sent = await this.send(
      { turn: this.lastTurn, step: 0, purpose: 'summary', scripted },
      undefined,
      request,
    )
    if (sent === undefined) {
      this.append({ type: 'compaction/end', data: { compactionId } })
      return false
    }
    this.env.onRequest?.(sent.record)
    this.append({
      type: 'compaction/summary',
      data: {
        compactionId,
        shadowedRange: { start: shadowed[0] as number, end: shadowed.at(-1) as number },
        shadowedSeqs: shadowed,
        shadowedTokenCount: shadowedTokens(this.session, shadowed),
        usage: sent.usage,
      },
    })
    this.append({
      type: 'user/message',
      data: {
        turn: this.lastTurn,
        message: summaryMessage(summary),
        source: { kind: 'plugin', plugin: 'compaction' },
      },
      surfaceOp: { op: 'replace', startSeq: shadowed[0] as number, endSeq: shadowed.at(-1) as number },
      sourceEventSeqs: shadowed,
    })
    this.append({ type: 'compaction/end', data: { compactionId } })
    return true
  }

  /** Tool-result pruning: long results outside the last `skipLastNodes` nodes are cut in place. */
  prune(options: PruneOptions): number {
    const keep = options.keep ?? this.setup.policies.pruneKeep
    // A replacement equal to the live node would rewrite nothing yet still start a new series.
    const cuts = pruneTargets(this.session, options).flatMap((seq) => {
      const event = this.session.event(seq)
      if (event.type !== 'tool/result') return []
      const text = pruneText(event.data.message.text, options.keepChars, keep)
      return text === event.data.message.text ? [] : [{ seq, data: event.data, text }]
    })
    if (cuts.length === 0) return 0
    const compactionId = `compaction-${++this.compactions}`
    this.append({ type: 'compaction/start', data: { compactionId, kind: 'prune' } })
    for (const { seq, data, text } of cuts) {
      this.append({
        type: 'compaction/prune',
        data: {
          compactionId,
          shadowedRange: { start: seq, end: seq },
          shadowedSeqs: [seq],
          shadowedTokenCount: shadowedTokens(this.session, [seq]),
          keep,
        },
      })
      this.append({
        type: 'tool/result',
        data: { ...data, message: { ...data.message, text } },
        surfaceOp: { op: 'replace', startSeq: seq, endSeq: seq },
        sourceEventSeqs: [seq],
      })
    }
    this.append({ type: 'compaction/end', data: { compactionId } })
    return cuts.length
  }

  /** Commit an event: assign seq and time, validate and fold it, then persist it. */
  private append(draft: EventDraft): SessionEvent {
    const event = { seq: this.session.nextSeq, time: this.env.clock.now(), ...draft } as SessionEvent
    this.session.apply(event)
    this.env.sink?.(event)
    return event
  }
}

const OPENER = 'session-opener'

function isOpener(event: SessionEvent): boolean {
  return (
    event.type === 'user/message' &&
    event.data.source.kind === 'plugin' &&
    event.data.source.plugin === OPENER
  )
}
