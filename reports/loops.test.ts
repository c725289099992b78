import { describe, expect, it } from 'vitest'
import type { RequestDigest } from '../providers/wire/digest.ts'
import { compareLoops, firstDifference, loopsCsv } from './loops.ts'
import { stepRow } from './testing.ts'

function digest(
  hashes: string[],
  config: Record<string, unknown> = { model: 'deepseek-flash' },
): RequestDigest {
  return {
    segments: hashes.map((hash, index) => [`messages[${index}]`, hash, 10] as const),
    trailing: 0,
    total: hashes.length * 10,
    items: [],
    config,
  }
}

describe('the first difference of two requests', () => {
  it('is none when every segment agrees', () => {
    expect(firstDifference(digest(['a', 'b']), digest(['a', 'b']))).toBeUndefined()
  })

  it('names the first segment that differs', () => {
    expect(firstDifference(digest(['a', 'b', 'c']), digest(['a', 'x', 'c']))).toBe('messages[1]')
  })

  it('names the first segment one request has and the other lacks', () => {
    expect(firstDifference(digest(['a']), digest(['a', 'b']))).toBe('messages[1]')
    expect(firstDifference(digest(['a', 'b']), digest(['a']))).toBe('messages[1]')
  })
})

describe('the model loop beside DSH', () => {
  const model = {
    rows: [stepRow({ turn: 1, step: 1 }), stepRow({ turn: 1, step: 2 }), stepRow({ turn: 2, step: 1 })],
    digests: [digest(['a']), digest(['a', 'b']), digest(['a', 'b', 'c'])],
    breakEventTypes: [],
  }
  const dsh = {
    rows: [stepRow({ turn: 1, step: 1 }), stepRow({ turn: 1, step: 2 }), stepRow({ turn: 1, step: 3 })],
    digests: [digest(['a']), digest(['a', 'x'], { model: 'deepseek-flash', max_tokens: 5 }), digest(['a'])],
    breakEventTypes: [undefined, 'request/header', undefined],
  }
  const comparison = compareLoops(model, dsh)

  it('pairs requests by turn and step and says where each pair differs', () => {
    expect(
      comparison.steps.map((step) => [step.turn, step.step, step.agreement, step.firstDifference]),
    ).toEqual([
      [1, 1, 'same', undefined],
      [1, 2, 'differs', 'messages[1]'],
      [2, 1, 'model-only', undefined],
      [1, 3, 'dsh-only', undefined],
    ])
  })

  it('names the settings that differ and the event type of DSH’s break', () => {
    const second = comparison.steps[1]
    expect(second?.differingSettings).toEqual(['max_tokens'])
    expect(second?.dsh?.breakEventType).toBe('request/header')
  })

  it('writes one loops.csv line per step under its header', () => {
    const lines = loopsCsv([comparison]).trim().split('\n')
    expect(lines[0]).toMatch(/^scenario,variant,provider,turn,step,attempt,agreement,first_differing_node/)
    expect(lines).toHaveLength(5)
    expect(lines[2]).toContain(',differs,messages[1],max_tokens,')
  })
})
