// Gemini CLI resumed after the workspace changed: two turns answered in text (it cannot resume after a
// tool call), a new file written, a third turn with `--resume latest`. Gemini CLI sends no session id and
// renders its first message (the workspace listing) anew on every resume: the resume is a break of the
// same chat at contents[0], the whole history after it written again, and the import of its chat file
// names the same break (the first answer is long enough that the loss is past the import's 1,024-token
// noise floor, as any real history is).

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
  lostByBreak,
  startAgentBench,
  usageByConversation,
} from './bench.ts'

let bench: AgentBench
let session: AgentSession
let rows: StepRow[]
let imported: Imported

beforeAll(async () => {
  bench = await startAgentBench([
    { kind: 'main', turn: 1, text: { tokens: 1500 } },
    { kind: 'main', turn: 2, text: { tokens: 900 } },
    { kind: 'main', turn: 3, text: 'Third answer.' },
  ])
  session = await bench.run(
    'gemini-cli',
    [{ prompt: 'What does README.md say?' }, { prompt: 'Tell me more', continues: true }],
    {
      setup: ({ workspace }) => writeFileSync(join(workspace, 'README.md'), '# Calc\nA tiny calculator.\n'),
    },
  )
  writeFileSync(join(session.place.workspace, 'NOTES.md'), '# Notes\nWritten between two turns.\n')
  const resumed = await session.step({ prompt: 'And now?', continues: true })
  expect(resumed.code, resumed.stderr).toBe(0)
  rows = bench.rows()
  imported = await importAgentSession(session.place)
})

afterAll(() => bench?.close())

const main = () => rows.filter((row) => row.conversationKind === undefined)

describe('Gemini CLI resumed after a new file in the workspace', () => {
  it('is served every request, none refused', () => {
    expect(bench.refusals()).toEqual([])
  })

  it('keeps one main conversation, broken at the rebuilt first message with the history after it lost', () => {
    expect(new Set(main().map((row) => row.variant)).size).toBe(1)
    expect(main().map((row) => `${row.turn}.${row.step}`)).toEqual(['1.1', '2.1', '3.1'])
    const [, second, resumed] = main()
    expect(resumed).toMatchObject({ breakCause: 'message-edited', breakNode: 'contents[0].0' })
    // Everything after contents[0]: the first answer (1,500 tokens) and the second prompt, at least.
    expect(resumed?.lostTokens).toBeGreaterThan(1500)
    expect(resumed?.lostTokens).toBeLessThanOrEqual(second?.inputTokens ?? 0)
  })

  it('imports from its chat file to the same requests and the same break', () => {
    const name = main()[0]?.variant as string
    const [sessionId, ...others] = Object.keys(usageByConversation(imported.rows))
    expect(others).toEqual([])
    // No session id on the wire: the capture names the chat by content, the chat file by its own id.
    expect(usageByConversation(imported.rows)[sessionId as string]).toEqual(usageByConversation(rows)[name])
    expect(breaksByConversation(imported.rows, { withLost: false })[sessionId as string]).toEqual(
      breaksByConversation(rows, { withLost: false })[name],
    )
    const [capturedLost] = lostByBreak(rows, name)
    const [importedLost] = lostByBreak(imported.rows, sessionId as string)
    expect(Math.abs((importedLost ?? 0) - (capturedLost ?? 0))).toBeLessThanOrEqual(8)
  })
})
