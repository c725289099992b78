import { describe, expect, it } from 'vitest'
import type { LibrarySessionResult } from '../../../scenarios/run-library.ts'
import type { ProviderId } from '../../types.ts'
import { openAiAgentsLoop } from './openai-agents.ts'
import { loopbackForTests, runScenario } from './testing.ts'

const server = loopbackForTests()

function session(name: string, provider: ProviderId, model?: string): Promise<LibrarySessionResult> {
  return runScenario(server(), openAiAgentsLoop(), name, provider, model)
}

/** The Agents SDK sends `max_tokens` on Chat Completions, which GPT-5.x refuses; GPT-4.1 takes it. */
const CHAT_MODEL = 'gpt-4.1'

const targets = [
  { provider: 'openai-responses', model: undefined },
  { provider: 'openai-chat', model: CHAT_MODEL },
] as const

describe('the OpenAI Agents SDK loop', () => {
  for (const { provider, model } of targets) {
    it(`reads a growing warm prefix through an append-only session on ${provider}`, async () => {
      const result = await session('append-only', provider, model)
      expect(result.errors).toEqual([])
      expect(result.rows).toHaveLength(13)
      const reads = result.rows.map((row) => row.cacheReadTokens)
      expect(reads[0]).toBe(0)
      for (const [index, read] of reads.entries()) if (index > 0) expect(read).toBeGreaterThan(0)
      expect(reads.at(-1)).toBeGreaterThan(reads[1] ?? 0)
      expect(result.rows.every((row) => row.breakCause === undefined)).toBe(true)
      // The SDK's usage per request is the wire's: every input token and the cached ones.
      for (const request of result.requests) {
        expect(request.reported?.input).toBe(request.wire?.input)
        expect(request.reported?.cacheRead).toBe(request.wire?.cacheRead)
      }
    })

    it(`breaks once, at the system prompt, when the prompt changes on ${provider}`, async () => {
      const result = await session('prompt-change', provider, model)
      expect(result.rows).toHaveLength(20)
      const broken = result.rows.filter((row) => row.breakCause !== undefined)
      expect(broken.map((row) => row.breakCause)).toEqual(['system-replace'])
      expect(broken[0]?.breakNode).toMatch(/^(system|messages)\[0\]/)
    })

    it(`fails the turns whose scripted answer calls a removed tool on ${provider}, keeping the history`, async () => {
      const result = await session('tool-schema-change', provider, model)
      const causes = result.rows.map((row) => row.breakCause).filter((cause) => cause !== undefined)
      expect(causes.slice(0, 2)).toEqual(['tools-changed', 'tools-changed'])
      // After grep is removed the SDK refuses the call to it and ends the run; the reference loop runs it.
      expect(result.errors.map((error) => error.turn)).toEqual([7, 8, 9])
      expect(result.errors[0]?.message).toMatch(/Tool grep not found/)
      // The request that was answered before the failure reaches the wire, but the SDK's error carries no
      // run state for it, so the caller is told nothing of its usage.
      const failed = result.rows.findIndex((row) => row.turn === 7)
      expect(result.requests[failed]?.wire?.input).toBeGreaterThan(0)
      expect(result.requests[failed]?.reported).toBeUndefined()
      // The failed turn is not kept: the next turn's request no longer carries turn 7's user message.
      expect(causes.slice(2).every((cause) => cause === 'message-edited')).toBe(true)
    })
  }

  it('reports the gpt-5.6 cache writes Responses sends, as the SDK keeps its input details', async () => {
    const result = await session('append-only', 'openai-responses', 'gpt-5.6-sol')
    const warm = result.requests[1]
    expect(warm?.wire?.cacheWrite).toBeGreaterThan(0)
    expect(warm?.reported?.cacheWrite).toBe(warm?.wire?.cacheWrite)
    expect(warm?.reported?.cacheRead).toBe(warm?.wire?.cacheRead)
  })

  it('sends GPT-5.x Chat Completions a max_tokens cap, which the API refuses on every turn', async () => {
    const result = await session('append-only', 'openai-chat')
    expect(result.rows).toHaveLength(4)
    expect(result.requests.every((request) => request.status === 400)).toBe(true)
    expect(result.requests[0]?.refusal).toMatch(/'max_tokens' is not supported with this model/)
    expect(result.errors).toHaveLength(4)
  })

  it('refuses the providers it has no model for', async () => {
    await expect(session('append-only', 'anthropic')).rejects.toThrow(/does not speak to anthropic/)
  })
})
