// Which conversation a request belongs to, and where it stands in it: the one function the capture, the
// replies and the report use. A session groups requests (the session header, the agent's own session id,
// a conversation key); within it a request joins the conversation whose latest request it continues, and
// one that continues none starts a conversation of its own, with a kind (`main`, `subagent`, `side`,
// `compaction`) read off the wire. Requests with no session at all are told apart by continuation alone.
// See notes/2026-12-01-conversations.md for the rule and each agent's cases.

import { looksLikeSecret } from '../../../providers/mock/serve-safety.ts'
import { bodyShape, type WireApi } from '../../../providers/types.ts'
import { configOf, contentHash, conversationItems, type ItemDigest } from '../../../providers/wire/digest.ts'
import type { ConversationKind, IdentitySource, Placement } from '../../../providers/wire/exchange.ts'
import { readAgent } from './agents/index.ts'
import type { AgentReading, WireRequest } from './agents/types.ts'
import { type RequestShape, shapeOf } from './shape.ts'

/** A continued item must be at least this long (characters of JSON) to tie a truncated history to a conversation. */
const DISTINCTIVE_SIZE = 64

/** Characters a session id keeps as is; anything else is replaced and the id gains a hash of the original. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/

/**
 * A file-safe session id for a name a client chose; one that holds a credential (a key passed as a
 * `prompt_cache_key`: key-shaped, or one of `secrets`, the request's own keys) is its hash alone, so no
 * file name or label ever shows it.
 */
export function safeSessionId(name: string, secrets: readonly string[] = []): string {
  if (looksLikeSecret(name, secrets)) return `${/^[a-z]+-/.exec(name)?.[0] ?? ''}${contentHash(name)}`
  if (SAFE_ID.test(name)) return name
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80)
  return `${cleaned === '' ? 'session' : cleaned}-${contentHash(name).slice(0, 8)}`
}

/**
 * The conversation key a body carries, as a session id, if any: `prompt_cache_key`, an Anthropic
 * `metadata.user_id` that is not a JSON record of ids (Claude Code's holds a device id, read by its port),
 * a Responses `conversation`.
 */
export function conversationKey(
  api: WireApi,
  body: Record<string, unknown>,
  secrets: readonly string[] = [],
): string | undefined {
  if (typeof body.prompt_cache_key === 'string' && body.prompt_cache_key !== '')
    return safeSessionId(`key-${body.prompt_cache_key}`, secrets)
  const metadata = body.metadata as { user_id?: unknown } | undefined
  const user = metadata?.user_id
  if (
    bodyShape(api) === 'anthropic-messages' &&
    typeof user === 'string' &&
    user !== '' &&
    !user.startsWith('{')
  )
    return safeSessionId(`user-${user}`, secrets)
  const conversation = body.conversation as string | { id?: unknown } | undefined
  const id = typeof conversation === 'string' ? conversation : conversation?.id
  if (api === 'openai-responses' && typeof id === 'string' && id !== '')
    return safeSessionId(`conversation-${id}`, secrets)
  return undefined
}

/**
 * A strict extension beats a repetition, which beats an edit after a shared start, which beats a history
 * whose first message was rebuilt, which beats a truncation.
 */
const EXTENDS = 4_000_000
const REPEATS = 3_000_000
const EDITS = 2_000_000
const REBUILDS = 1_500_000
const TRUNCATES = 1_000_000

/**
 * Whether `current` is `previous` with only its first item rebuilt, then extended: every later item of
 * `previous` is resent in its place, and they are distinctive enough to tell one conversation (an agent
 * that renders its workspace into the first message again on resume, Gemini CLI's `contents[0]`).
 */
function rebuildsFirst(
  previous: readonly ItemDigest[],
  current: readonly ItemDigest[],
  key: (item: ItemDigest) => string,
): boolean {
  if (previous.length < 2 || current.length < previous.length) return false
  let size = 0
  for (let index = 1; index < previous.length; index += 1) {
    const item = previous[index] as ItemDigest
    if (key(item) !== key(current[index] as ItemDigest)) return false
    size += item.size
  }
  return size >= DISTINCTIVE_SIZE
}

