// Claude Code 2.1.328 against serve: two prompts with file reads, a prompt that starts a subagent, a turn
// on claude-haiku-4-5, `/compact`, a turn after it, a second conversation in the same folder, then a fork
// of the first (`--resume ID --fork-session`). The report keeps the conversations apart, numbers the main
// one's turns as typed, breaks only where the conversation changed, names them by Claude Code's own ids,
// and its transcript imports to the same rows: the fork's copy of its parent's entries counted once.

import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseStepsCsv } from '../../reports/parse.ts'
import type { StepRow } from '../../reports/types.ts'
import {
  type AgentBench,
  type AgentSession,
  agentVersion,
  breaksByConversation,
  startAgentBench,
} from './bench.ts'

let bench: AgentBench
let session: AgentSession
let rows: StepRow[]
let sessionIds: string[]
/** The session `--fork-session` made of the first. */
let forkId: string

beforeAll(async () => {
  bench = await startAgentBench()
  session = await bench.session('claude-code', {
    setup: ({ workspace }) => {
      mkdirSync(join(workspace, 'src'), { recursive: true })
      writeFileSync(join(workspace, 'README.md'), '# Calc\nA tiny calculator.\n')
      writeFileSync(join(workspace, 'src', 'calc.js'), 'export const add = (a, b) => a + b\n')
    },
  })
  const file = (name: string) => join(session.place.workspace, name)
  bench.reply([
    {
      kind: 'main',
      turn: 1,
      step: 1,
      tools: [{ name: 'Read', arguments: { file_path: file('README.md') } }],
    },
    {
      kind: 'main',
      turn: 2,
      step: 1,
      tools: [{ name: 'Read', arguments: { file_path: file('src/calc.js') } }],
    },
    {
      kind: 'main',
      user: 'Start a subagent',
      step: 1,
      tools: [
        {
          name: 'Agent',
          arguments: {
            description: 'Explore src',
            subagent_type: 'Explore',
            prompt: 'List the files under src.',
            run_in_background: false,
          },
        },
      ],
    },
  ])
  const steps = [
    { prompt: 'What does README.md say?' },
    { prompt: 'And src/calc.js?', continues: true },
    { prompt: 'Start a subagent to explore src', continues: true },
    { prompt: 'Say it again in one line', continues: true, model: 'claude-haiku-4-5' },
    { prompt: '/compact', continues: true },
    { prompt: 'One more question after the summary', continues: true },
    { prompt: 'What does README.md say?' },
  ]
  sessionIds = []
  for (const step of steps) {
    const outcome = await session.step(step)
    expect(outcome.code, outcome.stderr).toBe(0)
    sessionIds.push((JSON.parse(outcome.stdout) as { session_id: string }).session_id)
  }
  const forked = await session.step({
    prompt: 'A question in the fork',
    resume: sessionIds[0] as string,
    fork: true,
  })
  expect(forked.code, forked.stderr).toBe(0)
  forkId = (JSON.parse(forked.stdout) as { session_id: string }).session_id
  rows = bench.rows()
})

afterAll(() => bench?.close())

const main = () => rows.filter((row) => row.variant === sessionIds[0])

