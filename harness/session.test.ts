import { describe, expect, it } from 'vitest'
import { CachelabError } from './errors.ts'
import { SessionProjection } from './session.ts'
import type { EventDraft, SessionEvent } from './types.ts'

/** A small log builder: drafts get consecutive seqs. */
function build(...drafts: EventDraft[]): SessionEvent[] {
  const all: EventDraft[] = [{ type: 'session/start', data: { formatVersion: 1, sessionId: 's' } }, ...drafts]
  return all.map((draft, seq) => ({ seq, time: seq, ...draft }) as SessionEvent)
}

const system = (
  text: string,
  surfaceOp: EventDraft['surfaceOp'] = 'append',
  sourceEventSeqs?: number[],
): EventDraft => ({
  type: 'system/message',
  data: { turn: 1, step: 1, message: { role: 'system', text } },
  surfaceOp: surfaceOp as 'append',
  ...(sourceEventSeqs !== undefined ? { sourceEventSeqs } : {}),
})
const user = (
  text: string,
  surfaceOp: EventDraft['surfaceOp'] = 'append',
  sourceEventSeqs?: number[],
): EventDraft => ({
  type: 'user/message',
  data: { turn: 1, message: { role: 'user', content: [{ type: 'text', text }] }, source: { kind: 'user' } },
  surfaceOp: surfaceOp as 'append',
  ...(sourceEventSeqs !== undefined ? { sourceEventSeqs } : {}),
})

describe('the surface', () => {
  it('appends nodes in order and projects them to messages with provenance', () => {
    const session = SessionProjection.fromEvents(build(system('sys'), user('a'), user('b')))
    expect(session.surface).toEqual([1, 2, 3])
    expect(session.messages().map((message) => message.sourceSeqs)).toEqual([[1], [2], [3]])
  })

  it('replaces a live range with one node and advances the replace generation', () => {
    const session = SessionProjection.fromEvents(
      build(
        system('sys'),
        user('a'),
        user('b'),
        user('c'),
        user('summary', { op: 'replace', startSeq: 2, endSeq: 3 }, [2, 3]),
      ),
    )
    expect(session.surface).toEqual([1, 5, 4])
    expect(session.replaceGeneration).toBe(1)
    expect(session.messages().map((message) => message.message)).toEqual([
      { role: 'system', text: 'sys' },
      { role: 'user', content: [{ type: 'text', text: 'summary' }] },
      { role: 'user', content: [{ type: 'text', text: 'c' }] },
    ])
  })

  it('keeps an empty system node in place but sends nothing for it', () => {
    const session = SessionProjection.fromEvents(
      build(system('sys'), system('v2'), system('', { op: 'replace', startSeq: 2, endSeq: 2 }, [2])),
    )
    expect(session.surface).toEqual([1, 3])
    expect(session.messages()).toHaveLength(1)
  })

  it('refuses a replacement whose sources miss a shadowed node', () => {
    const events = build(user('a'), user('b'), user('s', { op: 'replace', startSeq: 1, endSeq: 2 }, [1]))
    expect(() => SessionProjection.fromEvents(events)).toThrow(CachelabError)
    expect(() => SessionProjection.fromEvents(events)).toThrow(/missing 2/)
  })

  it('refuses a replacement of a range that is not live', () => {
    expect(() =>
      SessionProjection.fromEvents(
        build(user('a'), user('s', { op: 'replace', startSeq: 7, endSeq: 7 }, [7])),
      ),
    ).toThrow(/not a live surface range/)
  })

  it('protects the system head: only a system/message may replace exactly node 0', () => {
    expect(() =>
      SessionProjection.fromEvents(
        build(system('sys'), user('a'), user('s', { op: 'replace', startSeq: 1, endSeq: 2 }, [1, 2])),
      ),
    ).toThrow(/system head/)
    const ok = SessionProjection.fromEvents(
      build(system('sys'), system('new', { op: 'replace', startSeq: 1, endSeq: 1 }, [1])),
    )
    expect(ok.systemNodes()).toEqual([{ seq: 2, text: 'new' }])
  })

  it('refuses surface ops on non-surface events and a second session/start', () => {
    expect(() =>
      SessionProjection.fromEvents(
        build({ type: 'turn/start', data: { turn: 1 }, surfaceOp: 'append' } as EventDraft),
      ),
    ).toThrow(/only surface events/)
    expect(() =>
      SessionProjection.fromEvents(
        build({ type: 'session/start', data: { formatVersion: 1, sessionId: 's' } }),
      ),
    ).toThrow(/only be the first/)
  })

  it('refuses a tool announcement whose headerSeq names no earlier request/header', () => {
    const announcement = (headerSeq: number): EventDraft => ({
      type: 'developer/message',
      data: { turn: 1, step: 1, message: { role: 'developer', text: 'added grep' }, headerSeq },
      surfaceOp: 'append',
    })
    const header: EventDraft = {
      type: 'request/header',
      data: { header: { config: { provider: 'deepseek', model: 'm' } }, reason: 'initial' },
    }
    expect(() => SessionProjection.fromEvents(build(user('a'), announcement(1)))).toThrow(
      /headerSeq 1 is not an earlier request\/header/,
    )
    expect(() => SessionProjection.fromEvents(build(header, announcement(5)))).toThrow(/headerSeq 5/)
    expect(SessionProjection.fromEvents(build(header, announcement(1))).surface).toEqual([2])
  })

  it('projects offloaded images as placeholder text', () => {
    const image = {
      type: 'image' as const,
      id: 'img-1',
      mediaType: 'image/png' as const,
      data: 'AAAA',
      width: 1,
      height: 1,
    }
    const session = SessionProjection.fromEvents(
      build(
        {
          type: 'user/message',
          data: { turn: 1, message: { role: 'user', content: [image] }, source: { kind: 'user' } },
          surfaceOp: 'append',
        },
        { type: 'image/offload', data: { mode: 'quantized', targets: [{ seq: 1, imageIds: ['img-1'] }] } },
      ),
    )
    expect(session.messages()[0]?.message).toEqual({
      role: 'user',
      content: [{ type: 'text', text: '[image img-1 omitted to fit request image limits]' }],
    })
    expect(session.contentGeneration).toBe(1)
  })
})
