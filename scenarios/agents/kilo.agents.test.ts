// Kilo Code 7.7.7 (an opencode fork) against serve on the OpenAI-compatible wire: two turns, the first
// reading a file, then Kilo's compact command (`kilo run --command compact`), then the second turn starting
// a `task` subagent (each a new process, the later ones `--continue`d). Kilo sends opencode's session
// headers under its own user agent, so the capture names it `kilo`; `kilo run` sends no title request
// (Kilo defers it past the turn, and `run` exits first). The main conversation breaks only where the
// compaction replaced its history, and the recorded bodies say the same. Its own database, found with no
// path, imports to the capture's per-request usage.

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CapturedExchange } from '../../providers/wire/exchange.ts'
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
let session: AgentSession
let rows: StepRow[]

beforeAll(async () => {
  bench = await startAgentBench([
    // A file read, not Kilo's `glob`: that fetches ripgrep from GitHub on first use.
    {
      session: '*',
      kind: 'main',
      turn: 1,
      step: 1,
      tools: [{ name: 'read', arguments: { filePath: 'README.md' } }],
    },
    {
      session: '*',
      kind: 'main',
      turn: 2,
      step: 1,
      tools: [
        {
          name: 'task',
          arguments: { description: 'Explore', prompt: 'Summarize the notes', subagent_type: 'general' },
        },
      ],
    },
  ])
  session = await bench.run(
    'kilo',
    [
      { prompt: 'What does README.md say?' },
      { prompt: '/compact', continues: true },
      { prompt: 'Start a subagent to explore', continues: true },
    ],
    { setup: (place) => writeFileSync(join(place.workspace, 'README.md'), '# Calc\nA tiny calculator.\n') },
  )
  rows = bench.rows()
})

afterAll(() => bench?.close())

const mainSession = () => bench.exchanges.find((exchange) => exchange.kind === 'main')?.session

/** Whether a request sends the previous one's tools, and its messages first, unchanged. */
function extendsPrevious(previous: CapturedExchange, next: CapturedExchange): boolean {
  const before = previous.request ?? {}
  const after = next.request ?? {}
  const messages = (body: Record<string, unknown>) => (body.messages ?? []) as unknown[]
  return (
    isDeepStrictEqual(before.tools, after.tools) &&
    isDeepStrictEqual(messages(after).slice(0, messages(before).length), messages(before))
  )
}

describe(`Kilo Code ${agentVersion('kilo')} on the OpenAI-compatible wire, captured through serve`, () => {
  it('is served every request, none refused', () => {
    expect(bench.refusals()).toEqual([])
  })

  it('is told from opencode by its user agent, every request named kilo and its version', () => {
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.every((row) => row.agent === `kilo/${agentVersion('kilo')}`)).toBe(true)
  })

  it('sends no title request from `kilo run`: a main conversation, a subagent and a compaction, nothing beside', () => {
    expect(new Set(bench.exchanges.map((exchange) => exchange.kind))).toEqual(
      new Set(['main', 'subagent', 'compaction']),
    )
    expect(bench.exchanges.filter((exchange) => exchange.kind === 'side')).toEqual([])
    const compactions = bench.exchanges.filter((exchange) => exchange.kind === 'compaction')
    expect(compactions.map((exchange) => [exchange.purpose, exchange.conversation])).toEqual([
      ['summary', `${mainSession()}.compaction-1`],
    ])
  })

  it('starts its main conversation at turn 1, named by its session id, and breaks only after the compaction', () => {
    const main = rows.filter((row) => (row.conversationKind ?? 'main') === 'main')
    expect(mainSession()).toMatch(/^ses_/)
    expect(new Set(main.map((row) => row.variant))).toEqual(new Set([mainSession()]))
    expect([...new Set(main.map((row) => row.turn))]).toEqual([1, 2])
    const compacted = bench.exchanges.findIndex((exchange) => exchange.kind === 'compaction')
    const after = bench.exchanges.findIndex(
      (exchange, index) => index > compacted && exchange.kind === 'main',
    )
    expect(main.filter((row) => row.breakCause !== undefined).map((row) => [row.turn, row.step])).toEqual([
      [bench.exchanges[after]?.turn, bench.exchanges[after]?.step],
    ])
  })

  it('puts the task subagent in a conversation of its own under the session', () => {
    const subagents = rows.filter((row) => row.conversationKind === 'subagent')
    expect(subagents.length).toBeGreaterThan(0)
    expect(subagents.every((row) => row.variant.startsWith(`${mainSession()}.subagent-ses_`))).toBe(true)
  })

  it("breaks where its recorded bodies stop extending the conversation's previous request, and only there", () => {
    const conversations = new Map<string, CapturedExchange[]>()
    for (const exchange of bench.exchanges)
      conversations.set(exchange.conversation, [
        ...(conversations.get(exchange.conversation) ?? []),
        exchange,
      ])
    expect(conversations.size).toBe(3)
    for (const [name, exchanges] of conversations) {
      const extending = exchanges.slice(1).map((exchange, index) => {
        const previous = exchanges[index] as CapturedExchange
        return extendsPrevious(previous, exchange)
      })
      const broken = rows
        .filter((row) => row.variant === name)
        .slice(1)
        .map((row) => row.breakCause === undefined)
      expect(extending, name).toEqual(broken)
    }
    expect(
      [...conversations.values()].flatMap((exchanges) =>
        exchanges
          .slice(1)
          .filter((exchange, index) => !extendsPrevious(exchanges[index] as CapturedExchange, exchange)),
      ).length,
    ).toBe(1)
  })
})

describe("Kilo Code's own database imports to the capture's usage", () => {
  it('found with no path, told from opencode, request for request', async () => {
    const imported = await importAgentSession(session.place)
    expect(imported.stdout).toContain('kilo.db')
    expect(imported.stdout).toMatch(/kilo \(1 file in/)
    expect(usageByConversation(imported.rows)).toEqual(usageByConversation(rows))
    expect(imported.rows.every((row) => row.agent === `kilo/${agentVersion('kilo')}`)).toBe(true)
    expect(new Set(imported.rows.map((row) => row.scenario))).toEqual(new Set(['kilo']))
    const subagent = imported.rows.find((row) => row.conversationKind === 'subagent')
    expect(subagent?.session).toBe(mainSession())
  })
})