/** How strongly `current` continues `previous`, items compared by `key`; see `continuationScore`. */
function scoreBy(
  previous: readonly ItemDigest[],
  current: readonly ItemDigest[],
  key: (item: ItemDigest) => string,
): number {
  let shared = 0
  while (
    shared < previous.length &&
    shared < current.length &&
    key(previous[shared] as ItemDigest) === key(current[shared] as ItemDigest)
  )
    shared += 1
  if (previous.length > 0 && shared === previous.length)
    return (current.length > previous.length ? EXTENDS : REPEATS) + shared
  if (shared > 0 && current.length >= previous.length) return EDITS + shared
  if (shared === 0 && rebuildsFirst(previous, current, key)) return REBUILDS + previous.length
  const last = previous.at(-1)
  if (last !== undefined && last.size >= DISTINCTIVE_SIZE && current.some((item) => key(item) === key(last)))
    return TRUNCATES + shared
  return 0
}

/**
 * How strongly `current` continues a conversation whose latest request sent `previous` (conversation
 * items): 0 when it does not. Extending it beats repeating it, which beats a history edited after a shared
 * start, which beats a history whose first message alone was rebuilt, which beats a truncated history that
 * kept the latest message. A history whose only changes are the agent's notes (a date reminder left out on
 * resume) is an edit of it.
 */
export function continuationScore(previous: readonly ItemDigest[], current: readonly ItemDigest[]): number {
  const exact = scoreBy(previous, current, (item) => item.hash)
  if (exact > 0) return exact
  const loose = scoreBy(previous, current, (item) => item.loose ?? item.hash)
  return loose >= EDITS ? EDITS + (loose % 1_000_000) : loose
}

/** Whether a continuation score is of a history whose first message was rebuilt (`rebuildsFirst`). */
const isRebuild = (score: number) => score >= REBUILDS && score < EDITS

/** One conversation the tracker can continue. */
interface Conversation {
  name: string
  session: string
  /** Whether a session groups it (else it is a session of its own). */
  grouped: boolean
  kind: ConversationKind
  purpose?: string
  /** The agent's own id of the conversation within its session, when the wire carries one. */
  key?: string
  api: WireApi
  /** The conversation items of its latest request. */
  items: readonly ItemDigest[]
  /** The shape of its latest request. */
  shape: RequestShape
  /** When it was last active, in requests the tracker has seen: the later wins a tie. */
  active: number
  turn: number
  step: number
  attempt: number
  /** The turn each of the latest request's items belongs to, item by item. */
  turnsAt: readonly number[]
  /** The latest request's fingerprint: an identical next request is its next attempt. */
  fingerprint: string
  /** The compaction conversation that summarized it since its latest request, until its next request. */
  compactedBy?: string
}

/** A session's conversations by name, its main conversation, and its keyed conversations by key. */
interface Session {
  names: Set<string>
  main?: string
  keyed: Map<string, string>
  /** Compaction conversations opened so far: the next is numbered after them. */
  compactions: number
}

/**
 * Whether an item ends a run of user messages: anything but a user message. A user message that is not a
 * turn (an agent's note, tool results) neither opens nor ends one: tool results always follow the model's
 * call, which ended the run already.
 */
function endsRun(item: ItemDigest): boolean {
  return item.role !== 'user'
}

/** Whether an item is the model's output: an assistant or model message, a call, reasoning. */
function isModelItem(item: ItemDigest): boolean {
  return (
    item.role === 'assistant' ||
    item.role === 'model' ||
    item.role === 'reasoning' ||
    item.role.endsWith('_call')
  )
}

