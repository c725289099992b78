// The session projection: folds the event log into the surface (the ordered live nodes of the derived
// history), the latest request header and context, and the per-node message projection. Deterministic
// from the events alone; `apply` validates each event before it changes anything.

import { CachelabError } from './errors.ts'
import {
  type DerivedMessage,
  type HeaderReason,
  type Message,
  type ProviderId,
  READABLE_FORMAT_VERSIONS,
  type RequestHeader,
  type Route,
  routeOf,
  type Seq,
  type SessionEvent,
  type SessionEventType,
  type SurfaceEventType,
  type UserMessage,
} from './types.ts'

/** The surface event types, for validation. */
export const SURFACE_EVENT_TYPES: ReadonlySet<SessionEventType> = new Set<SurfaceEventType>([
  'user/message',
  'system/message',
  'developer/message',
  'assistant/message',
  'tool/result',
])

/** Every event type this version reads. */
export const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set<SessionEventType>([
  'session/start',
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'user/message',
  'system/message',
  'developer/message',
  'assistant/message',
  'assistant/attempt',
  'tool/call',
  'tool/result',
  'request/header',
  'request/context',
  'compaction/start',
  'compaction/summary',
  'compaction/prune',
  'compaction/end',
  'image/offload',
  'session/end-seed',
])

/** The latest `request/header` event, folded. */
export interface HeaderState {
  seq: Seq
  header: RequestHeader
  reason: HeaderReason
}

/** The latest `request/context` event, folded. */
export interface ContextState {
  seq: Seq
  provider: ProviderId
  model: string
  route: Route
}

/** Text that replaces an offloaded image in the derived history. */
export function offloadedImageText(imageId: string): string {
  return `[image ${imageId} omitted to fit request image limits]`
}

/**
 * The fold of a session log. `apply` is the only mutator; every view is a function of the events
 * applied so far, so a projection rebuilt from a log prefix answers exactly as the live one did.
 */
export class SessionProjection {
  readonly sessionId: string
  private readonly events: SessionEvent[] = []
  private readonly live: Seq[] = []
  private readonly projected = new Map<Seq, DerivedMessage | null>()
  private readonly offloaded = new Map<Seq, Set<string>>()
  /** Live system nodes and live user messages with images, in surface order (kept so a step need not scan the surface). */
  private liveSystem: Seq[] = []
  private liveWithImages: Seq[] = []
  /** The derived messages of the live surface, kept up to date on append and rebuilt after a rewrite. */
  private derived: DerivedMessage[] | undefined = []
  /** Leading derived messages that are still the ones `derivedMessages` last returned. */
  private handed = 0
  private headerState: HeaderState | undefined
  private contextState: ContextState | undefined
  private generation = 0
  private contentGen = 0

  private constructor(sessionId: string) {
    this.sessionId = sessionId
  }

  /** An empty projection for a new session; the first applied event must be its `session/start`. */
  static empty(sessionId: string): SessionProjection {
    return new SessionProjection(sessionId)
  }

  /** Fold a whole log. Throws on the first invalid event. */
  static fromEvents(events: readonly SessionEvent[]): SessionProjection {
    const first = events[0]
    if (first === undefined || first.type !== 'session/start') {
      throw new CachelabError('log', 'a session log must begin with session/start')
    }
    const projection = new SessionProjection(first.data.sessionId)
    for (const event of events) projection.apply(event)
    return projection
  }

  /** The events applied so far (read-only view). */
  get log(): readonly SessionEvent[] {
    return this.events
  }

  /** The next seq the log will assign. */
  get nextSeq(): Seq {
    return this.events.length
  }

  /** Virtual time of the latest event (0 for an empty log). */
  get lastTime(): number {
    return this.events.at(-1)?.time ?? 0
  }

  /** Count of committed surface replacements; a change starts a new request series. */
  get replaceGeneration(): number {
    return this.generation
  }

  /** Count of replacements plus message-projection changes (image offload). */
  get contentGeneration(): number {
    return this.contentGen
  }

  /** The live surface nodes in order. */
  get surface(): readonly Seq[] {
    return this.live
  }

  get header(): HeaderState | undefined {
    return this.headerState
  }

