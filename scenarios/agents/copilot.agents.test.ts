// GitHub Copilot CLI 1.0.102 against serve with its own key, on the Responses wire: a turn that starts an
// `explore` subagent by its `task` tool, a `/compact` in a continued process, then a continued turn on the
// switch model. Its requests carry no session id (the driver sends its place's as `x-cachelab-session`) but
// an `x-interaction-type`, which names the subagent and the compaction conversations; the main conversation
// breaks only where its requests really changed (after the compaction Copilot lists its checkpoint in its
// system prompt; the model). `cachelab import` of its own events file, found with no path, gives the
// capture's usage request for request, in every conversation.

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { placeSession } from '../../harness/loops/agents/copilot.ts'
import { AGENT_DRIVERS } from '../../harness/loops/agents/index.ts'
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
  const subagent = AGENT_DRIVERS.copilot.capabilities.subagent
  if ('unsupported' in subagent) throw new Error(subagent.unsupported)
  bench = await startAgentBench([
    {
      session: '*',
      kind: 'main',
      turn: 1,
      step: 1,
      tools: [{ name: subagent.tool, arguments: subagent.arguments }],
    },
  ])
  session = await bench.run(
    'copilot',
    [
      { prompt: 'Start a subagent to explore' },
      { prompt: '/compact', continues: true },
      { prompt: 'Go on', continues: true, model: AGENT_DRIVERS.copilot.capabilities.switchModel },
    ],
    {
      setup: ({ workspace }) => writeFileSync(join(workspace, 'README.md'), '# Calc\nA tiny calculator.\n'),
    },
  )
  rows = bench.rows()
})

afterAll(() => bench?.close())

const ofKind = (kind: string) => rows.filter((row) => (row.conversationKind ?? 'main') === kind)

describe(`Copilot CLI ${agentVersion('copilot')} with its own key, captured through serve`, () => {
  it('is served every request, none refused', () => {
    expect(bench.refusals()).toEqual([])
  })

  it('puts the explore subagent and the compaction in conversations of their own, under the session', () => {
    const main = ofKind('main')[0]?.variant ?? ''
    expect(main).toBe(placeSession(session.place.workspace))
    const subagent = ofKind('subagent')
    expect(subagent.length).toBeGreaterThan(0)
    expect(subagent.every((row) => row.variant.startsWith(`${main}.subagent-`))).toBe(true)
    const compaction = bench.exchanges.filter((exchange) => exchange.kind === 'compaction')
    expect(compaction).toHaveLength(1)
    expect(compaction[0]).toMatchObject({ purpose: 'summary', session: main })
    expect(rows.every((row) => row.agent === 'copilot')).toBe(true)
  })

  it('keeps one main conversation of two turns, broken exactly where its requests really changed', () => {
    const main = ofKind('main')
    expect(new Set(main.map((row) => row.variant)).size).toBe(1)
    expect([...new Set(main.map((row) => row.turn))]).toEqual([1, 2])
    const bodies = bench.exchanges
      .filter((exchange) => exchange.kind === 'main')
      .map((exchange) => exchange.request as Record<string, unknown>)
    expect(bodies).toHaveLength(main.length)
    const changed = bodies.flatMap((body, index) => {
      const previous = bodies[index - 1]
      const change = previous === undefined ? undefined : prefixChange(previous, body)
      return change === undefined ? [] : [{ at: `${main[index]?.turn}.${main[index]?.step}`, change }]
    })
    expect(
      main.filter((row) => row.breakCause !== undefined).map((row) => `${row.turn}.${row.step}`),
    ).toEqual(changed.map(({ at }) => at))
    // The compaction replaced the history with its summary and listed its checkpoint in the system prompt;
    // the same request went to the switch model, a break of its own however the prefix looks.
    expect(changed.map(({ at, change }) => `${at} ${change.split(' ')[0]}`)).toEqual(['2.1 model'])
    expect(main.filter((row) => row.breakCause !== undefined)).toMatchObject([
      { breakCause: 'config-changed', breakNode: 'model' },
    ])
    const listsCheckpoint = bodies.map((body) => JSON.stringify(body.instructions).includes('checkpoints/'))
    expect(main.map((row, index) => `${row.turn}.${row.step} ${listsCheckpoint[index]}`)).toEqual([
      '1.1 false',
      '1.2 false',
      '2.1 true',
      '2.2 true',
    ])
  })
})

describe("Copilot CLI's own events file, imported with no path", () => {
  it("gives the capture's requests with their usage, conversation for conversation", async () => {
    const imported = await importAgentSession(session.place)
    expect(imported.stdout).toMatch(/copilot \(1 file/)
    expect(imported.rows.every((row) => row.agent === `copilot/${agentVersion('copilot')}`)).toBe(true)
    const captured = usageByConversation(rows)
    const read = usageByConversation(imported.rows)
    // The capture names the session by its `prompt_cache_key` (a hash Copilot does not write down), the
    // file by Copilot's session id: the same conversations, each of the same requests, under either name.
    const byKind = (usage: Record<string, string[]>, all: readonly StepRow[]) =>
      Object.entries(usage)
        .map(([name, requests]) => {
          const kind = all.find((row) => row.variant === name)?.conversationKind ?? 'main'
          return `${kind}: ${requests.join(', ')}`
        })
        .sort()
    expect(byKind(read, imported.rows)).toEqual(byKind(captured, rows))
    const id = imported.rows.find((row) => row.conversationKind === undefined)?.variant ?? ''
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/)
  })
})

/** How `next` fails to extend `previous` (instructions, tools, or an earlier input item), if it does. */
function prefixChange(previous: Record<string, unknown>, next: Record<string, unknown>): string | undefined {
  const text = (value: unknown) => JSON.stringify(value ?? null)
  if (previous.model !== next.model) return `model ${String(previous.model)} became ${String(next.model)}`
  if (text(previous.instructions) !== text(next.instructions))
    return `instructions ${firstDifference(text(previous.instructions), text(next.instructions))}`
  if (text(previous.tools) !== text(next.tools)) return 'tools'
  const before = (previous.input ?? []) as unknown[]
  const after = (next.input ?? []) as unknown[]
  const edited = before.findIndex((item, index) => text(item) !== text(after[index]))
  return edited === -1 ? undefined : `input[${edited}]`
}

/** Where two texts first differ, with a little of each side. */
function firstDifference(a: string, b: string): string {
  let at = 0
  while (at < a.length && a[at] === b[at]) at++
  return `from character ${at}: ${JSON.stringify(a.slice(at, at + 120))} became ${JSON.stringify(b.slice(at, at + 120))}`
}
