// opencode 1.18.33 against serve on the OpenAI-compatible wire: two turns (the second `--continue`d),
// each with a tool call, the first called by a `*` rule. Its title request, which declares no tools, is a
// side conversation the rule leaves to the default; the main conversation starts at turn 1 and breaks
// nowhere.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StepRow } from '../../reports/types.ts'
import { type AgentBench, startAgentBench } from './bench.ts'

let bench: AgentBench
let rows: StepRow[]

beforeAll(async () => {
  bench = await startAgentBench([
    { session: '*', turn: 1, step: 1, tools: [{ name: 'glob', arguments: { pattern: '*' } }] },
  ])
  await bench.run('opencode', [{ prompt: 'List the files' }, { prompt: 'Read the notes', continues: true }])
  rows = bench.rows()
})

afterAll(() => bench?.close())

describe('opencode 1.18.33 on the OpenAI-compatible wire, captured through serve', () => {
  it('is served every request, none refused', () => {
    expect(
      bench.exchanges.filter((exchange) => exchange.status !== 200).map((exchange) => exchange.error),
    ).toEqual([])
  })

  it('puts its title request in a side conversation of the session', () => {
    const titles = bench.exchanges.filter((exchange) => exchange.purpose === 'title')
    expect(titles).toHaveLength(1)
    expect(titles[0]).toMatchObject({ kind: 'side' })
    expect(titles[0]?.session).toMatch(/^ses_/)
    expect(titles[0]?.response).not.toContain('glob')
  })

  it('starts its main conversation at turn 1, named by its session id, and breaks nowhere', () => {
    const main = rows.filter((row) => (row.conversationKind ?? 'main') === 'main')
    expect(new Set(main.map((row) => row.variant))).toEqual(
      new Set([bench.exchanges.find((exchange) => exchange.purpose === 'title')?.session]),
    )
    expect([...new Set(main.map((row) => row.turn))]).toEqual([1, 2])
    const first = bench.exchanges.find((exchange) => exchange.kind === 'main')
    expect(first?.response).toContain('glob')
    expect(main.filter((row) => row.breakCause !== undefined)).toEqual([])
    expect(rows.every((row) => row.agent === 'opencode/1.18.33')).toBe(true)
  })
})
