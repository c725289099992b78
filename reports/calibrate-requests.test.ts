import { describe, expect, it } from 'vitest'
import { calibrate } from './calibrate.ts'
import { CalibrationRequests } from './calibrate-requests.ts'
import type { ObservedRequest } from './observed/transcripts/types.ts'

function request(
  source: string,
  session: string,
  seconds: number,
  read: number,
  extra: Partial<ObservedRequest> = {},
) {
  const observed: ObservedRequest = {
    format: 'claude-code',
    source,
    session,
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    time: new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)).toISOString(),
    usage: { input: 10_000, cacheRead: read, cacheWrite: 100, uncached: 9_900 - read, output: 50, raw: {} },
    events: [],
    ...extra,
  }
  return observed
}

describe('the packed calibration requests', () => {
  it('gives back every source as it was given, whatever its shape', () => {
    const sources = [
      '/tmp/a b/s.jsonl:12',
      'capture-exchange-3',
      'x.jsonl:07',
      'C:\\logs\\f.jsonl:3',
      ':5',
      'f:',
    ]
    const requests = CalibrationRequests.of(sources.map((source, index) => request(source, 's', index, 0)))
    expect(sources.map((_, index) => requests.source(index))).toEqual(sources)
  })

  it('links a request to its session’s previous one of the same format only', () => {
    const requests = CalibrationRequests.of([
      request('f:1', 's', 0, 0),
      request('g:1', 's', 1, 0, { format: 'codex' }),
      request('f:2', 's', 2, 9_000),
      request('f:3', 't', 3, 0),
    ])
    expect([0, 1, 2, 3].map((index) => requests.previous(index))).toEqual([
      undefined,
      undefined,
      0,
      undefined,
    ])
    expect(requests.seconds(0, 2)).toBe(2)
  })

  it('keeps every request across storage chunks', () => {
    const many = Array.from({ length: 10_000 }, (_, index) =>
      request(`f:${index + 1}`, 's', index, index, { turn: index + 1 }),
    )
    const requests = CalibrationRequests.of(many)
    for (const index of [0, 4_095, 4_096, 8_191, 8_192, 9_999]) {
      expect(requests.read(index)).toBe(index)
      expect(requests.turn(index)).toBe(index + 1)
      expect(requests.source(index)).toBe(`f:${index + 1}`)
      expect(requests.previous(index)).toBe(index === 0 ? undefined : index - 1)
    }
  })

  it('makes the same steps each time they are walked, one per request after a session’s first', () => {
    const [model] = calibrate({
      requests: CalibrationRequests.of([
        request('f:1', 's', 0, 0),
        request('f:2', 's', 10, 100),
        request('f:3', 's', 20, 50),
        request('f:4', 't', 30, 0),
      ]),
      catalogGrid: () => undefined,
    })
    const steps = model?.steps ?? []
    expect(steps.length).toBe(2)
    expect([...steps]).toEqual([...steps])
    expect([...steps].map((step) => [step.source, step.agreement])).toEqual([
      ['f:2', 'exact'],
      ['f:3', 'off'],
    ])
  })
})
