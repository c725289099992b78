import { describe, expect, it } from 'vitest'
import { PROVIDER_IDS } from '../harness/types.ts'
import { findModel } from '../providers/catalog.ts'
import { appendOnly } from './append-only.ts'
import { idleTtl } from './idle-ttl.ts'
import { parallelToolResults } from './parallel-tool-results.ts'
import { promptChange } from './prompt-change.ts'
import { chooseModel, variantRequirements, variantUnmet } from './requirements.ts'
import { planMatrix } from './run.ts'
import { seriesStartUnchanged } from './series-start-unchanged.ts'

const sonnet = findModel('anthropic', 'claude-sonnet-4-6')
const opus = findModel('anthropic', 'claude-opus-4-8')

describe('what a variant needs from its model', () => {
  it('a variant that appends the system prompt in history needs the in-history route', () => {
    expect(variantRequirements({ name: 'in-history', policies: { route: 'in-history' } })).toEqual([
      { kind: 'system-in-history' },
    ])
  })

  it('rewriting the head, following the model, or keeping the prompt in the header needs nothing', () => {
    expect(variantRequirements({ name: 'unsupported', policies: { route: 'unsupported' } })).toEqual([])
    expect(variantRequirements({ name: 'default' })).toEqual([])
    expect(
      variantRequirements({ name: 'header', policies: { systemPrompt: 'header', route: 'in-history' } }),
    ).toEqual([])
  })

  it('a model with the unsupported route cannot serve it, and says why; one with in-history can', () => {
    const variant = { name: 'in-history', policies: { route: 'in-history' as const } }
    if (sonnet === undefined || opus === undefined) throw new Error('catalog lost a model')
    expect(variantUnmet(variant, sonnet)).toMatch(
      /claude-sonnet-4-6 reads the system prompt only at the head/,
    )
    expect(variantUnmet(variant, opus)).toBeUndefined()
  })
})

describe('the model a scenario runs on', () => {
  it('is the default model when it serves every variant', () => {
    expect(chooseModel(appendOnly, 'anthropic')).toEqual({ entry: sonnet, notApplicable: [] })
    expect(chooseModel(promptChange, 'openai-chat').entry.model).toBe('gpt-5.4')
    expect(chooseModel(promptChange, 'deepseek').entry.model).toBe('deepseek-flash')
  })

  it('is the first catalog model of the vendor that serves every variant when the default does not', () => {
    for (const scenario of [promptChange, seriesStartUnchanged]) {
      expect(chooseModel(scenario, 'anthropic')).toEqual({ entry: opus, notApplicable: [] })
    }
  })

  it('is an explicit model as given, with the variants it cannot serve not applicable', () => {
    const choice = chooseModel(promptChange, 'anthropic', 'claude-sonnet-4-6')
    expect(choice.entry.model).toBe('claude-sonnet-4-6')
    expect(choice.notApplicable.map((entry) => entry.variant.name)).toEqual(['in-history'])
    const deepseekPro = chooseModel(seriesStartUnchanged, 'deepseek', 'deepseek-v4-pro')
    expect(deepseekPro.notApplicable.map((entry) => entry.variant.name)).toEqual(['consolidate', 'keep-live'])
  })
})

describe('planning a matrix', () => {
  it('runs every variant of a scenario on one model per provider', () => {
    const { plans, notApplicable } = planMatrix(
      [promptChange],
      ['anthropic', 'openai-chat', 'openai-responses', 'deepseek'],
    )
    expect(notApplicable).toEqual([])
    expect(plans.map((plan) => `${plan.variant.name}.${plan.provider}:${plan.model}`)).toEqual([
      'in-history.anthropic:claude-opus-4-8',
      'in-history.openai-chat:gpt-5.4',
      'in-history.openai-responses:gpt-5.4',
      'in-history.deepseek:deepseek-flash',
      'unsupported.anthropic:claude-opus-4-8',
      'unsupported.openai-chat:gpt-5.4',
      'unsupported.openai-responses:gpt-5.4',
      'unsupported.deepseek:deepseek-flash',
    ])
  })

  it('lists a variant no model of a provider serves as not applicable, with the reason', () => {
    const { plans, notApplicable } = planMatrix([promptChange], ['bedrock'])
    expect(plans.map((plan) => plan.variant.name)).toEqual(['unsupported'])
    expect(notApplicable.map((entry) => [entry.variant, entry.reason])).toEqual([
      [
        'in-history',
        "needs the in-history system-prompt route; anthropic.claude-sonnet-4-6 reads the system prompt only at the head (route 'unsupported')",
      ],
    ])
  })

  it('lists in-history as not applicable on Gemini, whose models take the prompt only in systemInstruction', () => {
    const { plans, notApplicable } = planMatrix([promptChange], ['gemini'])
    expect(notApplicable.map((entry) => `${entry.variant}:${entry.model}`)).toEqual([
      'in-history:gemini-2.5-flash',
    ])
    expect(plans.map((plan) => plan.variant.name)).toEqual(['unsupported'])
  })

  it('lists a 1-hour lifetime as not applicable on Gemini, whose implicit cache has no lifetime option', () => {
    const { notApplicable } = planMatrix([idleTtl], ['gemini', 'anthropic'])
    expect(notApplicable.map((entry) => `${entry.variant}.${entry.provider}`)).toEqual(['ttl-1h.gemini'])
    expect(notApplicable[0]?.reason).toMatch(/implicit cache has none/)
  })

  it('chooses the model from all of the scenario’s variants, so a filtered run gives the same numbers', () => {
    const { plans } = planMatrix([promptChange], ['anthropic'], { variants: ['unsupported'] })
    expect(plans.map((plan) => plan.model)).toEqual(['claude-opus-4-8'])
  })

  it('lists the variants an explicit model cannot serve instead of running them', () => {
    const { plans, notApplicable } = planMatrix([promptChange, appendOnly], ['anthropic'], {
      model: 'claude-sonnet-4-6',
    })
    expect(plans.map((plan) => `${plan.scenario.name}/${plan.variant.name}`)).toEqual([
      'prompt-change/unsupported',
      'append-only/default',
    ])
    expect(notApplicable).toEqual([
      {
        scenario: 'prompt-change',
        variant: 'in-history',
        provider: 'anthropic',
        model: 'claude-sonnet-4-6',
        reason: expect.stringMatching(/needs the in-history system-prompt route/),
      },
    ])
  })

  it('keeps a scenario to the providers it names', () => {
    const { plans } = planMatrix([parallelToolResults], PROVIDER_IDS, { variants: ['automatic'] })
    expect(plans.map((plan) => plan.provider)).toEqual(['anthropic'])
  })
})
