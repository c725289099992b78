// Claude Code session files (`~/.claude/projects/<project>/<sessionId>.jsonl`; subagents in
// `<sessionId>/subagents/agent-<agentId>.jsonl`) read into the requests they record. Claude Code writes one
// API response as one assistant line per content block, each repeating the usage with output as a running
// total: lines are grouped by message id, the first line is the request's source, the last one's usage
// counts. Sidechains and subagents are sessions of their own. A `--fork-session` file repeats its
// parent's entries, each naming the session that made it (`requestSessionId`): those are given out as
// copies. See notes/2026-11-30-import-claude-code.md and notes/2026-12-07-import-forks.md.

import { isRecord } from '../../../harness/json-fields.ts'
import { parseAnthropicUsage } from '../../../providers/anthropic-usage.ts'
import { JsonPicker } from './json-pick.ts'
import { type JsonRecord, lineProblem, readJsonRecordBatches } from './lines.ts'
import type { ObservedRequest, ReadOptions, TranscriptEvent, TranscriptReader } from './types.ts'

/** What the reader knows of one session of the file (the main one, a sidechain or a subagent). */
interface SessionState {
  id: string
  /** The main session, for a sidechain or subagent. */
  parent?: string
  /** Whether a request of it has been read; before the first, nothing can break a cache. */
  started: boolean
  /** The model of its previous request. */
  model?: string
  turn: number
  step: number
  /** A user line opened a turn that no request has counted yet. */
  turnOpened: boolean
  /** What happened since its previous request. */
  events: TranscriptEvent[]
  /** The key of its latest request, whose lines may still follow. */
  openKey?: string
  /** The provider's id of its latest request, for the running total written after it. */
  lastRequestId?: string
  /** The session its copied requests came from, until its own first request (a fork's parent). */
  copiedFrom?: string
}

/** A request whose lines may still follow, held until its session moves on or the file ends. */
interface PendingRequest {
  key: string
  request: ObservedRequest
  closed: boolean
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined
const count = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined)

/** Line types that carry a session's content (the rest are titles, snapshots and UI state). */
const CONTENT_TYPES = new Set(['user', 'assistant', 'system', 'attachment'])

/**
 * The reading of one Claude Code file, line by line: `accept` takes each JSON object and returns the
 * requests that are complete, in file order of their first line; `finish` returns the rest. Memory holds
 * the requests still open (one per session) and those behind them, a set of the keys already given out
 * and the sidechain of each sidechain line.
 */
export class ClaudeCodeReading {
  private readonly file: string
  private readonly options: ReadOptions
  private readonly sessions = new Map<string, SessionState>()
  /** The sidechain session of each inline sidechain line, by uuid (its children name it as parent). */
  private readonly sidechainOf = new Map<string, string>()
  private readonly pending: PendingRequest[] = []
  private readonly open = new Map<string, PendingRequest>()
  private readonly given = new Set<string>()
  /** The Claude Code version of the latest line that named one. */
  private version: string | undefined

  constructor(file: string, options: ReadOptions) {
    this.file = file
    this.options = options
  }

  accept(record: JsonRecord): ObservedRequest[] {
    const value = record.value
    const type = value.type
    // Every line with a session is placed, so a sidechain chain stays whole through lines of other types.
    const session = this.sessionOf(value)
    if (type === 'cost-state') this.costState(record)
    // `summary` lines title other sessions (their leafUuid is not in the file): nothing happens here.
    if (session === undefined || typeof type !== 'string' || !CONTENT_TYPES.has(type)) return []
    this.noteProcess(value, session)
    switch (type) {
      case 'assistant':
        return this.assistant(record, session)
      case 'user':
        this.user(value, session)
        return []
      case 'system':
        this.system(value, session)
        return []
      case 'attachment':
        this.attachment(value, session)
        return []
      default:
        return []
    }
  }

