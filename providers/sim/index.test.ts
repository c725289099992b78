// The simulators under a memory budget: pruning keeps the tries bounded and never changes what a request
// reads, writes or pays while expired entries are enough; past that, the least recently used go.

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

  /** One request of `session` at `at` on gpt-5.4 (five minutes to an hour of idle retention). */
  const read = (simulators: CacheSimulators, session: number, at: number) =>
    simulators.simulate('openai-chat', { body: body('openai-chat', session, 0), at, output }).counts.read

  it('evicts the least recently used live sessions once nothing expired is left, and counts them', () => {
    // Each session's prefix is about 6 kB of estimated bytes: three fit, a fourth passes the budget.
    const simulators = new CacheSimulators({ memoryBytes: 20_000 })
    for (const session of [0, 1, 2]) read(simulators, session, session)
    expect(read(simulators, 0, 10)).toBeGreaterThan(0)
    expect(simulators.pruneStats.evicted).toBe(0)
    // Session 3 passes the budget with every entry live: session 1, the least recently used, goes first.
    read(simulators, 3, 20)
    const stats = simulators.pruneStats
    expect(stats.evicted).toBeGreaterThan(0)
    expect(stats.bytes).toBeLessThanOrEqual(20_000)
    expect(stats.overBudget).toBe(false)
    expect(read(simulators, 0, 29)).toBeGreaterThan(0)
    expect(read(simulators, 1, 30)).toBe(0)
    expect(read(simulators, 3, 31)).toBeGreaterThan(0)
  })

  it('drops expired entries before any live one', () => {
    const simulators = new CacheSimulators({ memoryBytes: 20_000 })
    read(simulators, 0, 0)
    read(simulators, 1, 1)
    // Two hours on, sessions 0 and 1 have expired; sessions 2 and 3 fit once they are gone.
    read(simulators, 2, 7_200)
    read(simulators, 3, 7_201)
    expect(simulators.pruneStats.removed).toBeGreaterThan(0)
    expect(simulators.pruneStats.evicted).toBe(0)
    expect(read(simulators, 2, 7_210)).toBeGreaterThan(0)
  })

  it('removes what expired when the clock moves on under a budget, and nothing without one', () => {
    const bounded = new CacheSimulators({ memoryBytes: 10_000_000 })
    const unbounded = new CacheSimulators()
    for (const simulators of [bounded, unbounded]) for (const session of [0, 1]) read(simulators, session, 0)
    const before = bounded.pruneStats.bytes
    bounded.advanceTo(7_200)
    unbounded.advanceTo(7_200)
    expect(bounded.pruneStats.bytes).toBeLessThan(before / 10)
    expect(bounded.pruneStats.evicted).toBe(0)
    expect(unbounded.pruneStats.bytes).toBe(before)
  })

  it('counts a longer text as more bytes, and a text outside Latin-1 at two bytes a character', () => {
    const short = new CacheSimulators()
    const long = new CacheSimulators()
    read(short, 0, 0)
    long.simulate('openai-chat', {
      body: { model: 'gpt-5.4', messages: [{ role: 'user', content: 'word '.repeat(20_000) }] },
      at: 0,
      output,
    })
    expect(long.pruneStats.bytes).toBeGreaterThan(100_000)
    expect(long.pruneStats.bytes).toBeGreaterThan(short.pruneStats.bytes)
    const wide = new CacheSimulators()
    wide.simulate('openai-chat', {
      body: { model: 'gpt-5.4', messages: [{ role: 'user', content: 'жук '.repeat(25_000) }] },
      at: 0,
      output,
    })
    expect(wide.pruneStats.bytes - long.pruneStats.bytes).toBeGreaterThanOrEqual(100_000)
  })
})