  get context(): ContextState | undefined {
    return this.contextState
  }

  /** The event at `seq`. */
  event(seq: Seq): SessionEvent {
    const event = this.events[seq]
    if (event === undefined) throw new CachelabError('invariant', `no event at seq ${seq}`)
    return event
  }

  /** Forget the derived messages after a change that is not an append: none is kept as handed out. */
  private dropDerived(): void {
    this.derived = undefined
    this.handed = 0
  }

  /**
   * The derived messages, and how many leading ones are those the previous call of this method returned,
   * the same objects (appends keep them; any other change of the surface keeps none).
   */
  derivedMessages(): { messages: DerivedMessage[]; unchanged: number } {
    const messages = this.messages()
    const unchanged = Math.min(this.handed, messages.length)
    this.handed = messages.length
    return { messages, unchanged }
  }

  /** The derived messages of the live surface, in order, with provenance (empty projections skipped). */
  messages(): DerivedMessage[] {
    if (this.derived === undefined) {
      const out: DerivedMessage[] = []
      for (const seq of this.live) {
        const message = this.projectNode(seq)
        if (message !== null) out.push(message)
      }
      this.derived = out
    }
    return this.derived.slice()
  }

  /** Live `system/message` nodes in surface order, with their text. */
  systemNodes(): Array<{ seq: Seq; text: string }> {
    return this.liveSystem.map((seq) => {
      const event = this.event(seq)
      return { seq, text: event.type === 'system/message' ? event.data.message.text : '' }
    })
  }

  /** Images of the live surface that are still sent, oldest first. */
  liveImages(): Array<{ seq: Seq; id: string }> {
    const images: Array<{ seq: Seq; id: string }> = []
    for (const seq of this.liveWithImages) {
      const event = this.event(seq)
      if (event.type !== 'user/message') continue
      const offloaded = this.offloaded.get(seq)
      for (const block of event.data.message.content) {
        if (block.type === 'image' && offloaded?.has(block.id) !== true) images.push({ seq, id: block.id })
      }
    }
    return images
  }

  /** Validate `event` against the log so far, then fold it in. */
  apply(event: SessionEvent): void {
    this.validate(event)
    this.events.push(event)
    switch (event.type) {
      case 'request/header':
        this.headerState = { seq: event.seq, header: event.data.header, reason: event.data.reason }
        break
      case 'request/context':
        this.contextState = {
          seq: event.seq,
          provider: event.data.provider,
          model: event.data.model,
          route: routeOf(event.data.systemPromptUpdate),
        }
        break
      case 'image/offload':
        for (const target of event.data.targets) {
          const set = this.offloaded.get(target.seq) ?? new Set<string>()
          for (const id of target.imageIds) set.add(id)
          this.offloaded.set(target.seq, set)
          this.projected.delete(target.seq)
          this.dropDerived()
        }
        this.contentGen += 1
        break
      default:
        break
    }
    const op = event.surfaceOp
    if (op === undefined) return
    if (op === 'append') {
      this.live.push(event.seq)
      if (this.derived !== undefined) {
        const message = this.projectNode(event.seq)
        if (message !== null) this.derived.push(message)
      }
      if (event.type === 'system/message') this.liveSystem.push(event.seq)
      if (hasImages(event)) this.liveWithImages.push(event.seq)
      return
    }
    const start = this.live.indexOf(op.startSeq)
    const end = this.live.indexOf(op.endSeq)
    this.live.splice(start, end - start + 1, event.seq)
    this.dropDerived()
    this.liveSystem = this.live.filter((seq) => this.event(seq).type === 'system/message')
    this.liveWithImages = this.live.filter((seq) => hasImages(this.event(seq)))
    this.generation += 1
    this.contentGen += 1
  }