/**
 * The turn and step of a request in its conversation. A request that extends the conversation's latest
 * one keeps the turns of what it shares, and each run of user messages after that (a typed prompt, with
 * whatever the agent sent beside it) opens the next turn. A rewritten history (a summary, a re-rendering)
 * goes on from the conversation's latest turn, its latest run of user messages opening the next one when it
 * brings a new prompt; the first request of a conversation that is not
 * the main one (a subagent's task, a title or summary request quoting another conversation) is turn 1.
 * The step counts the model's answers since the request's latest user message; a request that carries
 * none (chained on a stored response) is the next step of the latest turn.
 */
function positionIn(
  conversation: Conversation,
  current: readonly ItemDigest[],
): { turn: number; step: number; turnsAt: number[] } {
  const previous = conversation.items
  let shared = 0
  while (
    shared < previous.length &&
    shared < current.length &&
    previous[shared]?.hash === current[shared]?.hash
  )
    shared += 1
  let latestUser = -1
  for (let index = current.length - 1; index >= 0 && latestUser < 0; index -= 1)
    if (current[index]?.userTurn === true) latestUser = index
  let turn: number
  let turnsAt: number[]
  if (conversation.turn === 0 || shared === previous.length || shared === current.length) {
    // A new conversation, one extended, or one rolled back to a prefix of it: what it shares keeps its
    // turns, and after that each run of user messages is a turn.
    turnsAt = conversation.turnsAt.slice(0, shared)
    turn = shared > 0 ? (conversation.turnsAt[shared - 1] ?? 0) : 0
    let inRun = false
    for (let index = shared - 1; index >= 0; index -= 1) {
      const item = current[index] as ItemDigest
      if (item.userTurn || endsRun(item)) {
        inRun = item.userTurn
        break
      }
    }
    for (let index = shared; index < current.length; index += 1) {
      const item = current[index] as ItemDigest
      if (item.userTurn) {
        if (!inRun) turn += 1
        inRun = true
      } else if (endsRun(item)) inRun = false
      turnsAt.push(turn)
    }
  } else {
    // A history rewritten (a summary, a re-rendering for another model, messages rebuilt or reordered):
    // its earlier turns are the conversation's. Its latest run of user messages opens a turn when it is one
    // new message (a prompt on a re-rendered history), or holds two new ones (a summary and a new prompt);
    // a summary beside prompts sent before goes on with the turn being compacted.
    const sent = new Set(previous.map((item) => item.hash))
    let run = 0
    let fresh = 0
    for (let index = latestUser; index >= 0; index -= 1) {
      const item = current[index] as ItemDigest
      if (endsRun(item)) break
      if (!item.userTurn) continue
      run += 1
      if (!sent.has(item.hash)) fresh += 1
    }
    turn = conversation.turn + ((run === 1 && fresh === 1) || fresh >= 2 ? 1 : 0)
    turnsAt = current.map(() => turn)
  }
  // A side request, a compaction or a subagent carries history that is not its own: it starts at turn 1.
  if (conversation.turn === 0 && conversation.kind !== 'main') turnsAt.fill(1)
  turn = conversation.turn === 0 && conversation.kind !== 'main' ? 1 : Math.max(turn, 1)
  if (latestUser < 0) {
    // Only new items of a stored conversation (tool outputs chained on a response): the latest turn goes on.
    return { turn, step: turn === conversation.turn ? conversation.step + 1 : 1, turnsAt }
  }
  let answers = 0
  let previousWasModel = false
  for (let index = latestUser + 1; index < current.length; index += 1) {
    const model = isModelItem(current[index] as ItemDigest)
    if (model && !previousWasModel) answers += 1
    previousWasModel = model
  }
  return { turn, step: answers + 1, turnsAt }
}

/** A request's fingerprint: its items, its system prompt and tools, and its settings. */
function fingerprintOf(request: WireRequest, items: readonly ItemDigest[], shape: RequestShape): string {
  return contentHash(
    JSON.stringify([items.map((item) => item.hash), shape.system, shape.tools, configOf(request.body)]),
  )
}

/** Whether two requests look like one conversation beside their messages: the same system prompt or tools. */
function sameShape(left: RequestShape, right: RequestShape): boolean {
  return left.system === right.system || left.tools === right.tools
}

