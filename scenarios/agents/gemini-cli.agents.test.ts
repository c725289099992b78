// Gemini CLI 0.61.0 against serve on "auto" routing: a router request (a classifier that asks for JSON)
// before each turn, a text turn, then a resumed turn that reads a file. The routers are side
// conversations answered with JSON, and the main conversation breaks only where its requests changed
// (usually nowhere). Its chat file imports to the main conversation's requests; the routers are not in it.

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
let session: AgentSession
let rows: StepRow[]

beforeAll(async () => {
  bench = await startAgentBench([
    // Resuming after a tool call is refused in 0.61.0 (it sends two responses for one call): the first
    // turn answers in text, the resumed one reads a file.
    { kind: 'main', turn: 1, text: 'Hello.' },
    { kind: 'main', turn: 2, step: 1, tools: [{ name: 'read_file', arguments: { file_path: 'README.md' } }] },
  ])
  session = await bench.run(
    'gemini-cli',
    [{ prompt: 'Say hello' }, { prompt: 'What does README.md say?', continues: true }],
    {
      setup: ({ workspace }) => writeFileSync(join(workspace, 'README.md'), '# Calc\nA tiny calculator.\n'),
    },
  )
  rows = bench.rows()
})

afterAll(() => bench?.close())

describe(`Gemini CLI ${agentVersion('gemini-cli')} on auto routing, captured through serve`, () => {
  it('is served every request, none refused', () => {
    expect(
      bench.exchanges.filter((exchange) => exchange.status !== 200).map((exchange) => exchange.error),
    ).toEqual([])
  })

  it('puts each router request in a side conversation, answered with JSON once, never retried', () => {
    const routers = bench.exchanges.filter((exchange) => exchange.purpose === 'router')
    expect(routers).toHaveLength(2)
    for (const router of routers) {
      expect(router.kind).toBe('side')
      expect(router.attempt).toBe(0)
    }
  })

  it('keeps one main conversation of two turns, broken exactly where its requests really changed', () => {
    const main = rows.filter((row) => (row.conversationKind ?? 'main') === 'main')
    expect(new Set(main.map((row) => row.variant)).size).toBe(1)
    expect([...new Set(main.map((row) => row.turn))]).toEqual([1, 2])
    expect(rows.every((row) => row.agent === `gemini-cli/${agentVersion('gemini-cli')}`)).toBe(true)
    // Whether Gemini CLI resends its prefix unchanged is its own behaviour: on our machines it does, but
    // one CI run saw its resumed process send another system instruction. What cachelab answers for is
    // that a break is reported where, and only where, the request did not extend the previous one.
    const bodies = bench.exchanges
      .filter((exchange) => exchange.kind === 'main')
      .map((exchange) => exchange.request as Record<string, unknown>)
    expect(bodies).toHaveLength(main.length)
    const changed = bodies.flatMap((body, index) => {
      const previous = bodies[index - 1]
      const change = previous === undefined ? undefined : prefixChange(previous, body)
      return change === undefined ? [] : [{ at: `${main[index]?.turn}.${main[index]?.step}`, change }]
    })
    for (const { at, change } of changed) console.warn(`Gemini CLI changed its prefix at ${at}: ${change}`)
    expect(
      main.filter((row) => row.breakCause !== undefined).map((row) => `${row.turn}.${row.step}`),
    ).toEqual(changed.map(({ at }) => at))
    const systemBreaks = main.filter((row) => row.breakCause === 'system-replace')
    expect(systemBreaks.map((row) => `${row.turn}.${row.step}`)).toEqual(
      changed.filter(({ change }) => change.startsWith('systemInstruction')).map(({ at }) => at),
    )
  })

  it('imports from its own chat file, found with no path, to the main conversation with the same per-request usage', async () => {
    const imported = await importAgentSession(session.place)
    const captured = usageByConversation(rows)
    const [mainName, ...others] = Object.keys(captured).filter(
      (name) => rows.find((row) => row.variant === name)?.conversationKind === undefined,
    )
    expect(others).toEqual([])
    // Gemini CLI sends no session id on the wire, so the capture names its main conversation by content;
    // the chat file names it by Gemini CLI's own session id. The same requests, under either name.
    const sessionId = Object.keys(usageByConversation(imported.rows))
    expect(sessionId).toHaveLength(1)
    expect(sessionId[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/)
    expect(usageByConversation(imported.rows)).toEqual({
      [sessionId[0] as string]: captured[mainName as string],
    })
    expect(imported.rows.map((row) => `${row.turn}.${row.step}`)).toEqual(
      rows.filter((row) => row.variant === mainName).map((row) => `${row.turn}.${row.step}`),
    )
    // The router requests (one per turn, on a flash-lite model) are side conversations the chat file
    // does not record: all the capture holds beside the main conversation.
    const unrecorded = rows.filter((row) => row.variant !== mainName)
    expect(unrecorded.length).toBe(2)
    expect(
      unrecorded.every((row) => row.conversationKind === 'side' && row.variant.includes('side-router-')),
    ).toBe(true)
  })
})

/** How `next` fails to extend `previous` (system instruction, tools, or an earlier content), if it does. */
function prefixChange(previous: Record<string, unknown>, next: Record<string, unknown>): string | undefined {
  const system = (body: Record<string, unknown>) => JSON.stringify(body.systemInstruction ?? null)
  if (system(previous) !== system(next))
    return `systemInstruction ${firstDifference(system(previous), system(next))}`
  if (JSON.stringify(previous.tools ?? null) !== JSON.stringify(next.tools ?? null)) return 'tools'
  const before = (previous.contents ?? []) as unknown[]
  const after = (next.contents ?? []) as unknown[]
  const edited = before.findIndex(
    (content, index) => JSON.stringify(content) !== JSON.stringify(after[index]),
  )
  return edited === -1 ? undefined : `contents[${edited}]`
}

/** Where two texts first differ, with a little of each side. */
function firstDifference(a: string, b: string): string {
  let at = 0
  while (at < a.length && a[at] === b[at]) at++
  return `from character ${at}: ${JSON.stringify(a.slice(at, at + 120))} became ${JSON.stringify(b.slice(at, at + 120))}`
}
