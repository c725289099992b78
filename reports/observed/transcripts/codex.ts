// OpenAI Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`) read into the requests
// they record: one per `token_count` event whose running total moved, its usage the event's
// `last_token_usage` (cached input is part of input, reasoning part of output). A forked child opens with
// a copy of its parent's history, usage included: that prefix is read for state and its requests given
// out as copies, never counted. From 0.169 a turn opens at its `UserMessage` item, a compaction request is
// its own conversation, and a spawned agent's rollout (forked context or not) is a subagent of the root
// session. See notes/2026-11-30-import-codex.md, notes/2026-12-02-import-codex-0169.md and
// notes/2026-12-07-import-forks.md.

import { basename } from 'node:path'
import { isRecord } from '../../../harness/json-fields.ts'
import type { JsonValue, Usage } from '../../../harness/types.ts'
import { CodexHistory } from './codex-request.ts'
import { type JsonRecord, lineProblem, readJsonRecords } from './lines.ts'
import type { ObservedRequest, ReadOptions, TranscriptEvent, TranscriptReader } from './types.ts'

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined
const count = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined)

/**
 * Normalize a Codex `TokenUsage` (`input_tokens`, `cached_input_tokens`, `output_tokens`,
 * `reasoning_output_tokens`): cached tokens are a part of the input, so uncached is input − cached; a
 * `cache_write_input_tokens`, where a newer Codex records one, is a third disjoint part of the input.
 * Writes are otherwise not reported (undefined: OpenAI's automatic cache bills none).
 */
export function parseCodexUsage(raw: unknown): Usage {
  const usage = isRecord(raw) ? raw : {}
  const input = count(usage.input_tokens) ?? 0
  const cacheRead = count(usage.cached_input_tokens)
  const cacheWrite = count(usage.cache_write_input_tokens)
  const reasoning = count(usage.reasoning_output_tokens)
  return {
    input,
    uncached: input - (cacheRead ?? 0) - (cacheWrite ?? 0),
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    output: count(usage.output_tokens) ?? 0,
    ...(reasoning !== undefined ? { reasoning } : {}),
    raw: (raw ?? null) as JsonValue,
  }
}

/** The usage between two running totals, field by field (for a `token_count` without `last_token_usage`). */
function difference(total: Record<string, unknown>, previous: Record<string, unknown> | undefined) {
  const result: Record<string, number> = {}
  for (const [name, value] of Object.entries(total))
    if (typeof value === 'number') result[name] = value - (count(previous?.[name]) ?? 0)
  return result
}

/** `turn_context` settings whose change is a `config-change`. */
const SETTINGS = ['effort', 'summary', 'approval_policy', 'sandbox_policy'] as const
/** `turn_context` fields whose change is a `system-change`. */
const INSTRUCTIONS = ['base_instructions', 'user_instructions', 'developer_instructions'] as const

/**
 * Consecutive lines of a fork's copied history are written in one burst at the fork; a line more than
 * this after the one before it is the child's own.
 */
export const FORK_BURST_MS = 1000

/** A setting's value as a short comparable text. */
const settingText = (value: unknown): string | undefined =>
  value === undefined || value === null
    ? undefined
    : typeof value === 'string'
      ? value
      : JSON.stringify(value)

/** What a request changed in the reading's state, to undo when it turns out to be a compaction's. */
interface ReadingState {
  events: TranscriptEvent[]
  started: boolean
  requestModel: string | undefined
  turn: number
  step: number
  turnOpened: boolean
}

/**
 * A request held back by one record: Codex 0.169 writes a compaction's `compacted` record (naming the
 * response it came from) right after the compaction request's `token_count`.
 */
interface HeldRequest {
  request: ObservedRequest
  responseId: string
  /** The state before the request, restored if it was a compaction's. */
  before: ReadingState
  /** How many history items the request sent (a compaction's request sent those, and its instruction). */
  inputItems: number
}