  /**
   * Claude Code's running total of a session (`cost-state`: its cost and tokens per model, every request
   * it made counted, subagents and compaction summaries included), for the caller to set beside the
   * requests the transcript recorded.
   */
  private costState(record: JsonRecord): void {
    const { value } = record
    const session = text(value.sessionId)
    if (session === undefined || typeof value.totalCostUSD !== 'number') return
    const tokens = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }
    for (const usage of Object.values(isRecord(value.modelUsage) ? value.modelUsage : {})) {
      if (!isRecord(usage)) continue
      const count = (field: string) => (typeof usage[field] === 'number' ? (usage[field] as number) : 0)
      tokens.input += count('inputTokens')
      tokens.cacheRead += count('cacheReadInputTokens')
      tokens.cacheWrite += count('cacheCreationInputTokens')
      tokens.output += count('outputTokens')
    }
    const after = this.sessions.get(session)?.lastRequestId
    this.options.onAgentTotal?.({
      session,
      where: record.where,
      ...(after !== undefined ? { after } : {}),
      costUsd: value.totalCostUSD,
      tokens,
    })
  }

  /** The requests still held: the file has ended, so none has more lines to come. */
  finish(): ObservedRequest[] {
    for (const pending of this.pending) pending.closed = true
    return this.flush()
  }

  private session(id: string, parent?: string): SessionState {
    let session = this.sessions.get(id)
    if (session === undefined) {
      session = {
        id,
        ...(parent !== undefined ? { parent } : {}),
        started: false,
        turn: 0,
        step: 0,
        turnOpened: false,
        events: [],
      }
      this.sessions.set(id, session)
    }
    return session
  }

  /**
   * The session of a line: a subagent's lines carry its `agentId`; an inline sidechain (older versions)
   * is the chain of `isSidechain` lines from a root, followed through `parentUuid`.
   */
  private sessionOf(value: Record<string, unknown>): SessionState | undefined {
    const sessionId = text(value.sessionId)
    if (sessionId === undefined) return undefined
    const agentId = text(value.agentId)
    // Named as a capture names the same conversation: the session id, then the subagent's id.
    if (agentId !== undefined) return this.session(`${sessionId}.subagent-${agentId}`, sessionId)
    if (value.isSidechain !== true) return this.session(sessionId)
    const uuid = text(value.uuid)
    const parentUuid = text(value.parentUuid)
    const id =
      (parentUuid !== undefined ? this.sidechainOf.get(parentUuid) : undefined) ??
      `${sessionId}.sidechain-${uuid ?? 'unknown'}`
    if (uuid !== undefined) this.sidechainOf.set(uuid, id)
    return this.session(id, sessionId)
  }

  /**
   * Add an event to a session's next request. Before its first request there is nothing to explain. One
   * compaction writes a boundary and a summary, one resume can show in several ways: each counts once.
   */
  private addEvent(session: SessionState, event: TranscriptEvent): void {
    if (!session.started) return
    const once = event.kind === 'compaction' || event.kind === 'resume'
    const shown = JSON.stringify(event)
    if (session.events.some((each) => (once ? each.kind === event.kind : JSON.stringify(each) === shown)))
      return
    session.events.push(event)
  }

  /**
   * A response that calls ToolSearch loads deferred tools' schemas into the request after it: the tool
   * list changes under the cached prefix (every real sample that calls it rewrites its next request).
   */
  private noteToolSearch(message: Record<string, unknown>, session: SessionState): void {
    const content = Array.isArray(message.content) ? message.content : []
    if (content.some((block) => isRecord(block) && block.type === 'tool_use' && block.name === 'ToolSearch'))
      this.addEvent(session, { kind: 'tools-change', detail: 'ToolSearch loaded deferred tools' })
  }

  /**
   * Signs of a new Claude Code process continuing the file: a different version than the line before,
   * or a new root (`parentUuid: null`) in a main chain that already had requests. A changed `cwd` is not
   * one (the agent changes directory within a process).
   */
  private noteProcess(value: Record<string, unknown>, session: SessionState): void {
    const version = text(value.version)
    if (version !== undefined) {
      if (this.version !== undefined && version !== this.version)
        for (const each of this.sessions.values())
          this.addEvent(each, { kind: 'resume', detail: `Claude Code ${this.version} → ${version}` })
      this.version = version
    }
    const newRoot =
      'parentUuid' in value &&
      value.parentUuid === null &&
      value.isSidechain !== true &&
      text(value.agentId) === undefined &&
      value.isCompactSummary !== true &&
      value.subtype !== 'compact_boundary' &&
      value.subtype !== 'microcompact_boundary'
    if (newRoot) this.addEvent(session, { kind: 'resume', detail: 'a new conversation root' })
  }

  private user(value: Record<string, unknown>, session: SessionState): void {
    if (value.isCompactSummary === true) {
      this.addEvent(session, { kind: 'compaction', detail: 'compact summary' })
      return
    }
    if (value.isMeta === true) return
    // A user line opens a turn unless it only carries tool results back.
    const message = isRecord(value.message) ? value.message : {}
    const content = message.content
    const opens =
      typeof content === 'string' ||
      (Array.isArray(content) && content.some((block) => !isRecord(block) || block.type !== 'tool_result'))
    if (opens) session.turnOpened = true
  }

  private system(value: Record<string, unknown>, session: SessionState): void {
    if (value.subtype === 'compact_boundary') {
      const metadata = isRecord(value.compactMetadata) ? value.compactMetadata : {}
      const trigger = text(metadata.trigger)
      const before = count(metadata.preTokens)
      const detail = [trigger, before !== undefined ? `${before} tokens before` : undefined]
        .filter((part) => part !== undefined)
        .join(', ')
      this.addEvent(session, { kind: 'compaction', ...(detail !== '' ? { detail } : {}) })
    } else if (value.subtype === 'microcompact_boundary') {
      const metadata = isRecord(value.microcompactMetadata) ? value.microcompactMetadata : {}
      const saved = count(metadata.tokensSaved)
      this.addEvent(session, {
        kind: 'compaction',
        detail: saved !== undefined ? `microcompact, ${saved} tokens saved` : 'microcompact',
      })
    }
  }

  private attachment(value: Record<string, unknown>, session: SessionState): void {
    const attachment = isRecord(value.attachment) ? value.attachment : {}
    if (attachment.type === 'deferred_tools_delta') {
      const added = Array.isArray(attachment.addedNames) ? attachment.addedNames.length : 0
      const removed = Array.isArray(attachment.removedNames) ? attachment.removedNames.length : 0
      if (added + removed > 0)
        this.addEvent(session, { kind: 'tools-change', detail: `deferred tools +${added} −${removed}` })
    } else if (attachment.hookName === 'SessionStart:resume')
      this.addEvent(session, { kind: 'resume', detail: 'SessionStart:resume' })
  }

  private assistant(record: JsonRecord, session: SessionState): ObservedRequest[] {
    const value = record.value
    const message = isRecord(value.message) ? value.message : undefined
    // Claude Code's own stand-ins (an API error, an interrupted or empty reply) are no API response.
    if (message?.model === '<synthetic>' || value.isApiErrorMessage === true) return []
    const key = text(message?.id) ?? text(value.requestId)
    const usage = message?.usage
    if (message === undefined || key === undefined || !isRecord(usage)) {
      lineProblem(this.file, record.line, 'an assistant line without a message id and usage', this.options)
      return []
    }
    if (this.given.has(key)) return [] // a copy of a request already read (a replayed parent message)
    const open = this.open.get(key)
    if (open !== undefined) {
      // A later block of the same response: its usage is the running total so far, so it replaces.
      open.request.usage = parseAnthropicUsage(usage)
      const requestId = text(value.requestId)
      if (requestId !== undefined) {
        open.request.requestId = requestId
        if (session.openKey === key) session.lastRequestId = requestId
      }
      this.noteToolSearch(message, session)
      return []
    }
    const time = text(value.timestamp)
    if (time === undefined) {
      lineProblem(this.file, record.line, 'an assistant line without a timestamp', this.options)
      return []
    }
    const model = text(message.model) ?? 'unknown'
    if (session.openKey !== undefined) {
      const previous = this.open.get(session.openKey)
      if (previous !== undefined) previous.closed = true
    }
    // A line another session's request wrote (a fork's repeat of its parent's entries) is a copy of it.
    const madeBy = text(value.requestSessionId)
    const copiedFrom = madeBy !== undefined && madeBy !== text(value.sessionId) ? madeBy : undefined
    if (copiedFrom !== undefined) session.copiedFrom = copiedFrom
    else if (session.copiedFrom !== undefined) {
      // The fork's own first request: a new process going on from the parent's last one.
      this.addEvent(session, { kind: 'resume', detail: `forked from ${session.copiedFrom}` })
      delete session.copiedFrom
    }
    if (session.started && session.model !== undefined && session.model !== model)
      session.events.push({ kind: 'model-switch', from: session.model, to: model })
    if (session.turnOpened || session.turn === 0) {
      session.turn += 1
      session.step = 0
      session.turnOpened = false
    }
    session.step += 1
    const requestId = text(value.requestId) ?? key
    const request: ObservedRequest = {
      format: 'claude-code',
      source: record.where,
      session: session.id,
      ...(session.parent !== undefined ? { parent: session.parent } : {}),
      provider: 'anthropic',
      model,
      time,
      usage: parseAnthropicUsage(usage),
      events: session.events,
      turn: session.turn,
      step: session.step,
      requestId,
      ...(copiedFrom !== undefined ? { copied: { from: copiedFrom } } : {}),
    }
    const pending: PendingRequest = { key, request, closed: false }
    this.pending.push(pending)
    this.open.set(key, pending)
    session.openKey = key
    session.lastRequestId = requestId
    session.started = true
    session.model = model
    session.events = []
    this.noteToolSearch(message, session)
    return this.flush()
  }

  /** Give out the requests at the head of the queue that can have no more lines. */
  private flush(): ObservedRequest[] {
    const ready: ObservedRequest[] = []
    while (this.pending[0]?.closed === true) {
      const pending = this.pending.shift() as PendingRequest
      this.open.delete(pending.key)
      this.given.add(pending.key)
      ready.push(pending.request)
    }
    return ready
  }
}

