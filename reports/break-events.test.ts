import { describe, expect, it } from 'vitest'
import type { SessionEvent } from '../harness/types.ts'
import { breakEventIndex, breakEventsOf, describeEvent } from './break-events.ts'
import { sessionRows } from './testing.ts'

const key = { scenario: 'prompt-change', variant: 'unsupported', provider: 'anthropic' } as const
const tool = (name: string) => ({ name, description: `${name} tool`, parameters: { type: 'object' } })
const config = { provider: 'anthropic' as const, model: 'claude-sonnet-4-6' }

const log: SessionEvent[] = [
  { seq: 0, time: 0, type: 'session/start', data: { formatVersion: 1, sessionId: 's' } },
  {
    seq: 1,
    time: 0,
    type: 'request/header',
    data: { header: { config, tools: [tool('read_file')] }, reason: 'initial' },
  },
  {
    seq: 2,
    time: 0,
    type: 'system/message',
    data: { turn: 1, step: 1, message: { role: 'system', text: 'You are a careful coding agent.' } },
    surfaceOp: 'append',
  },
  {
    seq: 3,
    time: 1,
    type: 'tool/result',
    data: {
      turn: 1,
      step: 1,
      message: { role: 'tool', callId: 'c1', name: 'read_file', text: 'x'.repeat(2080) },
    },
    surfaceOp: 'append',
  },
  {
    seq: 4,
    time: 9,
    type: 'system/message',
    data: {
      turn: 2,
      step: 1,
      message: {
        role: 'system',
        text: 'You are a careful coding agent working in a TypeScript repository with strict rules.',
      },
    },
    surfaceOp: { op: 'replace', startSeq: 2, endSeq: 2 },
    sourceEventSeqs: [2],
  },
  {
    seq: 5,
    time: 10,
    type: 'request/header',
    data: { header: { config, tools: [tool('read_file'), tool('grep')] }, reason: 'change' },
  },
  {
    seq: 6,
    time: 11,
    type: 'compaction/prune',
    data: {
      compactionId: 'p1',
      shadowedRange: { start: 3, end: 3 },
      shadowedSeqs: [3],
      keep: 'head',
    },
  },
]
const bySeq = new Map(log.map((event) => [event.seq, event]))
const describe_ = (seq: number) => describeEvent(log[seq] as SessionEvent, bySeq)

describe('describeEvent', () => {
  it('says that a system prompt was rewritten in place, with the start of the new text and its length', () => {
    expect(describe_(4)).toBe(
      'rewrote event 2 as system prompt “You are a careful coding agent working in a Typ…” (84 characters)',
    )
  })

  it('quotes a short text whole', () => {
    expect(describe_(2)).toBe('system prompt “You are a careful coding agent.”')
  })

  it('names a header change by what differs from the header before it', () => {
    expect(describe_(5)).toBe('change header: tools +grep')
    expect(describe_(1)).toBe('initial header with 1 tool')
  })

  it('names the tool result a prune cut and what it kept', () => {
    expect(describe_(6)).toBe('pruned the result of read_file (event 3) to its head')
    expect(describe_(3)).toBe('result of read_file, 2,080 characters')
  })
})

describe('breakEventsOf', () => {
  const rows = sessionRows(key, [
    { uncached: 5000 },
    { uncached: 5200, lost: 5000, breakCause: 'system-replace', breakNode: 'system', breakEventSeq: 4 },
    { read: 5200, uncached: 10 },
    { uncached: 5300, lost: 5200, breakCause: 'tools-changed', breakNode: 'tools', breakEventSeq: 5 },
  ])

  it('describes only the events the breaks name, under the session key alone', () => {
    const events = breakEventsOf(rows[0] as (typeof rows)[number], rows, log)
    expect(events.map((event) => [event.seq, event.type])).toEqual([
      [4, 'system/message'],
      [5, 'request/header'],
    ])
    expect(Object.keys(events[0] ?? {}).sort()).toEqual([
      'description',
      'provider',
      'scenario',
      'seq',
      'type',
      'variant',
    ])
  })

  it('finds an event by session and seq, and nothing for another session', () => {
    const lookup = breakEventIndex(breakEventsOf(key, rows, log))
    expect(lookup(key, 5)?.description).toBe('change header: tools +grep')
    expect(lookup({ ...key, provider: 'deepseek' }, 5)).toBeUndefined()
  })
})