describe(`Claude Code ${agentVersion('claude-code')} captured through serve`, () => {
  it('is served every request, none refused', () => {
    expect(
      bench.exchanges.filter((exchange) => exchange.status !== 200).map((exchange) => exchange.error),
    ).toEqual([])
  })

  it('keeps the main conversation, the subagent, the compaction, the second conversation and the fork apart', () => {
    const [first, , , , , , second] = sessionIds as string[]
    expect(sessionIds.slice(0, 6).every((id) => id === first)).toBe(true)
    expect(second).not.toBe(first)
    expect([first, second]).not.toContain(forkId)
    const kinds = new Map(rows.map((row) => [row.variant, row.conversationKind ?? 'main']))
    expect(kinds.get(first as string)).toBe('main')
    expect(kinds.get(second as string)).toBe('main')
    expect(kinds.get(forkId)).toBe('main')
    const others = [...kinds].filter(([name]) => name !== first && name !== second && name !== forkId)
    expect(others.some(([name, kind]) => kind === 'subagent' && name.startsWith(`${first}.subagent-a`))).toBe(
      true,
    )
    expect(
      others.some(([name, kind]) => kind === 'compaction' && name.startsWith(`${first}.compaction-`)),
    ).toBe(true)
    expect(others.every(([, kind]) => kind !== 'main')).toBe(true)
  })

  it('numbers the main conversation turns as typed', () => {
    const turns = [...new Set(main().map((row) => row.turn))]
    expect(turns).toEqual([1, 2, 3, 4, 5])
  })

  it('breaks only where the conversation changed: the model switch and the request after /compact', () => {
    const broken = rows.filter((row) => row.breakCause !== undefined)
    expect(broken.every((row) => row.variant === sessionIds[0])).toBe(true)
    expect(broken.map((row) => `${row.turn}.${row.step}`)).toEqual(['4.1', '5.1'])
  })

  it('shows what the switch to claude-haiku-4-5 re-wrote as lost', () => {
    const switched = main().find((row) => row.model === 'claude-haiku-4-5')
    const before = main()
      .filter((row) => row.model !== 'claude-haiku-4-5' && row.turn < 4)
      .at(-1)
    expect(switched).toMatchObject({ breakCause: 'config-changed', breakNode: 'model', cacheReadTokens: 0 })
    expect(switched?.lostTokens).toBeGreaterThan(0.9 * (before?.inputTokens ?? 0))
  })

  it("names conversations by Claude Code's session id, never its device id", () => {
    const device = (
      JSON.parse(readFileSync(join(session.place.home, '.claude.json'), 'utf8')) as { userID: string }
    ).userID
    expect(device.length).toBeGreaterThan(16)
    const names = [...new Set(rows.map((row) => row.variant))]
    expect(names.every((name) => [...sessionIds, forkId].some((id) => name.startsWith(id)))).toBe(true)
    expect(names.some((name) => name.includes(device))).toBe(false)
    expect(rows.every((row) => row.agent === `claude-code/${agentVersion('claude-code')}`)).toBe(true)
  })

  it('imports from its own transcript to the same conversations with the same per-request usage, and names what it did not record', () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-agents-import-'))
    const printed = execFileSync(
      process.execPath,
      [
        join(process.cwd(), 'bin', 'cachelab.js'),
        'import',
        join(session.place.home, '.claude', 'projects'),
        '--out',
        out,
      ],
      { stdio: 'pipe', encoding: 'utf8' },
    )
    const imported = parseStepsCsv(readFileSync(join(out, 'steps.csv'), 'utf8'), 'steps.csv')
    const usage = (list: readonly StepRow[], name: string) =>
      list
        .filter((row) => row.variant === name && row.ok)
        .map((row) =>
          [row.inputTokens, row.cacheReadTokens, row.cacheWriteTokens, row.outputTokens].join('/'),
        )
    const recorded = [...new Set(imported.map((row) => row.variant))]
    expect(recorded.length).toBeGreaterThan(2)
    expect(recorded).toContain(forkId)
    // Request for request, the fork's file repeating its parent's entries: each counted once, where made.
    for (const name of recorded) expect(usage(imported, name), name).toEqual(usage(rows, name))
    // The same breaks, causes and lost tokens: the model switch at `model`, the request after /compact
    // `history-summarized` (the transcript records the compaction, not where the rewritten request differs).
    for (const name of recorded)
      expect(breaksByConversation(imported, { withNode: false })[name], name).toEqual(
        breaksByConversation(rows, { withNode: false })[name],
      )
    expect(printed).toMatch(/\d+ requests? read again in another session's file/)
    // The fork goes on from what its parent left cached: a session start only where a session started.
    const rewrites = readFileSync(join(out, 'rewrites.csv'), 'utf8')
    expect(/^session-start,(\d+),/m.exec(rewrites)?.[1]).toBe('2')
    // The compaction summaries Claude Code made and did not write down: its own total counts them.
    const compacted = rows.filter(
      (row) => row.conversationKind === 'compaction' && row.session === sessionIds[0],
    )
    const cost = compacted.reduce((sum, row) => sum + row.costUsd, 0)
    const line = printed
      .split('\n')
      .find((text) => text.includes(`unrecorded in the transcript: claude-code · ${sessionIds[0]}`))
    expect(Number(/: \$([\d.]+) of/.exec(line ?? '')?.[1])).toBeCloseTo(cost, 3)
    // The fork's running total goes on from its parent's: none of that is the fork's unrecorded.
    expect(printed).not.toContain(`unrecorded in the transcript: claude-code · ${forkId}`)
  })
})
