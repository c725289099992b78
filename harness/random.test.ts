import { describe, expect, it } from 'vitest'
import { hashKey64 } from './random.ts'

const units = (key: string) => [...key].map((unit) => unit.charCodeAt(0))

describe('hashKey64', () => {
  it("is cyrb53's two lanes whole, four code units the same on every run", () => {
    // cyrb53('') is 3338908027751811: its low 32 bits and the low 21 of its second lane.
    const [a, b, c, d] = units(hashKey64(''))
    expect((d as number) * 65536 + (c as number)).toBeGreaterThan(0)
    expect(
      (((d as number) * 65536 + (c as number)) % 2 ** 21) * 2 ** 32 + (b as number) * 65536 + (a as number),
    ).toBe(3338908027751811)
    expect(units(hashKey64('claude-code\u0000req_011CV7\u00002026-12-07T21:42:12.098Z'))).toEqual([
      5045, 33817, 59059, 44443,
    ])
  })

  it('tells apart a hundred thousand ids that differ in one character or one millisecond', () => {
    const keys = new Set<string>()
    for (let index = 0; index < 50_000; index += 1) {
      keys.add(hashKey64(`req_sim${String(index).padStart(6, '0')}\u00002026-12-07T21:42:12.098Z`))
      keys.add(
        hashKey64(
          `req_sim000001\u00002026-12-07T21:${String(index % 60).padStart(2, '0')}:${String(index).padStart(6, '0')}Z`,
        ),
      )
    }
    expect(keys.size).toBe(100_000)
  })
})
