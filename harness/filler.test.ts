import { describe, expect, it } from 'vitest'
import { encode } from '../providers/sim/tokens.ts'
import { fillerText } from './filler.ts'

describe('fillerText', () => {
  it.each([1, 13, 14, 15, 100, 1000, 4321])('has exactly %i tokens', (count) => {
    expect(encode(fillerText(count, 'size')).length).toBe(count)
  })

  it('is the same for the same seed and differs for another', () => {
    expect(fillerText(200, 'a')).toBe(fillerText(200, 'a'))
    expect(fillerText(200, 'a')).not.toBe(fillerText(200, 'b'))
  })
})
