import { describe, expect, it } from 'vitest'
import { AGENT_DRIVERS } from '../harness/loops/agents/index.ts'
import { CATALOG, DEFAULT_MODELS, findModel, resolveModel, simulationModel, type Vendor } from './catalog.ts'

describe("the providers' own model ids", () => {
  it("resolve DeepSeek's API id, which DSH's catalog names otherwise, for --model and for a request", () => {
    expect(resolveModel('deepseek', 'deepseek-v4-flash').model).toBe('deepseek-flash')
    expect(simulationModel('deepseek', 'deepseek-v4-flash').simulatedAs).toBeUndefined()
  })
})

describe('the catalog prices', () => {
  it('give every built-in model a dated source', () => {
    for (const entry of CATALOG) {
      expect(entry.prices.source?.url, entry.model).toMatch(/^https:\/\//)
      expect(entry.prices.source?.date, entry.model).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    }
  })

  it('price every model of the shared Claude Code samples as itself, dated ids as their documented alias', () => {
    const expected: Record<string, { model: string; input: number; output: number }> = {
      'claude-opus-4-1-20250805': { model: 'claude-opus-4-1', input: 15, output: 75 },
      'claude-sonnet-4-20250514': { model: 'claude-sonnet-4', input: 3, output: 15 },
      'claude-opus-4-5-20251101': { model: 'claude-opus-4-5', input: 5, output: 25 },
      'claude-opus-4-7': { model: 'claude-opus-4-7', input: 5, output: 25 },
    }
    for (const [recorded, want] of Object.entries(expected)) {
      const entry = findModel('anthropic', recorded)
      expect(entry?.model, recorded).toBe(want.model)
      expect(entry?.prices, recorded).toMatchObject({ input: want.input, output: want.output })
      expect(simulationModel('anthropic', recorded).simulatedAs).toBeUndefined()
    }
    // Opus 4.1: 5m writes 1.25×, 1h writes 2×, reads 0.1× of $15.
    expect(findModel('anthropic', 'claude-opus-4-1')?.prices).toMatchObject({
      cacheWrite5m: 18.75,
      cacheWrite1h: 30,
      cacheRead: 1.5,
    })
  })

  it('price the other shared samples’ and the agents’ default models as themselves', () => {
    const vendorOfAgent: Record<string, Vendor> = {
      'claude-code': 'anthropic',
      codex: 'openai',
      opencode: 'openai',
      pi: 'anthropic',
      'qwen-code': 'openai',
      copilot: 'openai',
    }
    for (const [agent, vendor] of Object.entries(vendorOfAgent)) {
      const model = AGENT_DRIVERS[agent as keyof typeof AGENT_DRIVERS].defaultModel
      expect(findModel(vendor, model), `${agent} ${model}`).toBeDefined()
    }
    // Gemini CLI routes "auto" among these (its router, the flash model, its next-speaker check).
    for (const model of ['gemini-3.5-flash-lite', 'gemini-3.8-flash', 'gemini-3-flash-preview'])
      expect(findModel('gemini', model), model).toBeDefined()
    for (const [vendor, model] of Object.entries(DEFAULT_MODELS))
      expect(findModel(vendor as Vendor, model), model).toBeDefined()
    for (const model of ['claude-opus-4-5', 'claude-sonnet-4-5', 'gpt-5-codex', 'gpt-5.1-codex'])
      expect(findModel(model.startsWith('gpt') ? 'openai' : 'anthropic', model), model).toBeDefined()
  })

  it('leave an id the provider does not document as a snapshot to a named stand-in', () => {
    expect(simulationModel('anthropic', 'claude-opus-4-1-20990101').simulatedAs).toBe('claude-opus-4-1')
    expect(simulationModel('anthropic', 'claude-unknown-9').simulatedAs).toBeDefined()
  })
})
