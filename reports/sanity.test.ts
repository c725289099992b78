import { describe, expect, it } from 'vitest'
import { rowProblems } from './sanity.ts'
import { stepRow } from './testing.ts'

describe('impossible rows', () => {
  it('accepts rows the rules allow, on every provider', () => {
    expect(
      rowProblems([
        stepRow({ provider: 'openai-chat', model: 'gpt-5.4', read: 1152, uncached: 300, lost: 128 }),
        stepRow({ provider: 'anthropic', model: 'claude-sonnet-4-6', read: 0, write: 1500, lost: 1024 }),
        stepRow({ provider: 'deepseek', model: 'deepseek-flash', read: 64, uncached: 10, lost: 3 }),
      ]),
    ).toEqual([])
  })

  it('names an OpenAI ideal off the 128-token grid or below the 1,024-token minimum', () => {
    const problems = rowProblems([
      stepRow({ provider: 'openai-chat', model: 'gpt-5.4', read: 1024, uncached: 400, lost: 100, turn: 3 }),
      stepRow({ provider: 'openai-responses', model: 'gpt-5.4', read: 0, uncached: 900, lost: 424, turn: 4 }),
    ])
    expect(problems).toEqual([
      'append-only · default · openai-chat 3.1: ideal 1124 is neither 0 nor 1024 plus whole 128-token steps',
      'append-only · default · openai-responses 4.1: ideal 424 is neither 0 nor 1024 plus whole 128-token steps',
    ])
  })

  it('names an Anthropic ideal below the model minimum, and a system message the model refuses', () => {
    const problems = rowProblems([
      stepRow({ provider: 'anthropic', model: 'claude-haiku-4-5', read: 0, uncached: 427, lost: 424 }),
      {
        ...stepRow({ provider: 'anthropic', model: 'claude-sonnet-4-6', read: 2000, uncached: 10 }),
        route: 'in-history',
      },
    ])
    expect(problems[0]).toMatch(/ideal 424 is below the model's cache minimum of 4096/)
    expect(problems[1]).toMatch(/claude-sonnet-4-6 does not accept system messages in history/)
  })

  it('names losses beyond the input and skips failed attempts', () => {
    const problems = rowProblems([
      stepRow({ provider: 'deepseek', model: 'deepseek-flash', read: 0, uncached: 100, lost: 150 }),
      stepRow({ provider: 'deepseek', model: 'deepseek-flash', read: 0, uncached: 100, providerLost: 101 }),
      stepRow({ failed: true, turn: 9 }),
    ])
    expect(problems.some((problem) => /lost_tokens 150 is outside 0\.\.input \(100\)/.test(problem))).toBe(
      true,
    )
    expect(
      problems.some((problem) => /provider_lost_tokens 101 with lost 0 exceeds the input/.test(problem)),
    ).toBe(true)
    expect(problems.every((problem) => !problem.includes(' 9.1:'))).toBe(true)
  })
})
