// Codex CLI 0.169.0 against serve: five `exec` / `exec resume` turns, a switch to gpt-5.4-mini, an
// automatic compaction, a spawned agent, and one spawned with the main thread's history forked into it
// (`fork_context: true`). The capture numbers five turns of the main conversation, the replies answer each
// turn by the capture's number, and the compaction and the spawned agents are conversations of their
// own. `cachelab import` with no path reads Codex's own rollouts of the same session back into the
// capture's rows, conversation for conversation.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StepRow } from '../../reports/types.ts'
import {
  type AgentBench,
  type AgentSession,
  agentVersion,
  breaksByConversation,
  importAgentSession,
  startAgentBench,
  usageByConversation,
} from './bench.ts'

/** Tokens above the first request's input at which Codex compacts (8,200 on 0.169.0's 7,832). */
const COMPACT_ABOVE = 368

let bench: AgentBench
let session: AgentSession
let rows: StepRow[]

const prompts = [
  'List the files here',
  'Read the notes',
  'Now summarize them',
  'Spawn a helper to check the docs',
  'Spawn a forked helper to check the notes',
]

beforeAll(async () => {
  bench = await startAgentBench([
    ...[1, 2, 3].map((turn) => ({ kind: 'main' as const, turn, step: 1, text: `Answer to turn ${turn}.` })),
    {
      kind: 'main',
      user: 'Spawn a helper',
      step: 1,
      tools: [{ name: 'spawn_agent', arguments: { message: 'Check the docs folder.' } }],
    },
    {
      kind: 'main',
      user: 'Spawn a forked helper',
      step: 1,
      tools: [{ name: 'spawn_agent', arguments: { message: 'Check the notes.', fork_context: true } }],
    },
    // The turn waits a while, so the forked agent's requests are written before `exec` ends.
    {
      kind: 'main',
      user: 'Spawn a forked helper',
      step: 2,
      tools: [{ name: 'exec_command', arguments: { cmd: 'sleep 5' } }],
    },
  ])
  session = await bench.session('codex')
  const steps = [
    { prompt: prompts[0] as string },
    { prompt: prompts[1] as string, continues: true },
    { prompt: prompts[2] as string, continues: true, model: 'gpt-5.4-mini' },
    { prompt: prompts[3] as string, continues: true },
  ]
  for (const [index, step] of steps.entries()) {
    const outcome = await session.step(step)
    expect(outcome.code, outcome.stderr.slice(-2000)).toBe(0)
    // A context limit just above Codex's own prompt (its first request's, which each version sizes
    // otherwise): a turn that grows past it is compacted first. Under it Codex compacts again and again.
    if (index === 0)
      session.configure({
        autoCompactTokens:
          (bench.exchanges.find((exchange) => exchange.kind === 'main')?.usage?.input ?? 0) + COMPACT_ABOVE,
      })
  }
  // `resume --last` would now take up the spawned agent's thread, the latest: the main one by its id.
  const [mainName] = new Set(mainRows(bench.rows()).map((row) => row.variant))
  const forked = await session.step({ prompt: prompts[4] as string, resume: mainName as string })
  expect(forked.code, forked.stderr.slice(-2000)).toBe(0)
  rows = bench.rows()
})

afterAll(() => bench?.close())

const mainRows = (list = rows) => list.filter((row) => (row.conversationKind ?? 'main') === 'main')

