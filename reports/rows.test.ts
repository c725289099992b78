import { describe, expect, it } from 'vitest'
import type { Usage } from '../harness/types.ts'
import { type RowLabels, stepRow } from './rows.ts'

const prices = { input: 3, cacheRead: 0.3, cacheWrite5m: 3.75, cacheWrite1h: 6, output: 15 }
const usage = (uncached: number): Usage => ({ input: uncached, uncached, output: 10, raw: null })

describe('the keys of a row', () => {
  const labels: RowLabels = {
    runId: 'r',
    scenario: 's',
    variant: 'v',
    provider: 'anthropic',
    model: 'm',
    route: 'unsupported',
    turn: 1,
    step: 1,
    attempt: 0,
    headerReason: undefined,
    startsSeries: false,
    virtualTimeS: 0,
    latencyMs: 1,
  }
  const measured = {
    usage: usage(10),
    cold: true,
    counterfactual: undefined,
    attribution: undefined,
    prices,
  }

  it('come labels first, then the measurements, then what the port knows of the conversation', () => {
    const keys = Object.keys(stepRow({ labels, measured, conversation: { session: 'main', agent: 'a/1' } }))
    expect(keys.slice(0, 14)).toEqual([...Object.keys(labels), 'ok'])
    expect(keys.slice(-4)).toEqual([
      'predictedCacheReadTokens',
      'predictedCacheWriteTokens',
      'session',
      'agent',
    ])
    expect(Object.keys(stepRow({ labels }))).toEqual(keys.slice(0, -2))
  })

  it('keep a loop row’s loop where its labels carry it, after the others', () => {
    const loopLabels = { ...labels, loop: 'ai-sdk' as const }
    const keys = Object.keys(stepRow({ labels: loopLabels, measured, conversation: { loop: 'ai-sdk' } }))
    expect(keys.indexOf('loop')).toBe(13)
    expect(keys).toHaveLength(34)
  })
})
