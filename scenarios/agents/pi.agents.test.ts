// pi 0.73.1 against serve through a custom provider on the Anthropic Messages API (the way its README
// reaches a proxy): two turns, the second continued with `-c`, each reading a file. One main
// conversation of two turns, no break; `cachelab import` of pi's own session file, found with no path,
// gives the capture's usage request for request.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StepRow } from '../../reports/types.ts'
import {
  type AgentBench,
  type AgentSession,
  agentVersion,
  importAgentSession,
  startAgentBench,
  usageByConversation,
} from './bench.ts'

let bench: AgentBench
let rows: StepRow[]
let session: AgentSession

beforeAll(async () => {
  bench = await startAgentBench()
  session = await bench.run(
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

describe(`pi ${agentVersion('pi')} on a custom Anthropic provider, captured through serve`, () => {
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

describe("pi's own session file, imported with no path", () => {
  it("gives the capture's requests with their usage, the conversation named by its session id", async () => {
    const imported = await importAgentSession(session.place)
    expect(imported.stdout).toMatch(/pi \(1 file/)
    const folder = join(session.place.home, '.pi', 'agent', 'sessions')
    const [project] = readdirSync(folder)
    const [file] = readdirSync(join(folder, project ?? ''))
    const header = JSON.parse(
      readFileSync(join(folder, project ?? '', file ?? ''), 'utf8').split('\n')[0] ?? '',
    )
    const captured = usageByConversation(rows)
    const read = usageByConversation(imported.rows)
    // pi on the Anthropic Messages API sends nothing that names its session, so the capture names the
    // one conversation by its first message (`pi-c-…`); the transcript names it by pi's session id.
    expect(Object.keys(captured)).toEqual([expect.stringMatching(/^pi-c-[0-9a-f]{8}$/)])
    expect(Object.keys(read)).toEqual([header.id])
    expect(Object.values(read)[0]?.length).toBe(4)
    expect(Object.values(read)).toEqual(Object.values(captured))
  })
})
