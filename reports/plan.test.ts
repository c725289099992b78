import { describe, expect, it } from 'vitest'
import { parsePlan, planText, type RunPlan, selectionText, standing } from './plan.ts'

const plan: RunPlan = {
  selection: { scenarios: ['prompt-change'], variants: 'all', providers: 'all', loops: ['model'] },
  sessions: [{ scenario: 'prompt-change', variant: 'in-history', provider: 'anthropic' }],
  leftOut: [
    {
      scenario: 'prompt-change',
      variant: 'in-history',
      provider: 'bedrock',
      reason: 'the model does not accept system messages in history',
    },
  ],
}

describe('a run plan', () => {
  it('reads back what it wrote', () => {
    expect(parsePlan(planText(plan), 'plan.json')).toEqual(plan)
  })

  it('is an input error naming the file when it is not a plan', () => {
    expect(() => parsePlan('{', 'run/plan.json')).toThrow(
      "run/plan.json is not JSON: the run's plan cannot be read",
    )
    expect(() => parsePlan('{"format":"other"}', 'run/plan.json')).toThrow(
      'run/plan.json: format must be "cachelab-plan"',
    )
    const bad = JSON.parse(planText(plan))
    bad.selection.providers = 'some'
    expect(() => parsePlan(JSON.stringify(bad), 'p')).toThrow(
      'p: selection.scenarios, .variants and .providers must each be "all" or a list of names',
    )
  })

  it('places a session as planned, left out with the reason, or outside the selection', () => {
    expect(
      standing(plan, { scenario: 'prompt-change', variant: 'in-history', provider: 'anthropic' }),
    ).toEqual({
      kind: 'planned',
    })
    expect(standing(plan, { scenario: 'prompt-change', variant: 'in-history', provider: 'bedrock' })).toEqual(
      {
        kind: 'not-planned',
        reason: 'the model does not accept system messages in history',
      },
    )
    // The selection covers every variant: a variant the run no longer has is not planned, with no reason.
    expect(standing(plan, { scenario: 'prompt-change', variant: 'gone', provider: 'anthropic' })).toEqual({
      kind: 'not-planned',
      reason: undefined,
    })
    expect(standing(plan, { scenario: 'append-only', variant: 'default', provider: 'anthropic' })).toEqual({
      kind: 'outside',
    })
    expect(
      standing(plan, { scenario: 'prompt-change', variant: 'in-history', provider: 'deepseek', loop: 'dsh' }),
    ).toEqual({ kind: 'outside' })
  })

  it('says its selection as the flags that narrowed it', () => {
    expect(selectionText(plan.selection)).toBe('--scenario prompt-change')
    expect(
      selectionText({
        scenarios: 'all',
        variants: ['a', 'b'],
        providers: ['deepseek'],
        loops: ['model', 'dsh'],
      }),
    ).toBe('--variant a,b --provider deepseek --loop model,dsh')
  })
})