/**
 * The reading of one Codex rollout, line by line: `accept` takes each JSON object and returns the
 * requests it completes, if any, and `finish` the one held at the end. A rollout is one session (or a
 * spawned agent's conversation of its root session); memory holds its settings and the previous running
 * total.
 */
export class CodexReading {
  private readonly file: string
  private readonly options: ReadOptions
  private session: string
  /** The rollout's own thread id (a spawned agent's session is named after its root). */
  private threadId: string | undefined
  private parent: string | undefined
  /** The thread a fork child copied its history from. */
  private forkedFrom: string | undefined
  /**
   * The ordinal of a forked spawned agent's first own record (`subagent_history_start_ordinal`): records
   * numbered before it are the copy.
   */
  private historyStart: number | undefined
  /** A spawned agent's conversation is a subagent of its root session. */
  private kind: ObservedRequest['kind']
  /** `codex/<cli_version>`, from the header. */
  private agent: string | undefined
  /** What the requests send as `prompt_cache_key`: the root session's id (a spawned agent sends its root's). */
  private cacheKey: string | undefined
  private metaSeen = false
  /** `replaying` from a fork child's header to the end of the history it copied. */
  private fork: 'none' | 'replaying' | 'done' = 'none'
  /** When the child's header says it started (ms). */
  private forkStart = Number.NaN
  /** The time of the line before (ms), for the end of the copied burst. */
  private previousTime = Number.NaN
  /** Whether a request (own, or copied from the parent) preceded; before the first, nothing can break. */
  private started = false
  /** The model of the latest `turn_context`. */
  private model: string | undefined
  /** The model of the previous request. */
  private requestModel: string | undefined
  private readonly settings = new Map<string, string>()
  private readonly instructions = new Map<string, string>()
  private baseInstructions: string | undefined
  private dynamicTools: string | undefined
  private previousTotal: Record<string, unknown> | undefined
  private turn = 0
  private step = 0
  private turnOpened = false
  private events: TranscriptEvent[] = []
  /** The input items so far, for each request's rebuilt body. */
  private readonly history = new CodexHistory()
  /** The base instructions as last recorded (a `turn_context`'s, else the header's). */
  private currentInstructions: string | undefined
  /** The response id of the latest `token_usage_record` (0.169), and the items its request sent. */
  private responseId: string | undefined
  private responseInput: number | undefined
  private held: HeldRequest | undefined
  /** Compactions so far, numbered in order as a capture of the session numbers them. */
  private compactions = 0

  /**
   * `standInInstructions` rebuild bodies for a rollout that recorded no instructions (measuring the
   * simulator on old rollouts); `readCodex` passes none, so such a rollout's requests carry no body.
   */
  constructor(file: string, options: ReadOptions, rebuild: { standInInstructions?: string } = {}) {
    this.file = file
    this.options = options
    this.currentInstructions = rebuild.standInInstructions
    this.session = basename(file).replace(/\.jsonl(\.zstd?)?$/, '')
  }

  accept(record: JsonRecord): ObservedRequest[] {
    const value = record.value
    const payload = isRecord(value.payload) ? value.payload : {}
    const time = Date.parse(text(value.timestamp) ?? '')
    if (this.fork === 'replaying') this.followFork(value, payload, time)
    if (Number.isFinite(time)) this.previousTime = time
    switch (value.type) {
      case 'session_meta':
        this.sessionMeta(payload)
        return []
      case 'turn_context':
        this.turnContext(payload)
        return []
      case 'compacted': {
        const compaction = this.compactionOf(payload)
        this.addEvent({ kind: 'compaction', detail: 'compacted' })
        this.history.compact(payload)
        return compaction
      }
      case 'response_item':
        this.history.add(payload)
        return []
      case 'token_usage_record':
        this.responseId = text(payload.response_id)
        this.responseInput = this.history.responseRecorded()
        return []
      case 'event_msg':
        return this.eventMessage(record, payload)
      default:
        return []
    }
  }

  /** The request held at the end of the file, if any. */
  finish(): ObservedRequest[] {
    return this.release()
  }

