import { describe, expect, it } from 'vitest'
import { defineScenario, warmRatio } from './authoring.ts'
import * as claimHelpers from './claims.ts'
import { scenarioProblems } from './validate.ts'

const base = {
  name: 'two-ways',
  demonstrates: 'One way reads more than the other.',
  system: 'You help.',
  tools: [],
  script: [{ kind: 'turn' as const, user: 'Hello.', steps: [{ text: 'Hi.' }] }],
}

describe('defineScenario', () => {
  it('returns the scenario it is given, which validates like any scenario file', () => {
    const scenario = {
      ...base,
      variants: [{ name: 'a' }, { name: 'b' }],
      claims: [
        {
          id: 'a-reads-more',
          text: 'a reads more than b.',
          variants: ['a', 'b'],
          check: (rows: (variant: 'a' | 'b') => readonly { cacheReadTokens: number }[]) => ({
            holds: rows('a').length >= rows('b').length,
            observed: '',
          }),
        },
      ],
    }
    const defined = defineScenario(scenario)
    expect(defined).toBe(scenario)
    expect(scenarioProblems(defined)).toEqual([])
  })

  it('lets a claim name only variants the scenario declares (checked by tsc)', () => {
    defineScenario({
      ...base,
      variants: [{ name: 'a' }],
      claims: [
        {
          id: 'typo',
          text: 'A misspelt variant.',
          // @ts-expect-error 'b' is not a variant of this scenario
          variants: ['b'],
          check: () => ({ holds: true, observed: '' }),
        },
        {
          id: 'typo-in-check',
          text: 'A misspelt variant inside the check.',
          variants: ['a'],
          // @ts-expect-error 'c' is not a variant of this scenario
          check: (rows) => ({ holds: rows('c').length > 0, observed: '' }),
        },
      ],
    })
  })

  it('re-exports the claim helpers the built-in scenarios use', () => {
    expect(warmRatio).toBe(claimHelpers.warmRatio)
  })
})
