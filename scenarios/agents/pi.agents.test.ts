// pi 0.73.1 against serve through a custom provider on the Anthropic Messages API (the way its README
// reaches a proxy): two turns, the second continued with `-c`, each reading a file. One main
// conversation of two turns, no break.

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StepRow } from '../../reports/types.ts'
import { type AgentBench, startAgentBench } from './bench.ts'

let bench: AgentBench
let rows: StepRow[]

beforeAll(async () => {
  bench = await startAgentBench()
  await bench.run(
    'pi',
    [{ prompt: 'What does README.md say?' }, { prompt: 'And NOTES.md?', continues: true }],
    {
      setup: ({ workspace }) => {
        writeFileSync(join(workspace, 'README.md'), '# Calc\nA tiny calculator.\n')
        writeFileSync(join(workspace, 'NOTES.md'), 'Add subtraction next.\n')
      },
    },
  )
  rows = bench.rows()
})

afterAll(() => bench?.close())

describe('pi 0.73.1 on a custom Anthropic provider, captured through serve', () => {
  it('is served every request, none refused', () => {
    expect(
      bench.exchanges.filter((exchange) => exchange.status !== 200).map((exchange) => exchange.error),
    ).toEqual([])
  })

  it('keeps one main conversation of two turns, each with a tool round trip, and no break', () => {
    expect(new Set(rows.map((row) => row.variant)).size).toBe(1)
    expect(rows.map((row) => `${row.turn}.${row.step}`)).toEqual(['1.1', '1.2', '2.1', '2.2'])
    expect(rows.filter((row) => row.breakCause !== undefined)).toEqual([])
    expect(rows.every((row) => row.agent === 'pi')).toBe(true)
  })
})
