// The simulators under a memory budget: pruning keeps the tries bounded and never changes what a request
// reads, writes or pays.

import { describe, expect, it } from 'vitest'
import type { AssistantMessage } from '../../harness/types.ts'
import type { WireApi } from '../types.ts'
import { CacheSimulators } from './index.ts'

const output: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'Fine.' }] }

/** A session's request: a long file of its own, so every session adds its own prefix to the tries. */
function body(api: WireApi, session: number, step: number): Record<string, unknown> {
  // Gemini 2.5 Flash caches nothing under 2,048 tokens: its sessions' files are longer.
  const file = Array.from(
    { length: api === 'gemini-generate' ? 260 : 120 },
    (_, line) => `line ${line} of file ${session}: x${line} = ${session * line}`,
  )
  const messages = [{ role: 'user', content: `Review:\n${file.join('\n')}` }]
  for (let index = 0; index < step; index += 1)
    messages.push({ role: 'assistant', content: 'Fine.' }, { role: 'user', content: `And part ${index}?` })
  if (api === 'gemini-generate')
    return {
      model: 'gemini-2.5-flash',
      systemInstruction: { parts: [{ text: 'Review.' }] },
      contents: messages.map((message) => ({
        role: message.role === 'assistant' ? 'model' : 'user',
        parts: [{ text: message.content }],
      })),
    }
  if (api === 'anthropic-messages')
    return {
      model: 'claude-sonnet-4-6',
      max_tokens: 50,
      cache_control: { type: 'ephemeral' },
      system: 'Review.',
      messages,
    }
  const model = api === 'deepseek-chat' ? 'deepseek-flash' : 'gpt-5.4'
  return { model, messages: [{ role: 'system', content: 'Review.' }, ...messages] }
}

/** Sessions two hours apart (every cache has expired by the next), three requests each. */
function counts(api: WireApi, simulators: CacheSimulators, sessions: number): unknown[] {
  const seen: unknown[] = []
  for (let session = 0; session < sessions; session += 1) {
    for (let step = 0; step < 3; step += 1) {
      const at = session * 7_200 + step * 30
      seen.push(simulators.simulate(api, { body: body(api, session, step), at, output }).counts)
    }
  }
  return seen
}

describe('simulators under a memory budget', () => {
  for (const api of ['anthropic-messages', 'openai-chat', 'deepseek-chat', 'gemini-generate'] as const) {
    it(`${api}: prune expired entries past the budget and count every request as without one`, () => {
      const bounded = new CacheSimulators({ memoryBytes: 200_000 })
      const unbounded = new CacheSimulators()
      expect(counts(api, bounded, 80)).toEqual(counts(api, unbounded, 80))
      const stats = bounded.pruneStats
      expect(stats.prunes).toBeGreaterThan(0)
      // Pruning runs again once the tries double what the last one left, so they stay within twice the
      // budget (what is live here, one session, is far below it).
      expect(stats.bytes).toBeLessThanOrEqual(400_000)
      expect(unbounded.pruneStats.bytes).toBeGreaterThan(stats.bytes * 3)
    })
  }

  it('never prunes without a budget', () => {
    const simulators = new CacheSimulators()
    counts('openai-chat', simulators, 5)
    expect(simulators.pruneStats.prunes).toBe(0)
  })
})
