import { describe, expect, it } from 'vitest'
import { contentHash, type RequestDigest } from '../../../providers/wire/digest.ts'
import { divergence } from './replay.ts'

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
