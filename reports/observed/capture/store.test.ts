import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { contentHash, type RequestDigest } from '../../../providers/wire/digest.ts'
import type { CapturedExchange } from '../../../providers/wire/exchange.ts'
import { decodeExchange, encodeExchange, openCapture } from './store.ts'

const segment = (index: number) => [`messages[${index}]`, contentHash(String(index)), 10] as const
const item = (index: number) => ({
  role: index % 2 === 0 ? 'user' : 'assistant',
  hash: contentHash(`i${index}`),
  userTurn: index % 2 === 0,
  size: 40,
})
const digest = (count: number): RequestDigest => ({
  segments: Array.from({ length: count }, (_, index) => segment(index)),
  trailing: 3,
  total: count * 10 + 3,
  items: Array.from({ length: count }, (_, index) => item(index)),
  config: { model: 'gpt-5.4' },
})
const exchange = (seq: number, count: number): CapturedExchange => ({
  seq,
  session: 's',
  conversation: 's',
  kind: 'main',
  identity: seq === 1 ? 'new' : 'continuation',
  time: '2026-11-30T00:00:00.000Z',
  at: seq,
  api: 'openai-chat',
  provider: 'openai-chat',
  model: 'gpt-5.4',
  stream: false,
  status: 200,
  latencyMs: 5,
  turn: seq,
  step: 1,
  attempt: 0,
  digest: digest(count),
})

describe('a capture line', () => {
  it('stores what a request added to the previous one, and reads back the whole digest', () => {
    const first = exchange(1, 3)
    const second = exchange(2, 5)
    const line = encodeExchange(second, first.digest)
    expect(JSON.parse(line).prompt).toMatchObject({ keep: 3, add: [segment(3), segment(4)] })
    expect(decodeExchange(line, first.digest, 'f:2')).toEqual(second)
    expect(decodeExchange(encodeExchange(first, undefined), undefined, 'f:1')).toEqual(first)
  })

  it('names the file and line of a line it cannot read', () => {
    expect(() => decodeExchange('{"seq": 1}', undefined, 'f.jsonl:4')).toThrow(/f\.jsonl:4: at is missing/)
    expect(() => decodeExchange('not json', undefined, 'f.jsonl:5')).toThrow(/f\.jsonl:5: not a JSON line/)
    const line = encodeExchange(exchange(2, 5), digest(3))
    expect(() => decodeExchange(line, undefined, 'f.jsonl:6')).toThrow(/a line is missing/)
  })

  it('is read only from a capture directory of a version it knows', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-store-'))
    expect(() => openCapture(dir)).toThrow(/is not a capture: no capture\.json/)
    writeFileSync(join(dir, 'capture.json'), JSON.stringify({ format: 'cachelab-capture', version: 99 }))
    expect(() => openCapture(dir)).toThrow(/not a cachelab-capture version 1 manifest/)
  })
})