function sameSystemAndTools(left: RequestShape, right: RequestShape): boolean {
  return left.system === right.system && left.tools === right.tools
}

/**
 * Whether a request that continues nothing cannot be a turn of a main conversation whose latest request
 * had `main`'s shape, whatever session id it carries: it declares no tools where the conversation has
 * some (a one-message probe sent before a model switch, a classifier). An agent's own turns always carry
 * its tools; a summarized or re-rendered history keeps them.
 */
function cannotContinue(main: RequestShape, shape: RequestShape): boolean {
  return shape.tools === '' && main.tools !== ''
}

/**
 * The kind of a conversation the wire does not name, from how it differs from its session's main one:
 * no tools where the main conversation has some is a side request; other tools and another system prompt
 * is a subagent's.
 */
function inferredKind(main: Conversation | undefined, shape: RequestShape): ConversationKind {
  if (main === undefined) return 'main'
  if (cannotContinue(main.shape, shape)) return 'side'
  if (!sameShape(main.shape, shape)) return 'subagent'
  return 'main'
}

export class ConversationTracker {
  /** Conversations, least recently active first. */
  private readonly conversations = new Map<string, Conversation>()
  private readonly sessions = new Map<string, Session>()
  /** Conversation names by the hash of their first and last items: the candidates of a request. */
  private readonly byFirst = new Map<string, Set<string>>()
  private readonly byLast = new Map<string, Set<string>>()
  /** Every name given out: a new conversation never takes an old one's. */
  private readonly used = new Set<string>()
  private clock = 0
  private readonly limit: number

  /** `limit`: conversations kept as candidates (the least recently active are forgotten first). */
  constructor(limit = 10_000) {
    this.limit = limit
  }

  /**
   * Place a request: its session, conversation and position. `declared` is the session header;
   * `chained`, the conversation of the stored response a Responses request continues. Call once per
   * request: the placement moves its conversation on.
   */
  place(
    request: WireRequest,
    items: readonly ItemDigest[],
    options: { declared?: string; chained?: string; secrets?: readonly string[] } = {},
  ): Placement {
    const current = conversationItems(items)
    const shape = shapeOf(request.api, request.body, items)
    const reading = readAgent(request)
    const chained = options.chained === undefined ? undefined : this.conversations.get(options.chained)
    const { session, identity } = this.sessionOf(request, reading, options.declared, options.secrets)
    let kind = reading?.kind ?? (shape.structured ? 'side' : undefined)
    let purpose = reading?.purpose ?? (shape.structured ? 'structured' : undefined)
    let conversation =
      chained ?? this.continued(request.api, session, current, shape, kind, purpose, reading?.key)
    let joined = conversation !== undefined
    if (conversation === undefined && session !== undefined && (kind === undefined || kind === 'main')) {
      const main = this.mainOf(session)
      if (main !== undefined && cannotContinue(main.shape, shape)) {
        // Sent as the main conversation's, yet no turn of it: a side request (Claude Code's one-message
        // probe of a model before switching to it), which the switch must not be measured against.
        if (kind === 'main') {
          kind = 'side'
          purpose ??= 'probe'
          conversation = this.continued(request.api, session, current, shape, kind, purpose, undefined)
          joined = conversation !== undefined
        }
      } else if (
        main !== undefined &&
        main.api === request.api &&
        (kind === 'main' || sameShape(main.shape, shape))
      ) {
        // A session's main conversation rewritten past recognition (summarized, cleared): still the main one.
        conversation = main
        joined = true
      }
    }
    if (conversation === undefined) {
      const resolvedKind =
        kind ?? inferredKind(session === undefined ? undefined : this.mainOf(session), shape)
      conversation = this.open(request.api, session, resolvedKind, purpose, reading, current, shape)
    }
    if (conversation.kind === 'compaction') this.noteCompaction(conversation, session, current)
    const { compactedBy, ...position } = this.advance(conversation, request, items, current, shape)
    return {
      session: conversation.session,
      conversation: conversation.name,
      kind: conversation.kind,
      ...(conversation.purpose !== undefined ? { purpose: conversation.purpose } : {}),
      identity: identity ?? (joined ? 'continuation' : 'new'),
      ...(reading !== undefined
        ? { agent: reading.version === undefined ? reading.agent : `${reading.agent}/${reading.version}` }
        : {}),
      ...position,
      ...(compactedBy !== undefined ? { compactedBy } : {}),
    }
  }

