import { describe, expect, it } from 'vitest'
import { itemDigest } from './digest.ts'
import { continuationScore, type Resolution, SessionResolver, safeSessionId } from './identity.ts'

type Message = Record<string, unknown>
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] })
const marked = (message: Message): Message => ({
  ...message,
  content: (message.content as Message[]).map((block) => ({
    ...block,
    cache_control: { type: 'ephemeral' },
  })),
})

/** Send an Anthropic body through a resolver and remember it, as the tracker does. */
function send(resolver: SessionResolver, body: Record<string, unknown>, declared?: string): Resolution {
  const items = (body.messages as Message[]).map(itemDigest)
  const resolution = resolver.resolve('anthropic-messages', declared, body, items)
  resolver.update(resolution, 'anthropic-messages', items)
  return resolution
}

const long = (label: string) => `${label}: ${'a conversation that says something specific. '.repeat(3)}`

describe('telling sessions apart without a header', () => {
  it('keeps a conversation whose system prompt was rewritten in one session', () => {
    const resolver = new SessionResolver()
    const history = [user('first question')]
    const first = send(resolver, { system: 'You are helpful.', messages: [...history] })
    history.push(assistant(long('answer')), user('second question'))
    const second = send(resolver, { system: 'REWRITTEN: you are helpful.', messages: [...history] })
    expect(first.source).toBe('new')
    expect(second).toEqual({ session: first.session, source: 'continuation' })
  })

  it('ignores a rolling cache breakpoint that moves to the latest message', () => {
    const resolver = new SessionResolver()
    const first = send(resolver, { messages: [marked(user('hello there'))] })
    const second = send(resolver, {
      messages: [user('hello there'), assistant('hi'), marked(user('and now?'))],
    })
    expect(second.session).toBe(first.session)
  })

  it('reads string content and the text block it is shorthand for as one message', () => {
    const resolver = new SessionResolver()
    const first = send(resolver, { messages: [marked(user('hello there'))] })
    const second = send(resolver, {
      messages: [{ role: 'user', content: 'hello there' }, assistant('hi'), marked(user('and now?'))],
    })
    expect(second.session).toBe(first.session)
  })

  it('opens a new session for a conversation that begins alike but is at its own first request', () => {
    const resolver = new SessionResolver()
    const first = send(resolver, { messages: [user('hello')] })
    send(resolver, { messages: [user('hello'), assistant('hi'), user('more')] })
    const other = send(resolver, { messages: [user('hello')] })
    expect(other.source).toBe('new')
    expect(other.session).toBe(`${first.session}-2`)
  })

  it('keeps two interleaved conversations apart', () => {
    const resolver = new SessionResolver()
    const a = send(resolver, { messages: [user('topic A')] })
    const b = send(resolver, { messages: [user('topic B')] })
    expect(send(resolver, { messages: [user('topic A'), assistant('a'), user('A again')] }).session).toBe(
      a.session,
    )
    expect(send(resolver, { messages: [user('topic B'), assistant('b'), user('B again')] }).session).toBe(
      b.session,
    )
    expect(a.session).not.toBe(b.session)
  })

  it('follows a history truncated to its latest messages', () => {
    const resolver = new SessionResolver()
    const history = [user('one'), assistant(long('reply one')), user('two'), assistant(long('reply two'))]
    const first = send(resolver, { messages: [...history] })
    const truncated = send(resolver, { messages: [history[3] as Message, user('three')] })
    expect(truncated.session).toBe(first.session)
  })

  it('believes the session header, then the conversation key', () => {
    const resolver = new SessionResolver()
    expect(send(resolver, { messages: [user('x')] }, 'run 7/a')).toEqual({
      session: safeSessionId('run 7/a'),
      source: 'header',
    })
    expect(send(resolver, { messages: [user('x')], metadata: { user_id: 'u-42' } })).toEqual({
      session: 'user-u-42',
      source: 'conversation-key',
    })
    const openai = resolver.resolve(
      'openai-chat',
      undefined,
      { prompt_cache_key: 'tenant-9', messages: [] },
      [],
    )
    expect(openai).toEqual({ session: 'key-tenant-9', source: 'conversation-key' })
  })
})

describe('session ids', () => {
  it('keeps a safe name as is and makes any other one file-safe and distinct', () => {
    expect(safeSessionId('checkout-flow.1')).toBe('checkout-flow.1')
    const unsafe = safeSessionId('../../etc/passwd')
    expect(unsafe).toMatch(/^[A-Za-z0-9._-]+$/)
    expect(unsafe).not.toContain('/')
    expect(safeSessionId('a/b')).not.toBe(safeSessionId('a_b'))
  })
})

describe('the continuation score', () => {
  const digests = (messages: Message[]) => messages.map(itemDigest)
  it('ranks an extension above an edited history above a truncated one, and a stranger at 0', () => {
    const previous = digests([user('q1'), assistant(long('a1')), user('q2')])
    const extended = continuationScore(
      previous,
      digests([user('q1'), assistant(long('a1')), user('q2'), assistant('a2')]),
    )
    const edited = continuationScore(
      previous,
      digests([user('q1'), assistant('EDITED'), user('q2'), user('q3')]),
    )
    const truncated = continuationScore(
      digests([user('q1'), assistant(long('a1'))]),
      digests([assistant(long('a1')), user('q3')]),
    )
    const stranger = continuationScore(previous, digests([user('something else')]))
    expect(extended).toBeGreaterThan(edited)
    expect(edited).toBeGreaterThan(truncated)
    expect(truncated).toBeGreaterThan(0)
    expect(stranger).toBe(0)
  })
})
