// Cline 3.0.65 against serve on the Anthropic wire, with cachelab's MCP server in its settings: one turn
// (`cline --json` cannot continue a session) whose first answer starts a subagent by `spawn_agent`. No
// session id travels on the wire: the capture tells Cline by its tools and the subagent by its system
// prompt, so the two are conversations of their own, and neither breaks where its recorded bodies show
// the previous request extended unchanged. Cline's own session files, found with no path, import to the
// capture's usage request for request.

import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cachelabMcpServer, MCP_TOOL_NAME } from '../../harness/loops/agents/index.ts'
import type { CapturedExchange } from '../../providers/wire/exchange.ts'
import type { StepRow } from '../../reports/types.ts'
import {
  type AgentBench,
  type AgentSession,
  agentVersion,
  importAgentSession,
  startAgentBench,
} from './bench.ts'

let bench: AgentBench
let rows: StepRow[]
let session: AgentSession

beforeAll(async () => {
  bench = await startAgentBench([
    {
      kind: 'main',
      turn: 1,
      step: 1,
      tools: [
        { name: 'spawn_agent', arguments: { systemPrompt: 'You list files.', task: 'List the files' } },
      ],
    },
  ])
  session = await bench.run('cline', [{ prompt: 'What does README.md say?' }], {
    setup: ({ workspace }) => writeFileSync(join(workspace, 'README.md'), '# Calc\nA tiny calculator.\n'),
    mcpServers: [cachelabMcpServer(mkdtempSync(join(tmpdir(), 'cachelab-cline-mcp-')))],
  })
  rows = bench.rows()
})

afterAll(() => bench?.close())

/** A body without its cache marks, which Cline moves to the newest message on every request. */
function unmarked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unmarked)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'cache_control')
      .map(([key, inner]) => [key, unmarked(inner)]),
  )
}

/** Whether `next` sends `previous` again unchanged (system, tools, every message) and adds to it. */
function extends_(previous: CapturedExchange, next: CapturedExchange): boolean {
  const [before, after] = [unmarked(previous.request), unmarked(next.request)] as Array<
    Record<string, unknown>
  >
  const messages = (body: Record<string, unknown> | undefined) => (body?.messages ?? []) as unknown[]
  return (
    JSON.stringify(before?.system) === JSON.stringify(after?.system) &&
    JSON.stringify(before?.tools) === JSON.stringify(after?.tools) &&
    JSON.stringify(messages(after).slice(0, messages(before).length)) === JSON.stringify(messages(before))
  )
}

describe(`Cline ${agentVersion('cline')} on the Anthropic wire, captured through serve`, () => {
  it('is served every request, none refused', () => {
    expect(bench.refusals()).toEqual([])
    // Known by its tools: its version is on no request (its user-agent is the AI SDK's).
    expect(rows.every((row) => row.agent === 'cline')).toBe(true)
  })

  it("declares cachelab's MCP tool beside its own", () => {
    const main = bench.exchanges.find((exchange) => exchange.kind === 'main')
    const names = ((main?.request?.tools ?? []) as Array<{ name?: string }>).map((tool) => tool.name)
    expect(names).toContain('spawn_agent')
    expect(names.some((name) => name?.includes(MCP_TOOL_NAME))).toBe(true)
  })

  it('keeps its own turn and its subagent in two conversations, the subagent one of its own kind', () => {
    const kinds = new Map(rows.map((row) => [row.variant, row.conversationKind ?? 'main']))
    expect([...kinds.values()].sort()).toEqual(['main', 'subagent'])
    const subagent = bench.exchanges.filter((exchange) => exchange.kind === 'subagent')
    expect(subagent.length).toBeGreaterThan(0)
    expect(JSON.stringify(subagent[0]?.request?.system)).toContain('You list files.')
  })

  it('breaks exactly where the recorded bodies show a request did not extend the one before', () => {
    for (const kind of ['main', 'subagent'] as const) {
      const exchanges = bench.exchanges.filter((exchange) => exchange.kind === kind)
      const mine = rows.filter((row) => (row.conversationKind ?? 'main') === kind)
      expect(mine.length, kind).toBe(exchanges.length)
      expect(mine.length, kind).toBeGreaterThan(1)
      const extended = exchanges.slice(1).map((exchange, index) => {
        const previous = exchanges[index] as CapturedExchange
        return extends_(previous, exchange)
      })
      expect(extended, kind).toEqual(mine.slice(1).map((row) => row.breakCause === undefined))
      expect(extended.every(Boolean), kind).toBe(true)
    }
  })
})

describe("Cline's own session files, imported with no path", () => {
  it("give the capture's requests with their usage, the lead's and the subagent's", async () => {
    const imported = await importAgentSession(session.place)
    expect(imported.stdout).toMatch(/cline \(2 files in/)
    const usage = (from: readonly StepRow[], kind: string) =>
      from
        .filter((row) => row.ok && (row.conversationKind ?? 'main') === kind)
        .map(
          (row) =>
            `${row.model} ${row.inputTokens}/${row.cacheReadTokens}/${row.cacheWriteTokens}/${row.outputTokens}`,
        )
    for (const kind of ['main', 'subagent']) {
      expect(usage(imported.rows, kind).length, kind).toBeGreaterThan(0)
      expect(usage(imported.rows, kind), kind).toEqual(usage(rows, kind))
    }
    expect(imported.rows.every((row) => row.agent === `cline/${agentVersion('cline')}`)).toBe(true)
    // The subagent's file names the lead's session as its parent.
    const lead = imported.rows.find((row) => (row.conversationKind ?? 'main') === 'main')?.variant
    const subagent = imported.rows.find((row) => row.conversationKind === 'subagent')
    expect(subagent?.variant.startsWith(`${lead}__agent_`)).toBe(true)
  })
})
