import { describe, expect, it } from 'vitest'
import supportBot from './examples/support-bot.ts'
import { SCENARIOS } from './index.ts'
import type { Scenario } from './types.ts'
import { scenarioProblems } from './validate.ts'

/** The example with one change, as a user's file might have it. */
function edited(change: (scenario: Record<string, unknown>) => void): unknown {
  const copy = structuredClone({ ...supportBot, claims: [] }) as unknown as Record<string, unknown>
  copy.claims = supportBot.claims
  change(copy)
  return copy
}

describe('scenarioProblems', () => {
  it('accepts every built-in scenario, so the schema it checks is the one the scenarios are written in', () => {
    for (const scenario of SCENARIOS)
      expect([scenario.name, scenarioProblems(scenario)]).toEqual([scenario.name, []])
  })

  it('accepts the example a user copies', () => {
    expect(scenarioProblems(supportBot)).toEqual([])
  })

  it.each<[string, (scenario: Record<string, unknown>) => void, { path: string; message: RegExp }]>([
    ['a missing turn list', (scenario) => delete scenario.script, { path: 'script', message: /^missing$/ }],
    [
      'an empty turn list',
      (scenario) => (scenario.script = []),
      { path: 'script', message: /must not be empty/ },
    ],
    [
      'a turn without steps',
      (scenario) => (scenario.script = [{ kind: 'turn', user: 'hi' }]),
      { path: 'script[0].steps', message: /^missing$/ },
    ],
    [
      'an arrival with an unknown delivery',
      (scenario) =>
        (scenario.script = [
          { kind: 'turn', user: 'hi', steps: [{ text: 'ok', arrivals: [{ delivery: 'shout', text: 'x' }] }] },
        ]),
      {
        path: 'script[0].steps[0].arrivals[0].delivery',
        message: /unknown value "shout" \(expected one of: steer, followup, inject\)/,
      },
    ],
    [
      "a followup arrival's steps checked like a turn's",
      (scenario) =>
        (scenario.script = [
          {
            kind: 'turn',
            user: 'hi',
            steps: [{ text: 'ok', arrivals: [{ delivery: 'followup', text: 'x', steps: [{ txt: 'y' }] }] }],
          },
        ]),
      { path: 'script[0].steps[0].arrivals[0].steps[0].txt', message: /unknown field/ },
    ],
    [
      'an unknown action',
      (scenario) => (scenario.script = [{ kind: 'sleep', seconds: 3 }]),
      { path: 'script[0].kind', message: /unknown value "sleep" \(expected one of: turn, idle, set-system/ },
    ],
    [
      'an unknown variant policy value',
      (scenario) => (scenario.variants = [{ name: 'a', policies: { route: 'sideways' } }]),
      {
        path: 'variants[0].policies.route',
        message: /unknown value "sideways" \(expected one of: in-history, unsupported\)/,
      },
    ],
    [
      'an unknown policy',
      (scenario) => (scenario.variants = [{ name: 'a', policies: { sytemPrompt: 'header' } }]),
      { path: 'variants[0].policies.sytemPrompt', message: /unknown field \(known: systemPrompt, route/ },
    ],
    [
      'a misspelt scenario field',
      (scenario) => (scenario.demonstrate = 'typo'),
      { path: 'demonstrate', message: /unknown field/ },
    ],
    [
      'a variant name that cannot be a file name',
      (scenario) => (scenario.variants = [{ name: '../escape' }]),
      { path: 'variants[0].name', message: /"..\/escape" is not a valid name/ },
    ],
    [
      'a tool name the providers refuse',
      (scenario) => (scenario.tools = [{ name: 'look up', description: '', parameters: {} }]),
      { path: 'tools[0].name', message: /is not a valid name/ },
    ],
    [
      'a size that is not a whole number of tokens',
      (scenario) => (scenario.system = { tokens: 12.5 }),
      { path: 'system.tokens', message: /expected a whole number, got 12.5/ },
    ],
    [
      'a system prompt that is neither text nor a size',
      (scenario) => (scenario.system = 42),
      { path: 'system', message: /expected text, or \{ tokens: N \}/ },
    ],
    [
      'a cache rule that would swap the simulator',
      (scenario) => (scenario.variants = [{ name: 'a', rules: { kind: 'deepseek' } }]),
      { path: 'variants[0].rules.kind', message: /unknown field/ },
    ],
    [
      'an unknown provider',
      (scenario) => (scenario.providers = ['openai']),
      { path: 'providers[0]', message: /unknown value "openai"/ },
    ],
    [
      'a claim without its check',
      (scenario) => (scenario.claims = [{ id: 'c', text: 'A claim.', variants: ['status-in-system'] }]),
      { path: 'claims[0].check', message: /^missing$/ },
    ],
    [
      'a claim that reads an unknown variant',
      (scenario) =>
        (scenario.claims = [
          { id: 'c', text: 'A claim.', variants: ['status-in-sytem'], check: () => undefined },
        ]),
      { path: 'claims[0].variants[0]', message: /"status-in-sytem" is not a variant of this scenario/ },
    ],
    [
      'two variants of one name',
      (scenario) => (scenario.variants = [{ name: 'a' }, { name: 'a' }]),
      { path: 'variants[1].name', message: /duplicate variant "a" \(also at variants\[0\].name\)/ },
    ],
    [
      'tool arguments that are not JSON',
      (scenario) =>
        (scenario.script = [
          {
            kind: 'turn',
            user: 'hi',
            steps: [{ toolCalls: [{ name: 't', arguments: { at: Number.NaN }, result: '' }] }],
          },
        ]),
      { path: 'script[0].steps[0].toolCalls[0].arguments.at', message: /not a JSON number: NaN/ },
    ],
  ])('names the field of %s', (_, change, expected) => {
    const problems = scenarioProblems(edited(change))
    expect(problems[0]).toEqual({ path: expected.path, message: expect.stringMatching(expected.message) })
  })

  it('accepts either form of a rules ttlSeconds, each provider reading its own', () => {
    const withRules = (rules: unknown) =>
      edited(
        (scenario) =>
          (scenario.variants = [{ name: 'status-in-system', rules }, { name: 'status-in-message' }]),
      )
    expect(scenarioProblems(withRules({ ttlSeconds: 600 }))).toEqual([])
    expect(scenarioProblems(withRules({ ttlSeconds: { '5m': 60, '1h': 600 } }))).toEqual([])
    expect(scenarioProblems(withRules({ ttlSeconds: 'long' }))[0]?.path).toBe('variants[0].rules.ttlSeconds')
  })

  it('reports every problem, not only the first', () => {
    const problems = scenarioProblems({
      name: 'x',
      demonstrates: '',
      variants: [],
      tools: [],
      claims: [],
    } satisfies Partial<Scenario>)
    expect(problems.map((problem) => problem.path)).toEqual(['demonstrates', 'variants', 'system', 'script'])
  })

  it('rejects what is not a scenario at all', () => {
    expect(scenarioProblems([supportBot])).toEqual([
      { path: '', message: 'expected an object, got an array' },
    ])
  })
})
