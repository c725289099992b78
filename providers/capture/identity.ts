// Which conversation a captured request belongs to. A client that says so is believed: the
// `x-cachelab-session` header, else the request's own conversation key. Otherwise the request joins the
// recent conversation of the same API that it continues, compared on the conversation's messages with
// cache markers removed and system prompts left out — so moving a rolling breakpoint or rewriting the
// system prompt (the break this tool exists to catch) never splits a session. See
// notes/2026-11-30-capture-session-identity.md for the rule and its limits.

import type { WireApi } from '../types.ts'
import { contentHash, conversationItems, type ItemDigest } from './digest.ts'

/** How a request's session was told. */
export type IdentitySource = 'header' | 'conversation-key' | 'continuation' | 'new'

export interface Resolution {
  /** The session id: also its file name under a capture's `sessions/`. */
  session: string
  source: IdentitySource
}

/** A conversation the resolver can continue: the conversation items of its latest request. */
interface Conversation {
  session: string
  api: WireApi
  items: readonly ItemDigest[]
  /** When it was last active, in requests the resolver has seen: the later wins a tie. */
  active: number
}

/** A continued item must be at least this long (characters of JSON) to tie a truncated history to a session. */
const DISTINCTIVE_SIZE = 64

/** Characters a session id keeps as is; anything else is replaced and the id gains a hash of the original. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/

/** A file-safe session id for a name a client chose. */
export function safeSessionId(name: string): string {
  if (SAFE_ID.test(name)) return name
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80)
  return `${cleaned === '' ? 'session' : cleaned}-${contentHash(name).slice(0, 8)}`
}

/** The conversation key a body carries, as a session id, if any. */
export function conversationKey(api: WireApi, body: Record<string, unknown>): string | undefined {
  if (typeof body.prompt_cache_key === 'string' && body.prompt_cache_key !== '')
    return safeSessionId(`key-${body.prompt_cache_key}`)
  const metadata = body.metadata as { user_id?: unknown } | undefined
  if (api === 'anthropic-messages' && typeof metadata?.user_id === 'string' && metadata.user_id !== '')
    return safeSessionId(`user-${metadata.user_id}`)
  const conversation = body.conversation as string | { id?: unknown } | undefined
  const id = typeof conversation === 'string' ? conversation : conversation?.id
  if (api === 'openai-responses' && typeof id === 'string' && id !== '')
    return safeSessionId(`conversation-${id}`)
  return undefined
}

/**
 * How strongly `current` continues a conversation whose latest request sent `previous` (conversation
 * items): 0 when it does not. Extending it (or repeating it) beats a history edited after a shared
 * start, which beats a truncated history that kept the latest message.
 */
export function continuationScore(previous: readonly ItemDigest[], current: readonly ItemDigest[]): number {
  let shared = 0
  while (
    shared < previous.length &&
    shared < current.length &&
    previous[shared]?.hash === current[shared]?.hash
  )
    shared += 1
  if (previous.length > 0 && shared === previous.length) return 3_000_000 + shared
  if (shared > 0 && current.length >= previous.length) return 2_000_000 + shared
  const last = previous.at(-1)
  if (last !== undefined && last.size >= DISTINCTIVE_SIZE && current.some((item) => item.hash === last.hash))
    return 1_000_000 + shared
  return 0
}

export class SessionResolver {
  /** Inferred conversations, least recently active first. */
  private readonly conversations = new Map<string, Conversation>()
  /** Session ids by the hash of their conversation's first and last items: the candidates of a request. */
  private readonly byFirst = new Map<string, Set<string>>()
  private readonly byLast = new Map<string, Set<string>>()
  private readonly used = new Set<string>()
  /** The serial last given to each new-session name base: every serial below it is taken. */
  private readonly serials = new Map<string, number>()
  /** Counts updates, to order conversations by activity. */
  private clock = 0
  private readonly limit: number

  /** `limit`: conversations kept as candidates (the least recently active are forgotten first). */
  constructor(limit = 10_000) {
    this.limit = limit
  }

