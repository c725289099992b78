import { describe, expect, it } from 'vitest'
import { contentHash, type RequestDigest } from '../../../providers/wire/digest.ts'
import { divergence, faultInside } from './replay.ts'

const digest = (texts: string[], model = 'gpt-5.4'): RequestDigest => ({
  segments: texts.map((text, index) => [`messages[${index}]`, contentHash(text), 10] as const),
  trailing: 0,
  total: texts.length * 10,
  items: [],
  config: { model },
})

describe('where a replayed request leaves its recording', () => {
  it('finds nothing when the request is the recorded one', () => {
    expect(divergence(digest(['a', 'b']), digest(['a', 'b']))).toBeUndefined()
  })

  it('names the first node that differs, an added one, a dropped one, or the model', () => {
    expect(divergence(digest(['a', 'b', 'c']), digest(['a', 'B', 'c']))).toBe('messages[1]')
    expect(divergence(digest(['a', 'b']), digest(['a', 'b', 'extra']))).toBe('messages[2]')
    expect(divergence(digest(['a', 'b']), digest(['a']))).toBe('messages[1]')
    expect(divergence(digest(['a']), digest(['a'], 'gpt-5.6-sol'))).toBe('model')
  })
})

describe('the failure a recorded 200 answer replays with', () => {
  it('is the error event or the cut the recording names, and none for a client that left', () => {
    expect(faultInside(undefined)).toBeUndefined()
    expect(faultInside('error event in the stream')).toEqual({ kind: 'stream-error' })
    expect(faultInside('error event in the stream: overloaded_error')).toEqual({ kind: 'stream-error' })
    expect(faultInside('error in the answer: 502')).toEqual({ kind: 'stream-error' })
    expect(faultInside('stream cut after 3 frames')).toEqual({ kind: 'stream-cut', afterFrames: 3 })
    expect(faultInside('stream cut')).toEqual({ kind: 'stream-cut', afterFrames: 1 })
    expect(faultInside('client went away after 2 frames')).toBeUndefined()
    expect(faultInside('client stopped reading after 2 frames')).toBeUndefined()
    expect(faultInside('cut by shutdown after 0 frames')).toBeUndefined()
  })
})
