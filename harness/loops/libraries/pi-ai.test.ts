import { describe, expect, it } from 'vitest'
import { findScenario } from '../../../scenarios/index.ts'
import type { LibrarySessionResult } from '../../../scenarios/run-library.ts'
import type { ProviderId } from '../../types.ts'
import { closestModelId, piAiLoop, piModel, piReported } from './pi-ai.ts'
import { loopbackForTests, runScenario } from './testing.ts'

const server = loopbackForTests()

function session(name: string, provider: ProviderId, model?: string): Promise<LibrarySessionResult> {
  return runScenario(server(), piAiLoop(), name, provider, model)
}

const DEVELOPER_REFUSAL = /unknown variant `developer`/

describe('the pi-ai loop', () => {
  it('maps a model pi-ai does not list onto the closest entry of its registry, keeping the id', () => {
    expect(closestModelId('deepseek-flash', ['deepseek-v4-flash', 'deepseek-v4-pro'])).toBe(
      'deepseek-v4-flash',
    )
    expect(closestModelId('gpt-5.6-sol', ['gpt-5', 'gpt-5.4-mini', 'gpt-5.5', 'gpt-5.5-pro'])).toBe('gpt-5.5')
    const model = piModel('deepseek', 'deepseek-flash', 'http://127.0.0.1:9/deepseek')
    expect(model).toMatchObject({
      id: 'deepseek-flash',
      provider: 'deepseek',
      api: 'openai-completions',
      baseUrl: 'http://127.0.0.1:9/deepseek',
    })
    expect(piModel('openai-chat', 'gpt-5.4', 'http://x').api).toBe('openai-completions')
  })

  it("counts every input token as pi-ai's uncached input plus its cache reads and writes", () => {
    const usage = {
      input: 10,
      output: 5,
      cacheRead: 100,
      cacheWrite: 20,
      totalTokens: 135,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    }
    expect(piReported(usage)).toEqual({ input: 130, cacheRead: 100, cacheWrite: 20, raw: usage })
  })

  for (const provider of ['anthropic', 'openai-chat', 'openai-responses'] as const) {
    it(`reads a growing warm prefix through an append-only session on ${provider}`, async () => {
      const result = await session('append-only', provider)
      expect(result.errors).toEqual([])
      expect(result.rows).toHaveLength(13)
      const reads = result.rows.map((row) => row.cacheReadTokens)
      expect(reads[0]).toBe(0)
      for (const [index, read] of reads.entries()) if (index > 1) expect(read).toBeGreaterThan(0)
      expect(reads.at(-1)).toBeGreaterThan(reads[1] ?? 0)
      expect(result.rows.every((row) => row.breakCause === undefined)).toBe(true)
      // What pi-ai reports for reads matches the wire where no cache write is reported beside them.
      expect(result.requests[1]?.reported?.cacheRead).toBe(result.requests[1]?.wire?.cacheRead)
    })
  }

  it('breaks the Anthropic cache at the system block when the prompt changes', async () => {
    const result = await session('prompt-change', 'anthropic')
    const broken = result.rows.filter((row) => row.breakCause !== undefined)
    expect(broken).toHaveLength(1)
    expect(broken[0]).toMatchObject({
      breakCause: 'system-replace',
      breakNode: 'system[0]',
      cacheReadTokens: 0,
    })
  })

  it('sends OpenAI the system prompt as a developer message, where the change breaks the prefix', async () => {
    for (const provider of ['openai-chat', 'openai-responses'] as const) {
      const result = await session('prompt-change', provider)
      expect(result.digests[0]?.items[0]?.role).toBe('developer')
      const broken = result.rows.filter((row) => row.breakCause !== undefined)
      expect(broken.map((row) => row.breakCause)).toEqual(['system-replace'])
      expect(broken[0]?.breakNode).toMatch(/^(messages|input)\[0\]/)
    }
  })

  it('breaks at the changed tool when the tool schema changes, on every provider it speaks to', async () => {
    for (const provider of ['anthropic', 'openai-chat', 'openai-responses'] as const) {
      const result = await session('tool-schema-change', provider)
      expect(result.rows).toHaveLength(27)
      const broken = result.rows.filter((row) => row.breakCause !== undefined)
      expect(broken.map((row) => row.breakCause)).toEqual(['tools-changed', 'tools-changed'])
      expect(broken.every((row) => row.breakNode?.startsWith('tools['))).toBe(true)
    }
  })

  it('sends DeepSeek behind serve a developer message, which the API refuses, on every scenario', async () => {
    for (const name of ['append-only', 'prompt-change', 'tool-schema-change']) {
      const result = await session(name, 'deepseek')
      const turns = findScenario(name)?.script.filter((action) => action.kind === 'turn').length
      expect(result.rows).toHaveLength(turns ?? 0)
      expect(result.requests.every((request) => request.status === 400)).toBe(true)
      expect(result.requests.every((request) => DEVELOPER_REFUSAL.test(request.refusal ?? ''))).toBe(true)
      expect(result.errors).toHaveLength(turns ?? 0)
      expect(result.errors[0]?.message).toMatch(DEVELOPER_REFUSAL)
    }
  })

  it("reports gpt-5.6 Chat Completions reads with the cache writes subtracted, as pi-ai's parsing does", async () => {
    const result = await session('append-only', 'openai-chat', 'gpt-5.6-sol')
    const warm = result.requests[1]
    expect(warm?.wire?.cacheWrite).toBeGreaterThan(0)
    expect(warm?.reported?.cacheRead).toBe((warm?.wire?.cacheRead ?? 0) - (warm?.wire?.cacheWrite ?? 0))
    expect(warm?.reported?.cacheWrite).toBe(warm?.wire?.cacheWrite)
    expect(warm?.reported?.input).toBe(warm?.wire?.input)
  })

  it('reports no gpt-5.6 cache writes on Responses, where pi-ai reads none', async () => {
    const result = await session('append-only', 'openai-responses', 'gpt-5.6-sol')
    const warm = result.requests[1]
    expect(warm?.wire?.cacheWrite).toBeGreaterThan(0)
    expect(warm?.reported?.cacheWrite).toBe(0)
    expect(warm?.reported?.cacheRead).toBe(warm?.wire?.cacheRead)
  })
})