  /** Release the held request as it stands. */
  private release(): ObservedRequest[] {
    const held = this.held
    this.held = undefined
    return held === undefined ? [] : [held.request]
  }

  /**
   * The held request, when a `compacted` record names its response: a compaction's, in a conversation of
   * its own (`<session>.compaction-<n>`), sent with the history before its response; the session's state
   * goes back to before it.
   */
  private compactionOf(payload: Record<string, unknown>): ObservedRequest[] {
    const held = this.held
    const responseId = text(payload.compaction_response_id)
    if (held === undefined || responseId === undefined || responseId !== held.responseId)
      return this.release()
    this.held = undefined
    const { before } = held
    this.events = before.events
    this.started = before.started
    this.requestModel = before.requestModel
    this.turn = before.turn
    this.step = before.step
    this.turnOpened = before.turnOpened
    this.compactions += 1
    const { request } = held
    const body = this.history.compactionRequest(held.inputItems, {
      instructions: this.currentInstructions,
      model: request.model,
      conversation: this.cacheKey ?? this.session,
      ...optional('effort', this.settings.get('effort')),
      ...optional('summary', this.settings.get('summary')),
    })
    const { turn: _turn, step: _step, request: _body, ...rest } = request
    return [
      {
        ...rest,
        session: `${this.session}.compaction-${this.compactions}`,
        parent: this.parent ?? this.session,
        kind: 'compaction',
        events: [],
        turn: 1,
        step: 1,
        ...(body !== undefined ? { request: body } : {}),
      },
    ]
  }

  /**
   * Whether the fork's copied history goes on. A spawned agent's header numbers its first own record
   * (0.169 on: every record carries its `ordinal`). Without that: a copied line was written within the
   * burst at the fork (Codex rewrites copied timestamps to the moment it writes them) or keeps a time from
   * before the child's start (a copy that kept them); the child's own header, repeated, ends it too.
   */
  private followFork(value: Record<string, unknown>, payload: Record<string, unknown>, time: number): void {
    const ordinal = count(value.ordinal)
    const ownHeader = value.type === 'session_meta' && text(payload.id) === this.threadId
    const copied =
      this.historyStart !== undefined && ordinal !== undefined
        ? ordinal < this.historyStart
        : !ownHeader &&
          (!Number.isFinite(time) ||
            time < this.forkStart ||
            !Number.isFinite(this.previousTime) ||
            time - this.previousTime <= FORK_BURST_MS)
    if (copied) return
    this.fork = 'done'
    // The child goes on from the parent's last request: what the copy did before it is the parent's.
    this.events = [{ kind: 'resume', detail: `forked from ${this.forkedFrom ?? 'its parent'}` }]
  }

  /** Add an event to the next request; a compaction or a resume shown twice counts once. */
  private addEvent(event: TranscriptEvent): void {
    if (!this.started) return
    const once = event.kind === 'compaction' || event.kind === 'resume'
    if (once && this.events.some((each) => each.kind === event.kind)) return
    this.events.push(event)
  }

