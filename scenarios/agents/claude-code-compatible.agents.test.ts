// Claude Code 2.1.328 pointed at an Anthropic-compatible endpoint that caches by prefix
// (`deepseek-anthropic`: automatic 64-token units, `cache_control` ignored, no writes billed) and, beside
// it, the same prompts at Anthropic's own. Claude Code's first system block is its billing line; a prefix
// cache reads through it only while it stays the same. Against serve it carries no per-request `cch`, so
// it does: the warm requests there break nowhere, and each row shows what the request cost at each.

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StepRow } from '../../reports/types.ts'
import { type AgentBench, agentVersion, startAgentBench } from './session.ts'

let bench: AgentBench
const PROMPTS = ['What does README.md say?', 'And src/calc.js?', 'Thanks. Anything else to know?']
const byProvider = new Map<string, StepRow[]>()
/** The first system block of each main request, by conversation. */
const billing = new Map<string, string[]>()

beforeAll(async () => {
  bench = await startAgentBench()
  const setup = ({ workspace }: { workspace: string }) => {
    mkdirSync(join(workspace, 'src'), { recursive: true })
    writeFileSync(join(workspace, 'README.md'), '# Calc\nA tiny calculator.\n')
    writeFileSync(join(workspace, 'src', 'calc.js'), 'export const add = (a, b) => a + b\n')
  }
  const compatible = `${bench.server.url}/deepseek-anthropic`
  for (const urls of [{}, { anthropic: compatible }]) {
    const session = await bench.session('claude-code', { setup, urls })
    for (const [index, prompt] of PROMPTS.entries()) {
      const outcome = await session.step({ prompt, continues: index > 0 })
      if (outcome.code !== 0) throw new Error(`claude exited ${outcome.code}: ${outcome.stderr.slice(-1500)}`)
    }
  }
  for (const row of bench.rows())
    if (row.ok && row.conversationKind === undefined)
      byProvider.set(row.provider, [...(byProvider.get(row.provider) ?? []), row])
  for (const exchange of bench.exchanges) {
    if (exchange.kind !== 'main') continue
    const system = (exchange.request as { system?: { text?: string }[] } | undefined)?.system
    billing.set(exchange.conversation, [
      ...(billing.get(exchange.conversation) ?? []),
      String(system?.[0]?.text ?? ''),
    ])
  }
}, 900_000)

afterAll(() => bench?.close())

describe('Claude Code at an Anthropic-compatible prefix cache, beside Anthropic', () => {
  it('is served at both, every request answered', () => {
    expect(bench.refusals()).toEqual([])
    expect(byProvider.get('anthropic')?.length ?? 0).toBeGreaterThanOrEqual(PROMPTS.length)
    expect(byProvider.get('deepseek-anthropic')?.length ?? 0).toBeGreaterThanOrEqual(PROMPTS.length)
  })

  it('sends its billing line first, the same on every request of a conversation', () => {
    expect(billing.size).toBe(2)
    for (const blocks of billing.values()) {
      expect(
        blocks[0]?.startsWith(`x-anthropic-billing-header: cc_version=${agentVersion('claude-code')}`),
      ).toBe(true)
      expect(new Set(blocks).size).toBe(1)
    }
  })

  it('reads through it at the prefix cache in 64-token units with no writes, where Anthropic writes its marks', () => {
    const compatible = byProvider.get('deepseek-anthropic') ?? []
    for (const row of compatible.filter((row) => !row.cold)) {
      expect(row.breakNode).toBeUndefined()
      expect(row.lostTokens).toBe(0)
      expect(row.cacheReadTokens % 64).toBe(0)
      expect(row.cacheReadTokens).toBeGreaterThan(row.inputTokens - 128)
    }
    expect(compatible.every((row) => row.cacheWriteTokens === 0)).toBe(true)
    expect((byProvider.get('anthropic') ?? []).some((row) => row.cacheWriteTokens > 0)).toBe(true)
  })

  it("prices each request at its endpoint's own rates", () => {
    const cost = (rows: readonly StepRow[]) => rows.reduce((sum, row) => sum + row.costUsd, 0)
    const anthropic = byProvider.get('anthropic') ?? []
    const compatible = byProvider.get('deepseek-anthropic') ?? []
    expect(compatible.every((row) => row.simulatedAs !== undefined)).toBe(true)
    expect(cost(compatible)).toBeGreaterThan(0)
    expect(cost(compatible)).toBeLessThan(cost(anthropic))
  })
})
