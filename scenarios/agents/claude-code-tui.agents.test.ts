// Claude Code's TUI against serve, typed into as a user types: two prompts, `/model claude-haiku-4-5`
// (which probes the new model with a one-message request under the session's id before switching), a
// prompt on haiku. The probe is a side conversation, the switch is a break of the main conversation
// priced against its last turn (the provider re-writes the whole history for the new model), and the
// import of Claude Code's own transcript agrees request for request.

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StepRow } from '../../reports/types.ts'
import {
  type AgentBench,
  type AgentSession,
  breaksByConversation,
  type Imported,
  importAgentSession,
  startAgentBench,
  usageByConversation,
} from './bench.ts'

let bench: AgentBench
let session: AgentSession
let rows: StepRow[]
let imported: Imported

beforeAll(async () => {
  bench = await startAgentBench([
    { kind: 'main', turn: 1, text: 'First answer.' },
    { kind: 'main', turn: 2, text: 'Second answer.' },
    { kind: 'main', turn: 3, text: 'Third answer.' },
  ])
  session = await bench.session('claude-code', {
    setup: ({ workspace }) => writeFileSync(join(workspace, 'README.md'), '# Calc\nA tiny calculator.\n'),
  })
  const terminal = session.terminal()
  try {
    await terminal.waitFor(/shortcuts|mode on|❯/)
    for (const [prompt, answer] of [
      ['What does README.md say?', /First answer\./],
      ['Tell me more', /Second answer\./],
    ] as const) {
      terminal.mark()
      await terminal.type(prompt)
      await terminal.waitFor(answer)
    }
    terminal.mark()
    await terminal.type('/model claude-haiku-4-5')
    await terminal.waitFor(/Switch\s*model\?|Set\s*model/)
    // Newer versions warn that the switch re-reads the whole history, and ask first.
    if (/Switch\s*model\?/.test(terminal.screen())) {
      terminal.press('enter')
      await terminal.waitFor(/Set\s*model/)
    }
    terminal.mark()
    await terminal.type('And now in one line?')
    await terminal.waitFor(/Third answer\./)
  } finally {
    await terminal.close()
  }
  rows = bench.rows()
  imported = await importAgentSession(session.place)
})

afterAll(() => bench?.close())

const main = () => rows.filter((row) => row.conversationKind === undefined)

describe("Claude Code's TUI: /model between two turns, captured through serve", () => {
  it('is served every request, none refused', () => {
    expect(bench.refusals()).toEqual([])
  })

  it('keeps every request that declares no tools (the model probe, the title) out of the main conversation', () => {
    expect(new Set(main().map((row) => row.variant)).size).toBe(1)
    const mainSeqs = new Set(
      bench.exchanges.filter((exchange) => exchange.kind === 'main').map((exchange) => exchange.seq),
    )
    const toolless = bench.exchanges.filter(
      (exchange) => !Array.isArray(exchange.request?.tools) || exchange.request.tools.length === 0,
    )
    expect(toolless.length).toBeGreaterThan(0)
    for (const exchange of toolless) expect(mainSeqs.has(exchange.seq), exchange.conversation).toBe(false)
  })

  it('breaks the main conversation at the switch, with what its last turn left cached as lost', () => {
    const list = main()
    const switched = list.findIndex((row) => row.model === 'claude-haiku-4-5')
    const before = list[switched - 1]
    expect(switched).toBeGreaterThan(0)
    expect(list[switched]).toMatchObject({
      breakCause: 'config-changed',
      breakNode: 'model',
      cacheReadTokens: 0,
    })
    const left = (before?.cacheReadTokens ?? 0) + (before?.cacheWriteTokens ?? 0)
    expect(left).toBeGreaterThan(1000)
    expect(list[switched]?.lostTokens).toBeGreaterThan(0.9 * left)
    expect(list.filter((row) => row.breakCause !== undefined)).toHaveLength(1)
  })

  it('imports from its own transcript to the same requests, breaks, causes and lost tokens', () => {
    const name = main()[0]?.variant as string
    expect(usageByConversation(imported.rows)[name]).toEqual(usageByConversation(rows)[name])
    expect(breaksByConversation(imported.rows)[name]).toEqual(breaksByConversation(rows)[name])
  })
})