  private sessionMeta(payload: Record<string, unknown>): void {
    const id = text(payload.id)
    const instructions = settingText(
      isRecord(payload.base_instructions) ? payload.base_instructions.text : payload.instructions,
    )
    const tools = settingText(payload.dynamic_tools)
    if (!this.metaSeen) {
      this.metaSeen = true
      if (id !== undefined) {
        this.session = id
        this.threadId = id
      }
      const version = text(payload.cli_version)
      if (version !== undefined) this.agent = `codex/${version}`
      const spawn =
        isRecord(payload.source) && isRecord(payload.source.subagent) ? payload.source.subagent : {}
      const spawnedBy = isRecord(spawn.thread_spawn) ? text(spawn.thread_spawn.parent_thread_id) : undefined
      const forkedFrom = text(payload.forked_from_id)
      if (spawnedBy !== undefined) {
        // A spawned agent, its parent's history forked into it (`fork_context`) or not, is a conversation
        // of the root session (0.169 names it in `session_id`), as a capture names it:
        // `<root>.subagent-<its thread id>`; it sends the root's id as its cache key.
        const root = text(payload.session_id) ?? spawnedBy
        this.parent = root
        this.kind = 'subagent'
        this.cacheKey = root
        this.session = `${root}.subagent-${this.session}`
      }
      const parent = forkedFrom ?? spawnedBy
      if (parent !== undefined && this.parent === undefined) this.parent = parent
      if (forkedFrom !== undefined) {
        this.fork = 'replaying'
        this.forkedFrom = forkedFrom
        this.forkStart = Date.parse(text(payload.timestamp) ?? '')
        this.historyStart = count(payload.subagent_history_start_ordinal)
      }
    } else if (
      this.fork !== 'replaying' &&
      (id === undefined || id === this.session || this.session.endsWith(`.subagent-${id}`))
    ) {
      // The header again, later in the file: a new process took the session up.
      this.addEvent({ kind: 'resume', detail: 'session header written again' })
      if (
        instructions !== undefined &&
        this.baseInstructions !== undefined &&
        instructions !== this.baseInstructions
      )
        this.addEvent({ kind: 'system-change', detail: 'base instructions changed' })
      if (tools !== undefined && this.dynamicTools !== undefined && tools !== this.dynamicTools)
        this.addEvent({ kind: 'tools-change', detail: 'dynamic tools changed' })
    }
    if (instructions !== undefined) this.baseInstructions = instructions
    const instructionsText = isRecord(payload.base_instructions)
      ? text(payload.base_instructions.text)
      : text(payload.instructions)
    if (instructionsText !== undefined) this.currentInstructions = instructionsText
    if (tools !== undefined) this.dynamicTools = tools
  }

  private turnContext(payload: Record<string, unknown>): void {
    const model = text(payload.model)
    if (model !== undefined) this.model = model
    const instructions = text(payload.base_instructions)
    if (instructions !== undefined) this.currentInstructions = instructions
    for (const name of SETTINGS) {
      const now = settingText(payload[name])
      const before = this.settings.get(name)
      if (now === undefined) continue
      if (before !== undefined && now !== before)
        this.addEvent({ kind: 'config-change', detail: `${name} ${before} → ${now}` })
      this.settings.set(name, now)
    }
    for (const name of INSTRUCTIONS) {
      const now = settingText(payload[name])
      const before = this.instructions.get(name)
      if (now === undefined) continue
      if (before !== undefined && now !== before)
        this.addEvent({ kind: 'system-change', detail: `${name} changed` })
      this.instructions.set(name, now)
    }
  }

  private eventMessage(record: JsonRecord, payload: Record<string, unknown>): ObservedRequest[] {
    switch (payload.type) {
      case 'user_message':
        this.turnOpened = true
        return []
      case 'item_completed':
        // From 0.169 the prompt typed is a `UserMessage` item (no `user_message` event).
        if (isRecord(payload.item) && payload.item.type === 'UserMessage') this.turnOpened = true
        return []
      case 'thread_settings_applied': {
        // The settings the next requests go with, written before the turn's `turn_context`: the request
        // that compacts before a turn is already on the turn's model.
        const model = isRecord(payload.thread_settings) ? text(payload.thread_settings.model) : undefined
        if (model !== undefined) this.model = model
        return []
      }
      case 'context_compacted':
        this.addEvent({ kind: 'compaction', detail: 'context compacted' })
        return []
      case 'token_count':
        return this.tokenCount(record, payload)
      default:
        return []
    }
  }

