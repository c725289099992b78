// The simulators under a memory budget: pruning keeps the tries bounded and never changes what a request
// reads, writes or pays while expired entries are enough; past that, the least recently used go.

import { describe, expect, it } from 'vitest'
import type { AssistantMessage } from '../../harness/types.ts'
import type { WireApi } from '../types.ts'
import { CacheSimulators } from './index.ts'
import type { PreviousRequest, Simulation } from './types.ts'

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

/**
 * A family of bodies: session `session`'s request after `turns` user turns, each session with a file of
 * its own (the tries hold a path per session), on a model of one simulator; `gap` outlives its lifetime.
 */
interface GapFamily {
  name: string
  api: WireApi
  body: (session: number, turns: number) => Record<string, unknown>
  /** Seconds of idle that outlive the cache (5 minutes, half an hour, six hours). */
  gap: number
}

const file = (session: number) =>
  Array.from(
    { length: 260 },
    (_, line) => `line ${line} of file ${session}: x${line} = ${session * line}`,
  ).join('\n')
const turnsOf = <T>(turns: number, user: (text: string) => T, assistant: () => T): T[] =>
  Array.from({ length: turns }, (_, turn) => turn).flatMap((turn) => [
    ...(turn > 0 ? [assistant()] : []),
    user(turn === 0 ? `Review:\n${file(0)}` : `And part ${turn}?`),
  ])
const chat = (model: string) => (session: number, turns: number) => ({
  model,
  messages: [
    { role: 'system', content: `Review file ${session}.` },
    ...turnsOf(
      turns,
      (text) => ({ role: 'user', content: text.replace(file(0), file(session)) }),
      () => ({ role: 'assistant', content: 'Fine.' }),
    ),
  ],
})

const GAP_FAMILIES: readonly GapFamily[] = [
  {
    name: 'Anthropic (5-minute entries at breakpoints)',
    api: 'anthropic-messages',
    gap: 400,
    body: (session, turns) => ({
      model: 'claude-sonnet-4-6',
      max_tokens: 50,
      cache_control: { type: 'ephemeral' },
      system: `Review file ${session}.`,
      messages: turnsOf(
        turns,
        (text) => ({ role: 'user', content: text.replace(file(0), file(session)) }),
        () => ({ role: 'assistant', content: 'Fine.' }),
      ),
    }),
  },
  {
    name: 'Bedrock (cache points)',
    api: 'bedrock-converse',
    gap: 400,
    body: (session, turns) => ({
      modelId: 'anthropic.claude-sonnet-4-6',
      system: [{ text: `Review file ${session}.` }],
      messages: turnsOf(
        turns,
        (text): Record<string, unknown> => ({
          role: 'user',
          content: [{ text: text.replace(file(0), file(session)) }, { cachePoint: { type: 'default' } }],
        }),
        () => ({ role: 'assistant', content: [{ text: 'Fine.' }] }),
      ),
      inferenceConfig: { maxTokens: 50 },
    }),
  },
  { name: 'OpenAI prefixes (gpt-5.4)', api: 'openai-chat', gap: 7_200, body: chat('gpt-5.4') },
  { name: 'OpenAI breakpoints (gpt-5.6-sol)', api: 'openai-chat', gap: 7_200, body: chat('gpt-5.6-sol') },
  { name: 'DeepSeek units', api: 'deepseek-chat', gap: 7 * 3_600, body: chat('deepseek-flash') },
  {
    name: 'Gemini implicit prefixes',
    api: 'gemini-generate',
    gap: 400,
    body: (session, turns) => ({
      model: 'gemini-2.5-flash',
      systemInstruction: { parts: [{ text: `Review file ${session}.` }] },
      contents: turnsOf(
        turns,
        (text) => ({ role: 'user', parts: [{ text: text.replace(file(0), file(session)) }] }),
        () => ({ role: 'model', parts: [{ text: 'Fine.' }] }),
      ),
    }),
  },
]

/**
 * The simulators as a capture drives them: each request of a session given the session's previous
 * request (its prompt, machine and what it left cached), as serve's tracker gives it.
 */
class Sessions {
  private readonly previous = new Map<number, PreviousRequest>()
  constructor(
    readonly simulators: CacheSimulators,
    private readonly family: GapFamily,
  ) {}

  send(session: number, turns: number, at: number): Simulation {
    const previous = this.previous.get(session)
    const simulation = this.simulators.simulate(this.family.api, {
      body: this.family.body(session, turns),
      at,
      output,
      ...(previous !== undefined ? { previous } : {}),
    })
    const { machine, carry } = simulation.trace
    this.previous.set(session, {
      prompt: simulation.prompt,
      ...(machine !== undefined ? { machine } : {}),
      carry,
    })
    return simulation
  }
}

