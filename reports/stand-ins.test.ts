import { describe, expect, it } from 'vitest'
import { stepsCsv } from './csv.ts'
import { parseStepsCsv } from './parse.ts'
import { priceSource, standInLines, standInRuleLines, standInUses } from './stand-ins.ts'
import { summarize } from './summary.ts'
import { stepRow } from './testing.ts'

describe('price sources', () => {
  const own = { ...stepRow({ model: 'claude-sonnet-4-6' }), costUsd: 1 }
  const next = { ...stepRow({ model: 'claude-next', simulatedAs: 'claude-opus-5-5' }), costUsd: 0.25 }

  it('name the catalog or the stand-in a row is priced as', () => {
    expect(priceSource(own)).toBe('catalog')
    expect(priceSource(next)).toBe('stand-in claude-opus-5-5')
  })

  it('survive steps.csv without the simulated_as cell: the price source alone names the stand-in', () => {
    const csv = stepsCsv([next])
    const [head = '', line = ''] = csv.split('\n')
    const columns = head.split(',')
    const cells = line.split(',')
    cells[columns.indexOf('simulated_as')] = ''
    const [back] = parseStepsCsv(`${head}\n${cells.join(',')}\n`, 'steps.csv')
    expect(back?.simulatedAs).toBe('claude-opus-5-5')
  })

  it('sum the dollars on a stand-in per model, told once per model however many rows', () => {
    const { uses, totalUsd } = standInUses([own, next, next, { ...next, ok: false }])
    expect(uses).toEqual([{ model: 'claude-next', standIn: 'claude-opus-5-5', requests: 2, costUsd: 0.5 }])
    expect(totalUsd).toBe(1.5)
    expect(standInLines(uses, totalUsd)).toEqual([
      "claude-next is not in the catalog: priced and simulated as claude-opus-5-5; $0.5000 of $1.5000 (2 requests) rests on claude-opus-5-5's prices",
    ])
  })

  it('put the stand-in dollars in the summary, only where there are some', () => {
    const [summary] = summarize([next, next])
    expect(summary?.standInCostUsd).toBe(0.5)
    expect(summarize([own])[0]?.standInCostUsd).toBeUndefined()
  })

  it('tell calibrate which models it predicts with another model’s rules, once each', () => {
    expect(
      standInRuleLines([
        { provider: 'anthropic', model: 'claude-opus-4-1-20250805' },
        { provider: 'anthropic', model: 'claude-next-1' },
        { provider: 'anthropic', model: 'claude-next-1' },
      ]),
    ).toHaveLength(1)
  })
})