  private tokenCount(record: JsonRecord, payload: Record<string, unknown>): ObservedRequest[] {
    // `info` is null on an event that only updates rate limits.
    if (!isRecord(payload.info)) return []
    const total = isRecord(payload.info.total_token_usage) ? payload.info.total_token_usage : undefined
    const last = isRecord(payload.info.last_token_usage) ? payload.info.last_token_usage : undefined
    // Codex writes the same running total twice at times: a total that did not move is no new response.
    if (total !== undefined && this.previousTotal !== undefined && sameCounts(total, this.previousTotal))
      return []
    const raw = last ?? (total !== undefined ? difference(total, this.previousTotal) : undefined)
    if (raw === undefined) {
      lineProblem(
        this.file,
        record.line,
        'a token_count without last_token_usage or total_token_usage',
        this.options,
      )
      return []
    }
    if (total !== undefined) this.previousTotal = total
    this.history.count(count(raw.reasoning_output_tokens) ?? 0)
    const model = this.model ?? 'unknown'
    const time = text(record.value.timestamp)
    if (this.fork === 'replaying') {
      // The parent's request, copied: it moves the state on and is what the child's first request goes
      // on from, but was counted in the parent's file.
      this.started = true
      this.requestModel = model
      this.responseId = undefined
      this.responseInput = undefined
      if (time === undefined) return []
      return [
        {
          ...this.requestOf(record.where, model, time, raw),
          events: [],
          copied: this.forkedFrom !== undefined ? { from: this.forkedFrom } : {},
        },
      ]
    }
    if (time === undefined) {
      lineProblem(this.file, record.line, 'a token_count without a timestamp', this.options)
      return []
    }
    const released = this.release()
    const before: ReadingState = {
      events: [...this.events],
      started: this.started,
      requestModel: this.requestModel,
      turn: this.turn,
      step: this.step,
      turnOpened: this.turnOpened,
    }
    const responseId = this.responseId
    const inputItems = this.responseInput
    this.responseId = undefined
    this.responseInput = undefined
    if (this.started && this.requestModel !== undefined && this.requestModel !== model)
      this.events.push({ kind: 'model-switch', from: this.requestModel, to: model })
    if (this.turnOpened) {
      this.turn += 1
      this.step = 0
      this.turnOpened = false
    }
    this.step += 1
    const body = this.history.request(
      {
        instructions: this.currentInstructions,
        model,
        conversation: this.cacheKey ?? this.session,
        ...optional('effort', this.settings.get('effort')),
        ...optional('summary', this.settings.get('summary')),
      },
      inputItems,
    )
    const request: ObservedRequest = {
      ...this.requestOf(record.where, model, time, raw),
      events: this.events,
      // Turns are known once a user message opened one.
      ...(this.turn > 0 ? { turn: this.turn, step: this.step } : {}),
      ...(responseId !== undefined ? { requestId: responseId } : {}),
      ...(body !== undefined ? { request: body } : {}),
    }
    this.started = true
    this.requestModel = model
    this.events = []
    if (responseId === undefined) return [...released, request]
    // A response id (0.169): the next record may say the request was a compaction's.
    this.held = { request, responseId, before, inputItems: inputItems ?? 0 }
    return released
  }

  /** What every request of the rollout says: where it is, its session, agent, model, time and usage. */
  private requestOf(
    where: string,
    model: string,
    time: string,
    raw: unknown,
  ): Omit<ObservedRequest, 'events'> {
    return {
      format: 'codex',
      source: where,
      session: this.session,
      ...(this.parent !== undefined ? { parent: this.parent } : {}),
      ...(this.kind !== undefined ? { kind: this.kind } : {}),
      ...(this.agent !== undefined ? { agent: this.agent } : {}),
      provider: 'openai-responses',
      model,
      time,
      usage: parseCodexUsage(raw),
    }
  }
}

/** `{ [name]: value }` when the value is known, for spreading into an object with optional fields. */
const optional = <Name extends string>(name: Name, value: string | undefined) =>
  (value !== undefined ? { [name]: value } : {}) as { [key in Name]?: string }

/** Whether two `TokenUsage` objects hold the same counts. */
function sameCounts(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const names = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const name of names) if (a[name] !== b[name]) return false
  return true
}

/** The requests of a Codex rollout, in file order. */
export const readCodex: TranscriptReader = async function* (file, options) {
  const reading = new CodexReading(file, options)
  for await (const record of readJsonRecords(file, options)) yield* reading.accept(record)
  yield* reading.finish()
}