  /**
   * Remember that `compaction` summarized the conversation of its session whose history it quotes best,
   * so that conversation's next request, if it rewrites its history, is named as compacted by it.
   */
  private noteCompaction(
    compaction: Conversation,
    session: string | undefined,
    current: readonly ItemDigest[],
  ): void {
    let best: { conversation: Conversation; score: number } | undefined
    for (const name of this.candidates(current)) {
      const conversation = this.conversations.get(name)
      if (conversation === undefined || conversation.kind === 'compaction') continue
      if (session === undefined ? conversation.grouped : conversation.session !== session) continue
      const score = continuationScore(conversation.items, current)
      if (score > 0 && (best === undefined || score > best.score)) best = { conversation, score }
    }
    if (best !== undefined) best.conversation.compactedBy = compaction.name
  }

  /** The session a request declares or its agent or key names, and how it was told. */
  private sessionOf(
    request: WireRequest,
    reading: AgentReading | undefined,
    declared: string | undefined,
    secrets: readonly string[] = [],
  ): { session?: string; identity?: IdentitySource } {
    if (declared !== undefined && declared !== '')
      return { session: safeSessionId(declared, secrets), identity: 'header' }
    if (reading?.session !== undefined && reading.session !== '')
      return { session: safeSessionId(reading.session, secrets), identity: 'agent' }
    const key = conversationKey(request.api, request.body, secrets)
    if (key !== undefined) return { session: key, identity: 'conversation-key' }
    return {}
  }

  /** The conversation a request continues, among those of its session (or of no session) and kind. */
  private continued(
    api: WireApi,
    session: string | undefined,
    current: readonly ItemDigest[],
    shape: RequestShape,
    kind: ConversationKind | undefined,
    purpose: string | undefined,
    key: string | undefined,
  ): Conversation | undefined {
    if (key !== undefined && session !== undefined) {
      const name = this.sessions.get(session)?.keyed.get(key)
      return name === undefined ? undefined : this.conversations.get(name)
    }
    let best: { conversation: Conversation; score: number } | undefined
    for (const name of this.candidates(current)) {
      const conversation = this.conversations.get(name)
      if (conversation === undefined || conversation.api !== api || conversation.key !== undefined) continue
      if (session === undefined ? conversation.grouped : conversation.session !== session) continue
      if (!compatibleKind(conversation, kind, purpose)) continue
      const score = continuationScore(conversation.items, current)
      if (score === 0) continue
      // A compaction request is sent once: only its retry, or the same request with its instruction
      // changed (Claude Code asks again for the tags it wanted), continues one; a later compaction of
      // the same conversation is a compaction of its own.
      if (conversation.kind === 'compaction' && !onlyLastChanged(conversation.items, current)) continue
      // Only a request that adds to a conversation may change both its system prompt and its tools: a
      // title or a router that repeats the conversation's messages under its own prompt is another one.
      if (score < EXTENDS && !sameShape(conversation.shape, shape)) continue
      // A rebuilt first message is the same chat only when everything else is: its system prompt and tools.
      if (isRebuild(score) && !sameSystemAndTools(conversation.shape, shape)) continue
      const weaker =
        best !== undefined &&
        (score < best.score || (score === best.score && conversation.active < best.conversation.active))
      if (!weaker) best = { conversation, score }
    }
    return best?.conversation
  }

  private mainOf(session: string): Conversation | undefined {
    const name = this.sessions.get(session)?.main
    return name === undefined ? undefined : this.conversations.get(name)
  }