/**
 * The fields of a line the reader reads, and only those are built (json-pick.ts): the tool results, file
 * contents and thinking that make most of a line's bytes are checked as JSON and passed over. A field the
 * reader above reads must be named here; claude-code.test.ts reads every sample both ways.
 */
export const CLAUDE_CODE_FIELDS = new JsonPicker({
  fields: {
    type: 'whole',
    subtype: 'whole',
    sessionId: 'whole',
    agentId: 'whole',
    isSidechain: 'whole',
    uuid: 'whole',
    parentUuid: 'whole',
    version: 'whole',
    timestamp: 'whole',
    requestId: 'whole',
    requestSessionId: 'whole',
    isMeta: 'whole',
    isCompactSummary: 'whole',
    isApiErrorMessage: 'whole',
    compactMetadata: 'whole',
    microcompactMetadata: 'whole',
    totalCostUSD: 'whole',
    modelUsage: 'whole',
    attachment: {
      fields: { type: 'whole', hookName: 'whole', addedNames: 'whole', removedNames: 'whole' },
    },
    message: {
      fields: {
        id: 'whole',
        model: 'whole',
        usage: 'whole',
        // A block's type (a user line of tool results only opens no turn) and a tool call's name.
        content: { each: { fields: { type: 'whole', name: 'whole' } } },
      },
    },
  },
})

/** The requests of a Claude Code session file, in the order of their first line. */
export const readClaudeCode: TranscriptReader = async function* (file, options) {
  const reading = new ClaudeCodeReading(file, options)
  for await (const batch of readJsonRecordBatches(file, options, { pick: CLAUDE_CODE_FIELDS }))
    for (const record of batch) {
      const ready = reading.accept(record)
      if (ready.length > 0) yield* ready
    }
  yield* reading.finish()
}
