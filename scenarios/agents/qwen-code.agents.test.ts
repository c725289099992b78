// qwen-code 0.24.4 against serve with managed memory on: a turn answered in text (after which its memory
// extractor runs, a subagent of its own prompt and tools over the main history), then a continued turn
// that reads a file. The extractor is a side conversation, and the main conversation breaks only where
// qwen-code itself rebuilt it on resume (its first prompt without the date reminder it carried).
// `cachelab import` of qwen-code's own session file, found with no path, gives the capture's usage
// request for request, the extractor's requests included (qwen-code records every response it gets).

import { writeFileSync } from 'node:fs'
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
  bench = await startAgentBench([
    { kind: 'main', turn: 1, text: 'Hello.' },
    { kind: 'main', turn: 2, step: 1, tools: [{ name: 'read_file', arguments: { file_path: 'README.md' } }] },
  ])
  session = await bench.run(
    'qwen-code',
    [{ prompt: 'Say hello' }, { prompt: 'What does README.md say?', continues: true }],
    {
      setup: ({ workspace }) => writeFileSync(join(workspace, 'README.md'), '# Calc\nA tiny calculator.\n'),
    },
  )
  rows = bench.rows()
})

afterAll(() => bench?.close())

describe(`qwen-code ${agentVersion('qwen-code')} with managed memory, captured through serve`, () => {
  it('is served every request, none refused', () => {
    expect(
      bench.exchanges.filter((exchange) => exchange.status !== 200).map((exchange) => exchange.error),
    ).toEqual([])
  })

  it('puts its memory extraction in a side conversation', () => {
    const memory = bench.exchanges.filter((exchange) => exchange.purpose === 'memory')
    expect(memory.length).toBeGreaterThan(0)
    expect(memory.every((exchange) => exchange.kind === 'side')).toBe(true)
  })

  it('keeps one main conversation of two turns, with no tools-changed or model break', () => {
    const main = rows.filter((row) => (row.conversationKind ?? 'main') === 'main')
    expect(new Set(main.map((row) => row.variant)).size).toBe(1)
    expect([...new Set(main.map((row) => row.turn))]).toEqual([1, 2])
    expect(
      main.filter((row) => row.breakCause === 'tools-changed' || row.breakCause === 'config-changed'),
    ).toEqual([])
    expect(rows.every((row) => row.agent === `qwen-code/${agentVersion('qwen-code')}`)).toBe(true)
  })
})

describe("qwen-code's own session file, imported with no path", () => {
  it("gives the capture's requests with their usage, conversation for conversation", async () => {
    const imported = await importAgentSession(session.place)
    expect(imported.stdout).toMatch(/qwen-code \(1 file/)
    const captured = usageByConversation(rows)
    const read = usageByConversation(imported.rows)
    // The main conversation is named by qwen-code's session id on both sides (the bench sends it).
    const main = rows.find((row) => (row.conversationKind ?? 'main') === 'main')?.variant ?? ''
    expect(main).toMatch(/^[0-9a-f-]{36}$/)
    expect(read[main]?.length).toBeGreaterThan(0)
    expect(read[main]).toEqual(captured[main])
    // The memory extractor: the capture names its conversation by its first message's hash, the
    // transcript by the extractor's own id; the same requests, in the same order.
    const memory = (usage: Record<string, string[]>) =>
      Object.entries(usage)
        .filter(([name]) => name.startsWith(`${main}.side-memory-`))
        .map(([, requests]) => requests)
    expect(memory(read).length).toBeGreaterThan(0)
    expect(memory(read)).toEqual(memory(captured))
    expect(Object.keys(read)).toHaveLength(Object.keys(captured).length)
  })
})