  /** Start a conversation: its name from its session, kind and content, never taken before. */
  private open(
    api: WireApi,
    session: string | undefined,
    kind: ConversationKind,
    purpose: string | undefined,
    reading: AgentReading | undefined,
    current: readonly ItemDigest[],
    shape: RequestShape,
  ): Conversation {
    const first = (current[0]?.hash ?? contentHash('')).slice(0, 8)
    const state = session === undefined ? undefined : this.sessionState(session)
    let base: string
    if (kind === 'main') {
      base =
        session !== undefined && state?.main === undefined
          ? session
          : `${reading === undefined ? '' : `${reading.agent}-`}c-${contentHash(`${api}|${current[0]?.hash ?? ''}`).slice(0, 8)}`
    } else {
      // Named by what it is and by its own content, so the name never depends on arrival order.
      const what =
        kind === 'subagent'
          ? `subagent-${reading?.key ?? first}`
          : kind === 'compaction'
            ? `compaction-${compactionNumber(state, current)}`
            : `side-${purpose === undefined ? '' : `${purpose}-`}${first}`
      base =
        session !== undefined
          ? `${session}.${what}`
          : `${reading === undefined ? '' : `${reading.agent}-`}${what}`
    }
    const name = this.unused(safeSessionId(base))
    this.clock += 1
    const conversation: Conversation = {
      name,
      session: session ?? name,
      grouped: session !== undefined,
      kind,
      ...(purpose !== undefined ? { purpose } : {}),
      ...(reading?.key !== undefined ? { key: reading.key } : {}),
      api,
      items: [],
      shape,
      active: this.clock,
      turn: 0,
      step: 0,
      attempt: 0,
      turnsAt: [],
      fingerprint: '',
    }
    if (state !== undefined) {
      state.names.add(name)
      if (kind === 'main' && state.main === undefined) state.main = name
      if (reading?.key !== undefined) state.keyed.set(reading.key, name)
    }
    this.remember(conversation)
    return conversation
  }

  /** The first free name of a base: itself, then `-2`, `-3`, … */
  private unused(base: string): string {
    let name = base
    for (let serial = 2; this.used.has(name); serial += 1) name = `${base}-${serial}`
    this.used.add(name)
    return name
  }

  private sessionState(session: string): Session {
    let state = this.sessions.get(session)
    if (state === undefined) {
      state = { names: new Set(), keyed: new Map(), compactions: 0 }
      this.sessions.set(session, state)
    }
    return state
  }

  /**
   * Move a conversation on by one request: its turn, step and attempt, and what it sent last; and the
   * compaction that rewrote its history, when this request rewrote it after one.
   */
  private advance(
    conversation: Conversation,
    request: WireRequest,
    items: readonly ItemDigest[],
    current: readonly ItemDigest[],
    shape: RequestShape,
  ): Pick<Placement, 'turn' | 'step' | 'attempt' | 'compactedBy'> {
    const fingerprint = fingerprintOf(request, items, shape)
    const compaction = conversation.compactedBy
    delete conversation.compactedBy
    const rewritten = conversation.turn > 0 && !extendsOrRepeats(conversation.items, current)
    if (conversation.turn > 0 && fingerprint === conversation.fingerprint) {
      conversation.attempt += 1
    } else {
      const position = positionIn(conversation, current)
      conversation.turn = position.turn
      conversation.step = position.step
      conversation.turnsAt = position.turnsAt
      conversation.attempt = 0
    }
    conversation.fingerprint = fingerprint
    this.forgetIndexes(conversation)
    conversation.items = current
    conversation.shape = shape
    this.clock += 1
    conversation.active = this.clock
    this.remember(conversation)
    return {
      turn: conversation.turn,
      step: conversation.step,
      attempt: conversation.attempt,
      ...(compaction !== undefined && rewritten ? { compactedBy: compaction } : {}),
    }
  }