/** The estimated bytes the tries hold after session 0's first two requests. */
function bytesOfOneSession(family: GapFamily): number {
  const sessions = new Sessions(new CacheSimulators(), family)
  sessions.send(0, 1, 0)
  sessions.send(0, 2, 60)
  return sessions.simulators.pruneStats.bytes
}

describe('an idle gap under a memory budget: named and counted as without one, however its entries went', () => {
  for (const family of GAP_FAMILIES) {
    describe(family.name, () => {
      /**
       * Session 0 sends two requests, then `between` happens, then its third request comes after the gap:
       * its counterfactual on simulators with `memoryBytes`, and on simulators without a budget.
       */
      const afterGap = (memoryBytes: number, between: (sessions: Sessions) => void) =>
        [new CacheSimulators({ memoryBytes }), new CacheSimulators()].map((simulators) => {
          const sessions = new Sessions(simulators, family)
          sessions.send(0, 1, 0)
          sessions.send(0, 2, 60)
          between(sessions)
          // What pruning had done before the third request (which may prune again once it is in).
          const stats = simulators.pruneStats
          return { third: sessions.send(0, 3, 60 + family.gap), stats }
        })

      it('the clock moved past the lifetime (serve removes what expired at once): ttl-expired, the tokens the previous request left', () => {
        const [bounded, unbounded] = afterGap(1_000_000_000, (sessions) =>
          sessions.simulators.advanceTo(60 + family.gap - 1),
        )
        expect(bounded?.stats.removed).toBeGreaterThan(0)
        const counterfactual = unbounded?.third.trace.counterfactual
        expect(counterfactual?.cause).toBe('ttl-expired')
        expect(counterfactual?.warm).toBeGreaterThan(counterfactual?.ideal ?? 0)
        expect(bounded?.third.trace.counterfactual).toEqual(counterfactual)
        expect(bounded?.third.counts).toEqual(unbounded?.third.counts)
      })

      it("another session's request after the gap pruned it under the budget: the same", () => {
        const [bounded, unbounded] = afterGap(bytesOfOneSession(family) + 1, (sessions) =>
          sessions.send(1, 1, 60 + family.gap - 1),
        )
        expect(bounded?.stats.removed).toBeGreaterThan(0)
        expect(bounded?.stats.evicted).toBe(0)
        expect(unbounded?.third.trace.counterfactual?.cause).toBe('ttl-expired')
        expect(bounded?.third.trace.counterfactual).toEqual(unbounded?.third.trace.counterfactual)
      })

      it('evicted for memory while still live: named evicted, the tokens the provider would have read', () => {
        const [bounded, unbounded] = afterGap(bytesOfOneSession(family) + 1, (sessions) =>
          sessions.send(1, 1, 90),
        )
        expect(bounded?.stats.evicted).toBeGreaterThan(0)
        // Read again within the lifetime, without a budget it reads what the previous request left.
        const live = new Sessions(new CacheSimulators(), family)
        live.send(0, 1, 0)
        live.send(0, 2, 60)
        live.send(1, 1, 90)
        const read = live.send(0, 3, 120)
        expect(read.counts.read).toBeGreaterThan(0)
        expect(read.trace.counterfactual?.cause).toBeUndefined()
        const sessions = new Sessions(
          new CacheSimulators({ memoryBytes: bytesOfOneSession(family) + 1 }),
          family,
        )
        sessions.send(0, 1, 0)
        sessions.send(0, 2, 60)
        sessions.send(1, 1, 90)
        const evicted = sessions.send(0, 3, 120)
        expect(evicted.counts.read).toBeLessThan(read.counts.read)
        expect(evicted.trace.counterfactual).toEqual({
          ideal: evicted.counts.read,
          warm: read.counts.read,
          cause: 'evicted',
        })
        expect(unbounded).toBeDefined()
      })
    })
  }

  it('claims nothing where nothing was pruned: a fresh cache (a reset) never held what the previous request left', () => {
    const family = GAP_FAMILIES[0] as GapFamily
    const first = new Sessions(new CacheSimulators({ memoryBytes: 1_000_000_000 }), family)
    first.send(0, 1, 0)
    const previous = first.send(0, 2, 60)
    const fresh = new CacheSimulators({ memoryBytes: 1_000_000_000 })
    const after = fresh.simulate(family.api, {
      body: family.body(0, 3),
      at: 1_000,
      output,
      previous: { prompt: previous.prompt, carry: previous.trace.carry },
    })
    expect(after.trace.counterfactual).toEqual({ ideal: 0, warm: 0 })
  })
})