  /** The session of a request: `declared` (the session header) first, then its key, then its conversation. */
  resolve(
    api: WireApi,
    declared: string | undefined,
    body: Record<string, unknown>,
    items: readonly ItemDigest[],
  ) {
    if (declared !== undefined && declared !== '')
      return { session: safeSessionId(declared), source: 'header' } satisfies Resolution
    const key = conversationKey(api, body)
    if (key !== undefined) return { session: key, source: 'conversation-key' } satisfies Resolution
    const current = conversationItems(items)
    let best: { session: string; score: number; active: number } | undefined
    for (const session of this.candidates(current)) {
      const conversation = this.conversations.get(session)
      if (conversation === undefined || conversation.api !== api) continue
      const score = continuationScore(conversation.items, current)
      if (score === 0) continue
      // A stronger continuation wins; of equal ones, the more recently active conversation.
      const weaker =
        best !== undefined &&
        (score < best.score || (score === best.score && conversation.active < best.active))
      if (!weaker) best = { session, score, active: conversation.active }
    }
    if (best !== undefined) return { session: best.session, source: 'continuation' } satisfies Resolution
    return { session: this.newName(current), source: 'new' } satisfies Resolution
  }

  /** Remember what a session's latest request sent; an inferred session becomes a candidate. */
  update(resolution: Resolution, api: WireApi, items: readonly ItemDigest[]): void {
    this.used.add(resolution.session)
    if (resolution.source !== 'continuation' && resolution.source !== 'new') return
    this.forget(resolution.session)
    this.clock += 1
    const conversation = {
      session: resolution.session,
      api,
      items: conversationItems(items),
      active: this.clock,
    }
    this.conversations.set(resolution.session, conversation)
    this.index(this.byFirst, conversation.items[0]?.hash, resolution.session)
    this.index(this.byLast, conversation.items.at(-1)?.hash, resolution.session)
    if (this.conversations.size > this.limit) {
      const oldest = this.conversations.keys().next().value
      if (oldest !== undefined) this.forget(oldest)
    }
  }

  /**
   * Sessions a request could continue: those whose conversation starts with its first message or ends
   * with one of its messages (the indexes keep this to a handful, however many conversations are live).
   */
  private candidates(current: readonly ItemDigest[]): Set<string> {
    const found = new Set<string>()
    for (const session of this.byFirst.get(current[0]?.hash ?? '') ?? []) found.add(session)
    for (const item of current) for (const session of this.byLast.get(item.hash) ?? []) found.add(session)
    return found
  }

  private index(map: Map<string, Set<string>>, hash: string | undefined, session: string): void {
    if (hash === undefined) return
    const sessions = map.get(hash) ?? new Set<string>()
    sessions.add(session)
    map.set(hash, sessions)
  }

  private forget(session: string): void {
    const conversation = this.conversations.get(session)
    if (conversation === undefined) return
    this.conversations.delete(session)
    for (const [map, item] of [
      [this.byFirst, conversation.items[0]],
      [this.byLast, conversation.items.at(-1)],
    ] as const) {
      const sessions = item === undefined ? undefined : map.get(item.hash)
      sessions?.delete(session)
      if (sessions?.size === 0 && item !== undefined) map.delete(item.hash)
    }
  }

  /** A new session's id: the hash of its first message, numbered when another conversation began alike. */
  private newName(current: readonly ItemDigest[]): string {
    const base = `c-${(current[0]?.hash ?? contentHash('')).slice(0, 8)}`
    // Names are only ever added to `used`, so the search resumes where the last one for this base ended:
    // thousands of sessions opening alike cost one step each, not a count from 2 every time.
    let serial = this.serials.get(base) ?? 1
    let name = serial === 1 ? base : `${base}-${serial}`
    while (this.used.has(name)) {
      serial += 1
      name = `${base}-${serial}`
    }
    this.serials.set(base, serial)
    this.used.add(name)
    return name
  }
}