  private validate(event: SessionEvent): void {
    const where = `event seq ${event.seq} (${event.type})`
    if (!KNOWN_EVENT_TYPES.has(event.type) && event.ignorable !== true) {
      throw new CachelabError('log', `${where}: unknown event type (not marked ignorable)`)
    }
    if (event.seq !== this.events.length) {
      throw new CachelabError(
        'log',
        `${where}: seq must be ${this.events.length} (seqs are contiguous from 0)`,
      )
    }
    if (!Number.isFinite(event.time) || event.time < this.lastTime) {
      throw new CachelabError('log', `${where}: time ${event.time} goes backwards from ${this.lastTime}`)
    }
    if (this.events.length === 0) {
      if (event.type !== 'session/start')
        throw new CachelabError('log', `${where}: the first event must be session/start`)
      if (!READABLE_FORMAT_VERSIONS.includes(event.data.formatVersion)) {
        throw new CachelabError(
          'log',
          `${where}: format version ${event.data.formatVersion} is not one of ${READABLE_FORMAT_VERSIONS.join(', ')}`,
        )
      }
    } else if (event.type === 'session/start') {
      throw new CachelabError('log', `${where}: session/start may only be the first event`)
    }
    if (event.type === 'developer/message' && event.data.headerSeq !== undefined) {
      const named = this.events[event.data.headerSeq]
      if (named?.type !== 'request/header')
        throw new CachelabError(
          'log',
          `${where}: headerSeq ${event.data.headerSeq} is not an earlier request/header`,
        )
    }
    const isSurface = SURFACE_EVENT_TYPES.has(event.type)
    if (isSurface && event.surfaceOp === undefined)
      throw new CachelabError('log', `${where}: surface event without surfaceOp`)
    if (!isSurface && (event.surfaceOp !== undefined || event.sourceEventSeqs !== undefined)) {
      throw new CachelabError('log', `${where}: only surface events carry surfaceOp or sourceEventSeqs`)
    }
    const op = event.surfaceOp
    if (op === undefined || op === 'append') return
    const start = this.live.indexOf(op.startSeq)
    const end = this.live.indexOf(op.endSeq)
    if (start < 0 || end < 0 || end < start) {
      throw new CachelabError(
        'log',
        `${where}: replace range ${op.startSeq}..${op.endSeq} is not a live surface range`,
      )
    }
    const shadowed = this.live.slice(start, end + 1)
    const sources = new Set(event.sourceEventSeqs ?? [])
    const missing = shadowed.filter((seq) => !sources.has(seq))
    if (missing.length > 0) {
      throw new CachelabError(
        'log',
        `${where}: sourceEventSeqs must include every shadowed node (missing ${missing.join(', ')})`,
      )
    }
    const head = this.live[0]
    if (start === 0 && head !== undefined && this.event(head).type === 'system/message') {
      const exact = event.type === 'system/message' && end === 0
      if (!exact)
        throw new CachelabError('log', `${where}: only a system/message may replace the system head node`)
    }
  }

  private projectNode(seq: Seq): DerivedMessage | null {
    const cached = this.projected.get(seq)
    if (cached !== undefined) return cached
    const message = projectEvent(this.event(seq), this.offloaded.get(seq))
    const derived: DerivedMessage | null =
      message === null ? null : Object.freeze({ message, sourceSeqs: [seq], origin: 'surface' as const })
    this.projected.set(seq, derived)
    return derived
  }
}

/**
 * The message a surface event contributes to the derived history, or null when it contributes none
 * (an empty system node keeps its position but sends nothing; an empty assistant message only hosts usage).
 */
export function projectEvent(event: SessionEvent, offloadedImages?: ReadonlySet<string>): Message | null {
  switch (event.type) {
    case 'user/message':
      return offloadedImages === undefined
        ? event.data.message
        : withoutImages(event.data.message, offloadedImages)
    case 'system/message':
      return event.data.message.text === '' ? null : event.data.message
    case 'developer/message':
      return event.data.message
    case 'assistant/message':
      return event.data.message.content.length === 0 ? null : event.data.message
    case 'tool/result':
      return event.data.message
    default:
      return null
  }
}

function hasImages(event: SessionEvent): boolean {
  return event.type === 'user/message' && event.data.message.content.some((block) => block.type === 'image')
}

function withoutImages(message: UserMessage, offloaded: ReadonlySet<string>): UserMessage {
  return {
    role: 'user',
    content: message.content.map((block) =>
      block.type === 'image' && offloaded.has(block.id)
        ? { type: 'text', text: offloadedImageText(block.id) }
        : block,
    ),
  }
}
