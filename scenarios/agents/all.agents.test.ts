// Every agent in one home, as on a user's machine: each runs one prompt against serve, and
// `cachelab import` with no path finds every agent's folder there and reads each one's requests with the
// usage the capture recorded.

import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENT_NAMES, type AgentPlace } from '../../harness/loops/agents/index.ts'
import type { StepRow } from '../../reports/types.ts'
import { type AgentBench, type Imported, importAgentSession, startAgentBench } from './bench.ts'

let bench: AgentBench
let place: AgentPlace
let imported: Imported
let captured: StepRow[]

beforeAll(async () => {
  bench = await startAgentBench()
  const root = mkdtempSync(join(tmpdir(), 'cachelab-agents-home-'))
  place = { home: join(root, 'home'), workspace: join(root, 'workspace') }
  mkdirSync(place.workspace, { recursive: true })
  writeFileSync(join(place.workspace, 'README.md'), '# Calc\nA tiny calculator.\n')
  for (const name of AGENT_NAMES) await bench.run(name, [{ prompt: 'What does README.md say?' }], { place })
  captured = bench.rows()
  imported = await importAgentSession(place)
})

afterAll(() => bench?.close())

/** An agent's requests as `model input/read/write/output`, sorted: the same multiset on both sides. */
const usages = (rows: readonly StepRow[]) =>
  rows
    .filter((row) => row.ok)
    .map(
      (row) =>
        `${row.model} ${row.inputTokens}/${row.cacheReadTokens}/${row.cacheWriteTokens}/${row.outputTokens}`,
    )
    .sort()

describe('a home holding every agent', () => {
  it('is served every request, none refused', () => {
    expect(bench.refusals()).toEqual([])
  })

  it('imports with no path: every agent found and read', () => {
    for (const name of AGENT_NAMES)
      expect(imported.stdout, name).toMatch(new RegExp(`${name} \\(\\d+ files? in`))
    expect(new Set(imported.rows.map((row) => row.scenario))).toEqual(new Set(AGENT_NAMES))
  })

  it("gives each agent's recorded requests the capture's usage", () => {
    for (const name of AGENT_NAMES) {
      const mine = captured.filter((row) => (row.agent ?? '').split('/')[0] === name)
      const recorded = usages(imported.rows.filter((row) => row.scenario === name))
      expect(recorded.length, name).toBeGreaterThan(0)
      // Every request the transcript holds is one the capture saw, with the same usage; what an agent does
      // not write down (titles, routers) is the capture's alone.
      const pool = usages(mine)
      for (const usage of recorded) {
        const at = pool.indexOf(usage)
        expect(at, `${name}: ${usage} not captured`).toBeGreaterThanOrEqual(0)
        pool.splice(at, 1)
      }
    }
  })
})
