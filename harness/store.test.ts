import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CachelabError } from './errors.ts'
import { JsonlSessionWriter, parseSessionLog, readSessionLog } from './store.ts'
import type { SessionEvent } from './types.ts'

const start: SessionEvent = {
  seq: 0,
  time: 0,
  type: 'session/start',
  data: { formatVersion: 1, sessionId: 's' },
}
const turn: SessionEvent = { seq: 1, time: 1, type: 'turn/start', data: { turn: 1 } }
const user: SessionEvent = {
  seq: 2,
  time: 1,
  type: 'user/message',
  data: {
    turn: 1,
    message: { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    source: { kind: 'user' },
  },
  surfaceOp: 'append',
}
const lines = (...events: unknown[]) => events.map((event) => `${JSON.stringify(event)}\n`).join('')

function errorOf(fn: () => unknown): CachelabError {
  try {
    fn()
  } catch (error) {
    if (error instanceof CachelabError) return error
    throw error
  }
  throw new Error('expected an error')
}

describe('reading a session log', () => {
  it('reads a format-1 log, naming its session prefix messagePrefix as format 2 does', () => {
    const prefix = [{ role: 'user', content: [{ type: 'text', text: 'skills: a' }] }]
    const legacyHeader = {
      seq: 3,
      time: 1,
      type: 'request/header',
      data: {
        header: { config: { provider: 'deepseek', model: 'm' }, sessionPrefix: prefix },
        reason: 'initial',
      },
    }
    const [, , , header] = parseSessionLog(lines(start, turn, user, legacyHeader), 'old.jsonl').events
    expect(header?.type === 'request/header' && header.data.header).toEqual({
      config: { provider: 'deepseek', model: 'm' },
      messagePrefix: prefix,
    })
  })

  it.each([
    ['in-history', { systemPromptUpdate: 'in-history' }],
    ['unsupported', {}],
  ])('reads a format-1 request/context route %s as DSH systemPromptUpdate', (route, capability) => {
    const context = {
      seq: 3,
      time: 1,
      type: 'request/context',
      data: { provider: 'deepseek', model: 'm', route },
    }
    const [, , , read] = parseSessionLog(lines(start, turn, user, context), 'old.jsonl').events
    expect(read?.data).toEqual({ provider: 'deepseek', model: 'm', ...capability })
  })

  it('reads format-1 compaction events with DSH shadowed ranges', () => {
    const summary = {
      seq: 3,
      time: 1,
      type: 'compaction/summary',
      data: { compactionId: 'c1', shadowedSeqs: [2] },
    }
    const prune = {
      seq: 4,
      time: 1,
      type: 'compaction/prune',
      data: { compactionId: 'c2', targetSeq: 2, keep: 'head' },
    }
    const read = parseSessionLog(lines(start, turn, user, summary, prune), 'old.jsonl').events
    expect(read[3]?.data).toEqual({
      compactionId: 'c1',
      shadowedRange: { start: 2, end: 2 },
      shadowedSeqs: [2],
    })
    expect(read[4]?.data).toEqual({
      compactionId: 'c2',
      shadowedRange: { start: 2, end: 2 },
      shadowedSeqs: [2],
      keep: 'head',
    })
  })

  it('round-trips what was written', () => {
    expect(parseSessionLog(lines(start, turn, user), 'log.jsonl').events).toEqual([start, turn, user])
  })

  it('names the file and line of invalid JSON', () => {
    const error = errorOf(() => parseSessionLog(`${lines(start)}{oops\n${lines(turn)}`, 'log.jsonl'))
    expect(error.message).toBe('log.jsonl:2: not valid JSON')
    expect(error.location).toEqual({ file: 'log.jsonl', line: 2 })
  })

  it('rejects an unknown event type unless it is marked ignorable', () => {
    const unknown = { seq: 1, time: 1, type: 'plugin/thing', data: {} }
    expect(errorOf(() => parseSessionLog(lines(start, unknown), 'l')).message).toMatch(
      /^l:2: unknown event type "plugin\/thing"/,
    )
    const read = parseSessionLog(lines(start, { ...unknown, ignorable: true }, { ...turn, seq: 2 }), 'l')
    expect(read.events).toHaveLength(3)
  })

  it('rejects a bad shape with the field at fault', () => {
    const bad = { ...turn, data: { turn: 'one' } }
    expect(errorOf(() => parseSessionLog(lines(start, bad), 'l')).message).toBe(
      'l:2: data.turn must be a whole number of zero or more',
    )
  })

  it('rejects a seq that is not the next one', () => {
    expect(errorOf(() => parseSessionLog(lines(start, { ...turn, seq: 5 }), 'l')).message).toMatch(
      /^l:2: .*seq must be 1/,
    )
  })

  it('rejects time going backwards', () => {
    expect(
      errorOf(() => parseSessionLog(lines(start, { ...turn, time: 5 }, { ...user, time: 2 }), 'l')).message,
    ).toMatch(/^l:3: .*goes backwards/)
  })

  it('reports a torn final line instead of failing or dropping it silently', () => {
    const text = `${lines(start, turn)}{"seq":2,"time":1,"type":"user/mes`
    const read = parseSessionLog(text, 'l')
    expect(read.events).toEqual([start, turn])
    expect(read.torn).toEqual({ line: 3, text: '{"seq":2,"time":1,"type":"user/mes' })
  })

  it('treats a broken line that is not last as corruption', () => {
    expect(() => parseSessionLog(`${lines(start)}{"seq":1\n${lines(turn)}`, 'l')).toThrow(
      /l:2: not valid JSON/,
    )
  })
})

describe('the JSONL writer', () => {
  it('never overwrites an existing log', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'store-')), 'a.jsonl')
    writeFileSync(file, lines(start))
    expect(() => JsonlSessionWriter.create(file)).toThrow(/already exists/)
    expect(readFileSync(file, 'utf8')).toBe(lines(start))
  })

  it('resumes a torn log keeping every intact line and saving the torn bytes aside', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'store-')), 'a.jsonl')
    writeFileSync(file, lines(start, turn))
    appendFileSync(file, '{"seq":2,"ti')
    const { writer, log } = JsonlSessionWriter.resume(file)
    expect(log.events).toEqual([start, turn])
    writer.append(user)
    writer.close()
    expect(readSessionLog(file).events).toEqual([start, turn, user])
    expect(readFileSync(`${file}.torn`, 'utf8')).toBe('line 3: {"seq":2,"ti\n')
  })
})
