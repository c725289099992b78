import { describe, expect, it } from 'vitest'
import { CachelabError } from '../harness/errors.ts'
import { SCENARIOS } from './index.ts'
import { planMatrix } from './run.ts'
import { assignShards, parseShard, plannedRequests, sharedRunIdOf, whereOf } from './shards.ts'

describe('parseShard', () => {
  it('reads i/n with 1 ≤ i ≤ n', () => {
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 })
    expect(parseShard('1/1')).toEqual({ index: 1, count: 1 })
  })

  it.each(['0/3', '4/3', '1/0', 'x/y', '-1/2', '1/2/3', '', '1.5/3'])(
    'refuses %j as a usage error',
    (value) => {
      const error = (() => {
        try {
          parseShard(value)
        } catch (caught) {
          return caught
        }
      })()
      expect(error).toBeInstanceOf(CachelabError)
      expect((error as CachelabError).kind).toBe('usage')
      expect((error as CachelabError).message).not.toContain('\n')
    },
  )
})

describe('assignShards', () => {
  const cells = [9, 7, 6, 5, 5, 4, 3, 2, 2, 1].map((cost, index) => ({ cost, group: `cell-${index}` }))

  it('gives every cell one shard, the same every time', () => {
    const first = assignShards(cells, 3)
    expect(first).toHaveLength(cells.length)
    expect(first.every((shard) => shard >= 1 && shard <= 3)).toBe(true)
    expect(assignShards(cells, 3)).toEqual(first)
  })

  it('balances the cost: no shard heavier than another by more than its heaviest cell', () => {
    for (const count of [2, 3, 4]) {
      const assigned = assignShards(cells, count)
      const loads = Array.from({ length: count }, (_, shard) =>
        cells.reduce((sum, cell, index) => sum + (assigned[index] === shard + 1 ? cell.cost : 0), 0),
      )
      expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(9)
      expect(loads.reduce((sum, load) => sum + load, 0)).toBe(44)
    }
  })

  it('keeps a group on one shard', () => {
    const grouped = cells.map((cell, index) => ({ ...cell, group: `group-${index % 3}` }))
    const assigned = assignShards(grouped, 2)
    for (const group of ['group-0', 'group-1', 'group-2'])
      expect(new Set(assigned.filter((_, index) => grouped[index]?.group === group)).size).toBe(1)
  })

  it('leaves a shard empty when there are more shards than cells', () => {
    expect(assignShards(cells.slice(0, 2), 4)).toEqual([1, 2])
  })
})

describe('plannedRequests', () => {
  it('counts a long session many times a short one', () => {
    const { plans } = planMatrix(
      SCENARIOS.filter((scenario) => ['append-only', 'long-session'].includes(scenario.name)),
      ['anthropic'],
    )
    const [short, long] = plans.map(plannedRequests)
    expect(short).toBeGreaterThan(1)
    expect(long).toBeGreaterThan(50 * (short as number))
  })
})

describe('sharedRunIdOf', () => {
  it('takes CACHELAB_RUN_ID first, then the CI run', () => {
    expect(sharedRunIdOf({ CACHELAB_RUN_ID: 'nightly-7', GITHUB_RUN_ID: '1' })).toBe('nightly-7')
    expect(sharedRunIdOf({ GITHUB_RUN_ID: '99', GITHUB_RUN_ATTEMPT: '2' })).toBe('gh99-2')
    expect(sharedRunIdOf({ CI_PIPELINE_ID: '5' })).toBe('gl5')
    expect(sharedRunIdOf({})).toBeUndefined()
  })

  it('records the host and only the CI variables that are set', () => {
    expect(whereOf('runner-3', { GITHUB_JOB: 'shard', CI_JOB_ID: '', PATH: '/bin' })).toEqual({
      host: 'runner-3',
      GITHUB_JOB: 'shard',
    })
  })
})
