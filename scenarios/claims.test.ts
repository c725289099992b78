import { describe, expect, it } from 'vitest'
import { sessionRows } from '../reports/testing.ts'
import { evaluateClaims } from './claims.ts'
import type { Scenario } from './types.ts'

const scenario: Scenario = {
  name: 'two-variants',
  demonstrates: 'Variant a reads more than variant b.',
  variants: [{ name: 'a' }, { name: 'b' }],
  system: 'system',
  tools: [],
  script: [],
  claims: [
    {
      id: 'a-reads-more',
      text: 'a reads more than b.',
      variants: ['a', 'b'],
      check(rows) {
        const read = (variant: string) => rows(variant).reduce((sum, row) => sum + row.cacheReadTokens, 0)
        return { holds: read('a') > read('b'), observed: `a ${read('a')}, b ${read('b')}` }
      },
    },
    {
      id: 'anthropic-only',
      text: 'Only on Anthropic.',
      variants: ['a'],
      providers: ['anthropic'],
      check: () => ({ holds: true, observed: '' }),
    },
  ],
}

const session = (variant: string, provider: 'anthropic' | 'deepseek', read: number) =>
  sessionRows({ scenario: 'two-variants', variant, provider }, [{ uncached: 1000 }, { read, uncached: 10 }])

describe('evaluateClaims', () => {
  it('judges each claim on each provider the rows cover, on the rows of the variants it names', () => {
    const rows = [
      ...session('a', 'anthropic', 900),
      ...session('b', 'anthropic', 100),
      ...session('a', 'deepseek', 100),
      ...session('b', 'deepseek', 900),
    ]
    const results = evaluateClaims([scenario], rows)
    expect(results.map((result) => [result.provider, result.claim, result.status, result.observed])).toEqual([
      ['anthropic', 'a-reads-more', 'holds', 'a 900, b 100'],
      ['anthropic', 'anthropic-only', 'holds', ''],
      ['deepseek', 'a-reads-more', 'fails', 'a 100, b 900'],
    ])
  })

  it('calls a claim not run when a variant it reads has no rows, never failed', () => {
    const results = evaluateClaims([scenario], session('a', 'anthropic', 900))
    expect(results.find((result) => result.claim === 'a-reads-more')).toMatchObject({
      status: 'not-run',
      observed: '',
    })
  })
})