describe(`Codex ${agentVersion('codex')} captured through serve`, () => {
  it('is served every request, none refused', () => {
    expect(
      bench.exchanges.filter((exchange) => exchange.status !== 200).map((exchange) => exchange.error),
    ).toEqual([])
  })

  it('numbers five turns in its main conversation, one per prompt', () => {
    expect(new Set(mainRows().map((row) => row.variant)).size).toBe(1)
    expect([...new Set(mainRows().map((row) => row.turn))]).toEqual([1, 2, 3, 4, 5])
  })

  it("answers each turn by the capture's own number", () => {
    const answered = bench.exchanges.filter(
      (exchange) =>
        exchange.kind === 'main' && exchange.step === 1 && exchange.turn <= 3 && exchange.attempt === 0,
    )
    expect(answered.length).toBeGreaterThanOrEqual(3)
    for (const exchange of answered) expect(exchange.response).toContain(`Answer to turn ${exchange.turn}.`)
    for (const [index, outcome] of session.outcomes.slice(0, 3).entries())
      expect(outcome.stdout).toContain(`Answer to turn ${index + 1}.`)
  })

  it('puts the automatic compaction and each spawned agent in conversations of their own', () => {
    const [mainName] = new Set(mainRows().map((row) => row.variant))
    const kinds = rows.filter((row) => row.conversationKind !== undefined)
    expect(kinds.some((row) => row.conversationKind === 'compaction' && row.session === mainName)).toBe(true)
    const subagents = new Set(
      kinds
        .filter(
          (row) => row.conversationKind === 'subagent' && row.variant.startsWith(`${mainName}.subagent-`),
        )
        .map((row) => row.variant),
    )
    expect(subagents.size).toBe(2)
    expect(rows.every((row) => row.agent === `codex/${agentVersion('codex')}`)).toBe(true)
  })

  it('never blames the main conversation for its side requests: a model break only where the model changed', () => {
    const main = mainRows().filter((row) => row.ok)
    for (const [index, row] of main.entries()) {
      expect(row.breakCause).not.toBe('tools-changed')
      if (row.breakCause === 'config-changed') expect(row.model).not.toBe(main[index - 1]?.model)
    }
    const switched = main.find((row) => row.model === 'gpt-5.4-mini')
    expect(switched).toMatchObject({ breakCause: 'config-changed', breakNode: 'model' })
    expect(switched?.lostTokens).toBeGreaterThan(0)
  })
})

describe(`Codex ${agentVersion('codex')} rollouts imported with no path`, () => {
  it('read as five turns, every request on the model it was sent with, each conversation as captured, the forked agent too', async () => {
    const imported = await importAgentSession(session.place)
    expect(imported.stdout).toContain('read codex (3 files')
    const [mainName] = new Set(mainRows().map((row) => row.variant))
    const importedMain = imported.rows.filter((row) => row.variant === mainName)
    expect([...new Set(importedMain.map((row) => row.turn))]).toEqual([1, 2, 3, 4, 5])
    // The main conversation and every compaction (each on the model of the turn it compacts for): Codex
    // records every request it sent. A spawned agent has a rollout of its own, which Codex writes as its
    // thread runs: when `exec` ends while the agent's last request is still answered (seen on a loaded
    // machine), that request is served and captured but never reaches the rollout. So the agent's imported
    // requests are the first ones of what was captured, the same usage each, and never one more.
    const captured = usageByConversation(rows)
    const read = usageByConversation(imported.rows)
    expect(Object.keys(read).sort()).toEqual(Object.keys(captured).sort())
    for (const [conversation, requests] of Object.entries(captured)) {
      const got = read[conversation] ?? []
      if (conversation.includes('.subagent-')) {
        expect(got.length).toBeGreaterThan(0)
        expect(got).toEqual(requests.slice(0, got.length))
      } else expect(got, conversation).toEqual(requests)
    }
    const kinds = (list: StepRow[]) => [
      ...new Set(
        list.map(
          (row) => `${row.variant} ${row.session ?? ''} ${row.conversationKind ?? 'main'} ${row.model}`,
        ),
      ),
    ]
    expect(kinds(imported.rows).sort()).toEqual(kinds(rows).sort())
    // The same breaks and causes, request for request, in every conversation the rollouts hold whole; the
    // model switches' lost tokens too. A request resent with a summary sends less than the previous one: the
    // capture's ideal is cut at the last whole item it can hold, the import's at its input (what the
    // rollout's usage says), so their losses there differ by up to an item.
    for (const conversation of Object.keys(captured).filter((name) => !name.includes('.subagent-'))) {
      const causes = (list: StepRow[]) => breaksByConversation(list, { withNode: false, withLost: false })
      expect(causes(imported.rows)[conversation], conversation).toEqual(causes(rows)[conversation])
      const switches = (list: StepRow[]) =>
        (breaksByConversation(list)[conversation] ?? []).filter((line) =>
          line.includes('config-changed@model'),
        )
      expect(switches(imported.rows)).toEqual(switches(rows))
    }
    expect(imported.rows.every((row) => row.agent === `codex/${agentVersion('codex')}`)).toBe(true)
    // The rollouts hold no tool schemas: no predicted read is set beside the recorded one, and it says so.
    expect(imported.rows.every((row) => row.predictedCacheReadTokens === undefined)).toBe(true)
    expect(imported.stdout).toContain(`no predicted read or write for ${imported.rows.length} requests`)
  })
})
