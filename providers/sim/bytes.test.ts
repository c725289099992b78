import { describe, expect, it } from 'vitest'
import { stringBytes } from './bytes.ts'

describe('stringBytes', () => {
  it('counts Latin-1 text one byte a character after the header', () => {
    expect(stringBytes('abcd') - stringBytes('')).toBe(4)
    expect(stringBytes('café') - stringBytes('')).toBe(4)
  })

  it('counts a string with any character outside Latin-1 two bytes a character', () => {
    expect(stringBytes('abc€') - stringBytes('')).toBe(8)
    expect(stringBytes('日本') - stringBytes('')).toBe(4)
  })

  it('grows with the text, so a longer entry never counts less', () => {
    expect(stringBytes('a'.repeat(1_000))).toBeGreaterThan(stringBytes('a'.repeat(999)))
    expect(stringBytes('')).toBeGreaterThan(0)
  })
})