  /**
   * Conversations a request could continue: those whose latest request starts with its first item or
   * ends with one of its items, exactly or without the agent's notes (the indexes keep this to a handful,
   * however many are live).
   */
  private candidates(current: readonly ItemDigest[]): Set<string> {
    const found = new Set<string>()
    const add = (map: Map<string, Set<string>>, item: ItemDigest | undefined) => {
      for (const key of keysOf(item)) for (const name of map.get(key) ?? []) found.add(name)
    }
    add(this.byFirst, current[0])
    for (const item of current) add(this.byLast, item)
    return found
  }

  /** Index a conversation as most recently active; past the limit, forget the least recently active. */
  private remember(conversation: Conversation): void {
    this.conversations.delete(conversation.name)
    this.conversations.set(conversation.name, conversation)
    for (const key of keysOf(conversation.items[0])) index(this.byFirst, key, conversation.name)
    for (const key of keysOf(conversation.items.at(-1))) index(this.byLast, key, conversation.name)
    if (this.conversations.size <= this.limit) return
    const oldest = this.conversations.values().next().value
    if (oldest === undefined) return
    this.forgetIndexes(oldest)
    this.conversations.delete(oldest.name)
    const state = oldest.grouped ? this.sessions.get(oldest.session) : undefined
    if (state === undefined) return
    state.names.delete(oldest.name)
    if (state.main === oldest.name) delete state.main
    if (oldest.key !== undefined) state.keyed.delete(oldest.key)
    if (state.names.size === 0) this.sessions.delete(oldest.session)
  }

  private forgetIndexes(conversation: Conversation): void {
    for (const [map, item] of [
      [this.byFirst, conversation.items[0]],
      [this.byLast, conversation.items.at(-1)],
    ] as const) {
      for (const key of keysOf(item)) {
        const names = map.get(key)
        names?.delete(conversation.name)
        if (names?.size === 0) map.delete(key)
      }
    }
  }
}

/** The index keys of an item: its hash, and its hash without the agent's notes where it has some. */
function keysOf(item: ItemDigest | undefined): string[] {
  if (item === undefined) return []
  return item.loose === undefined ? [item.hash] : [item.hash, item.loose]
}

/**
 * The number of a session's next compaction: its compactions are numbered in order (a transcript that
 * records them numbers them alike), one of no session by the hash of what it compacts.
 */
function compactionNumber(state: Session | undefined, current: readonly ItemDigest[]): string {
  if (state === undefined) return contentHash(current.map((item) => item.hash).join(',')).slice(0, 8)
  state.compactions += 1
  return String(state.compactions)
}

/** Whether `current` resends every item of `previous` in its place (an extension or a repetition). */
function extendsOrRepeats(previous: readonly ItemDigest[], current: readonly ItemDigest[]): boolean {
  if (current.length < previous.length) return false
  for (let index = 0; index < previous.length; index += 1)
    if (current[index]?.hash !== previous[index]?.hash) return false
  return true
}

/** Whether `current` is `previous` with at most its last item changed. */
function onlyLastChanged(previous: readonly ItemDigest[], current: readonly ItemDigest[]): boolean {
  if (current.length !== previous.length) return false
  for (let index = 0; index < current.length - 1; index += 1)
    if (current[index]?.hash !== previous[index]?.hash) return false
  return true
}

/**
 * Whether a request of `kind` may continue `conversation`: one the wire names continues only its own kind
 * (side and compaction requests of the same purpose too); one it does not name, any.
 */
function compatibleKind(
  conversation: Conversation,
  kind: ConversationKind | undefined,
  purpose: string | undefined,
): boolean {
  switch (kind) {
    case 'side':
    case 'compaction':
      return conversation.kind === kind && conversation.purpose === purpose
    case 'subagent':
      return conversation.kind === 'subagent'
    case 'main':
      return conversation.kind === 'main'
    case undefined:
      return true
  }
}

function index(map: Map<string, Set<string>>, hash: string | undefined, name: string): void {
  if (hash === undefined) return
  const names = map.get(hash) ?? new Set<string>()
  names.add(name)
  map.set(hash, names)
}
