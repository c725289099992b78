import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { type DeepSeekCacheRules, findModel, type ModelEntry, withCacheRules } from '../catalog.ts'
import { DeepSeekCacheSimulator } from './deepseek.ts'
import { tokensThrough } from './prompt.ts'

const MODEL = 'deepseek-flash'
const reply = (text: string): AssistantMessage => ({ role: 'assistant', content: [{ type: 'text', text }] })
const answer = reply('Here is the summary you asked for.')

type ChatMessage = Record<string, unknown>
const user = (content: string): ChatMessage => ({ role: 'user', content })
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content })
const body = (messages: ChatMessage[]) => ({ model: MODEL, messages })

/** A simulator whose model follows `rules` instead of the catalog's. */
function simulatorWith(rules: Partial<DeepSeekCacheRules>): DeepSeekCacheSimulator {
  const entry = findModel('deepseek', MODEL) as ModelEntry
  return new DeepSeekCacheSimulator({ models: [withCacheRules<DeepSeekCacheRules>(entry, rules)] })
}

/** The documented mode: reads at a unit's exact position (the catalog's V4 models read on a 128 grid). */
const documentedSimulator = () => simulatorWith({ readGranularityTokens: 0 })

const system = fillerText(1500, 'deepseek-sim-system')
/** A long shared document, the common prefix A of the documented example. */
const documentA = fillerText(3000, 'deepseek-document')
const withTail = (tail: string) => `${documentA}${tail}`

describe('DeepSeek cache prefix units (current rules)', () => {
  it('multi-turn: request 2 hits the unit at the end of request 1 and its reply', () => {
    const sim = documentedSimulator()
    const first = body([{ role: 'system', content: system }, user('What does the log say?')])
    const one = sim.simulate('chat', { body: first, at: 0, output: answer })
    expect(one.counts.read).toBe(0)
    const second = body([
      { role: 'system', content: system },
      user('What does the log say?'),
      assistant('Here is the summary you asked for.'),
      user('And the errors?'),
    ])
    const two = sim.simulate('chat', { body: second, at: 30, output: answer })
    // The unit at the end of request 1's output covers its prompt and the reply: three messages.
    expect(two.counts.read).toBe(tokensThrough(two.prompt, 3))
    expect(two.counts.read).toBeGreaterThan(one.prompt.total - one.prompt.trailing)
    expect(one.trace.carry.tokens).toBe(two.counts.read)
  })

  it('A+B then A+C misses; the common prefix A is persisted, so A+D then hits A', () => {
    const sim = documentedSimulator()
    sim.simulate('chat', { body: body([user(withTail(' Summarize it.'))]), at: 0, output: answer })
    const second = sim.simulate('chat', {
      body: body([user(withTail(' Analyze its profit.'))]),
      at: 10,
      output: answer,
    })
    expect(second.counts.read).toBe(0)
    const third = sim.simulate('chat', {
      body: body([user(withTail(' List its risks.'))]),
      at: 20,
      output: answer,
    })
    // The unit ends inside the user message, on the token where A+C and A+D part (message framing: 3).
    expect(third.counts.read).toBeGreaterThanOrEqual(3000 + 3)
    expect(third.counts.read).toBeLessThan(3000 + 3 + 3)
    expect(third.counts.uncached).toBe(third.counts.input - third.counts.read)
  })

  it('evicts a unit once it has been unused for the eviction time, and says so', () => {
    const sim = documentedSimulator()
    const request = body([{ role: 'system', content: system }, user('hello')])
    sim.simulate('chat', { body: request, at: 0, output: answer })
    const eviction = 6 * 3600
    // Lifetimes are half-open: readable for `eviction` seconds after the last use, gone at that instant.
    const kept = sim.simulate('chat', { body: request, at: eviction - 1, output: answer })
    expect(kept.counts.read).toBeGreaterThan(1500)
    const lost = sim.simulate('chat', { body: request, at: 2 * eviction - 1, output: answer })
    expect(lost.counts.read).toBe(0)
    expect(lost.trace.shortfall).toBe('ttl-expired')
  })

  it('makes a unit readable persistDelaySeconds after the start of the request that persisted it', () => {
    const sim = simulatorWith({ persistDelaySeconds: 5, readGranularityTokens: 0 })
    const first = body([{ role: 'system', content: system }, user('What does the log say?')])
    sim.simulate('chat', { body: first, at: 0, output: answer })
    const next = body([
      { role: 'system', content: system },
      user('What does the log say?'),
      assistant('Here is the summary you asked for.'),
      user('And the errors?'),
    ])
    // Inside the delay: request 1's units are still being built, which is no expiry.
    const early = sim.simulate('chat', { body: next, at: 2, output: answer })
    expect(early.counts.read).toBe(0)
    expect(early.trace.shortfall).toBeUndefined()
    // After it: request 1's output-end unit (built at 5), not yet request 2's input-end unit (built at 7).
    const after = sim.simulate('chat', { body: next, at: 6, output: answer })
    expect(after.counts.read).toBe(tokensThrough(after.prompt, 3))
    const later = sim.simulate('chat', { body: next, at: 8, output: answer })
    expect(later.counts.read).toBe(tokensThrough(later.prompt, 4))
  })

  it('with fixed-interval units, A+C hits the last interval unit inside A', () => {
    const sim = simulatorWith({ intervalTokens: 512 })
    sim.simulate('chat', { body: body([user(withTail(' Summarize it.'))]), at: 0, output: answer })
    const second = sim.simulate('chat', {
      body: body([user(withTail(' Analyze its profit.'))]),
      at: 10,
      output: answer,
    })
    expect(second.counts.read).toBe(Math.floor((3000 + 3) / 512) * 512)
  })
})

describe('DeepSeek caches per model', () => {
  it('never serves one model a prefix another model cached', () => {
    const sim = documentedSimulator()
    const messages = [{ role: 'system', content: system }, user('hello')]
    sim.simulate('chat', { body: { model: 'deepseek-flash', messages }, at: 0, output: answer })
    const other = sim.simulate('chat', {
      body: { model: 'deepseek-v4-pro', messages },
      at: 1,
      output: answer,
    })
    expect(other.counts.read).toBe(0)
    const same = sim.simulate('chat', { body: { model: 'deepseek-flash', messages }, at: 2, output: answer })
    expect(same.counts.read).toBeGreaterThan(1500)
  })
})

describe('DeepSeek legacy rules (64-token storage units)', () => {
  const legacy = () => simulatorWith({ mode: 'legacy' })

  it('reads the longest common prefix, floored to 64 tokens', () => {
    const sim = legacy()
    sim.simulate('chat', { body: body([user(withTail(' Summarize it.'))]), at: 0, output: answer })
    const second = sim.simulate('chat', {
      body: body([user(withTail(' Analyze its profit.'))]),
      at: 10,
      output: answer,
    })
    expect(second.trace.matched).toBeGreaterThanOrEqual(3003)
    expect(second.counts.read).toBe(Math.floor(second.trace.matched / 64) * 64)
    expect(second.counts.read).toBe(2944)
  })

  it('caches nothing under 64 tokens', () => {
    const sim = legacy()
    const request = body([user('A short question about the build.')])
    sim.simulate('chat', { body: request, at: 0, output: answer })
    const again = sim.simulate('chat', { body: request, at: 1, output: answer })
    expect(again.trace.matched).toBeGreaterThan(0)
    expect(again.trace.matched).toBeLessThan(64)
    expect(again.counts.read).toBe(0)
    expect(again.trace.shortfall).toBe('below-minimum')
  })
})

// ── Properties over random append-only conversations ──────────────────────────────────────────────

/** One exchange: a user message of some size, the scripted reply, and the idle time after it. */
interface Step {
  userTokens: number
  replyTokens: number
  toolCall: boolean
  gap: number
  seed: number
}

const exchange: fc.Arbitrary<Step> = fc.record({
  userTokens: fc.integer({ min: 1, max: 600 }),
  replyTokens: fc.integer({ min: 1, max: 200 }),
  toolCall: fc.boolean(),
  gap: fc.integer({ min: 0, max: 600 }),
  seed: fc.integer({ min: 0, max: 1_000_000 }),
})

function scriptedReply(step: Step, index: number): AssistantMessage {
  const content: AssistantMessage['content'] = [
    { type: 'text', text: fillerText(step.replyTokens, step.seed) },
  ]
  if (step.toolCall) {
    content.push({
      type: 'tool-call',
      callId: `call_${index}`,
      name: 'read_file',
      arguments: `{"n":${index}}`,
    })
  }
  return { role: 'assistant', content }
}

/** The wire messages of an assistant reply and the tool result that must follow its call. */
function replyMessages(message: AssistantMessage, index: number): ChatMessage[] {
  const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
  const calls = message.content.flatMap((block) =>
    block.type === 'tool-call'
      ? [{ id: block.callId, type: 'function', function: { name: block.name, arguments: block.arguments } }]
      : [],
  )
  const messages: ChatMessage[] = [
    { role: 'assistant', content: text, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
  ]
  if (calls.length > 0)
    messages.push({ role: 'tool', tool_call_id: `call_${index}`, content: `result ${index}` })
  return messages
}

/** Run a conversation; returns each request's simulation. */
function run(sim: DeepSeekCacheSimulator, steps: readonly Step[]) {
  const messages: ChatMessage[] = [{ role: 'system', content: system }]
  let at = 0
  return steps.map((step, index) => {
    messages.push(user(fillerText(step.userTokens, step.seed + 1)))
    const output = scriptedReply(step, index)
    const simulation = sim.simulate('chat', { body: { model: MODEL, messages: [...messages] }, at, output })
    messages.push(...replyMessages(output, index))
    at += step.gap
    return { simulation, at }
  })
}

describe('DeepSeek simulator properties', () => {
  const conversations = fc.array(exchange, { minLength: 1, maxLength: 8 })

  it('splits every request into buckets that sum to its input', () => {
    fc.assert(
      fc.property(conversations, (steps) => {
        for (const { simulation } of run(documentedSimulator(), steps)) {
          const { input, read, write, uncached } = simulation.counts
          expect(read + write + uncached).toBe(input)
          expect(read).toBeGreaterThanOrEqual(0)
          expect(uncached).toBeGreaterThanOrEqual(0)
        }
      }),
      { numRuns: 40 },
    )
  })

  it('gives identical usage for identical input', () => {
    fc.assert(
      fc.property(conversations, (steps) => {
        const one = run(documentedSimulator(), steps).map(({ simulation }) => simulation.counts)
        const two = run(documentedSimulator(), steps).map(({ simulation }) => simulation.counts)
        expect(two).toEqual(one)
      }),
      { numRuns: 25 },
    )
  })

  const variants: Array<{ name: string; rules: Partial<DeepSeekCacheRules> }> = [
    { name: 'units', rules: {} },
    { name: 'units every 256 tokens', rules: { intervalTokens: 256 } },
    { name: 'legacy', rules: { mode: 'legacy' } },
  ]
  for (const { name, rules } of variants) {
    it(`never reads less than the previous request's carry on an append-only step (${name})`, () => {
      fc.assert(
        fc.property(conversations, (steps) => {
          const results = run(simulatorWith(rules), steps)
          for (let index = 1; index < results.length; index += 1) {
            const previous = results[index - 1]?.simulation
            const current = results[index]?.simulation
            expect(current?.counts.read).toBeGreaterThanOrEqual(previous?.trace.carry.tokens ?? 0)
          }
        }),
        { numRuns: 40 },
      )
    })
  }
})

describe('DeepSeek reasoning_content and the output-end unit', () => {
  const call = { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }
  const calling: AssistantMessage = {
    role: 'assistant',
    content: [{ type: 'tool-call', callId: 'call_1', name: 'read_file', arguments: '{"path":"a"}' }],
  }
  const reasoning = fillerText(300, 'deepseek-tool-reasoning')
  const first = body([{ role: 'system', content: system }, user('Open a.')])
  const next = (withReasoning: boolean) =>
    body([
      { role: 'system', content: system },
      user('Open a.'),
      {
        role: 'assistant',
        content: null,
        ...(withReasoning ? { reasoning_content: reasoning } : {}),
        tool_calls: [call],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'contents of a' },
    ])

  it('persists the answer with its reasoning when it calls tools, so the request passing it back reads it', () => {
    const sim = documentedSimulator()
    sim.simulate('chat', { body: first, at: 0, output: calling, reasoning })
    const two = sim.simulate('chat', { body: next(true), at: 10, output: answer })
    // System, user, then the answer: its reasoning and its tool call.
    expect(two.counts.read).toBe(tokensThrough(two.prompt, 4))
  })

  it('misses the answer when its reasoning is not passed back', () => {
    const sim = documentedSimulator()
    sim.simulate('chat', { body: first, at: 0, output: calling, reasoning })
    const two = sim.simulate('chat', { body: next(false), at: 10, output: answer })
    // Only the unit at the end of the input: system and user.
    expect(two.counts.read).toBe(tokensThrough(two.prompt, 2))
  })

  it('bills the caller’s output count, reasoning included, when it gives one', () => {
    const sim = documentedSimulator()
    const one = sim.simulate('chat', { body: first, at: 0, output: calling, reasoning, outputTokens: 310 })
    expect(one.counts.output).toBe(310)
  })
})

describe('DeepSeek V4 reads on a 128-token grid (measured on live logs)', () => {
  const conversation = [
    { role: 'system', content: system },
    user('What does the log say?'),
    assistant('Here is the summary you asked for.'),
    user('And the errors?'),
  ]

  it('reports the read of an extending request rounded down to 128, where the documented mode reads the exact unit', () => {
    const first = body([{ role: 'system', content: system }, user('What does the log say?')])
    const grid = new DeepSeekCacheSimulator()
    const documented = documentedSimulator()
    const gridFirst = grid.simulate('chat', { body: first, at: 0, output: answer })
    documented.simulate('chat', { body: first, at: 0, output: answer })
    const onGrid = grid.simulate('chat', { body: body(conversation), at: 30, output: answer })
    const exact = documented.simulate('chat', { body: body(conversation), at: 30, output: answer })
    expect(exact.counts.read % 128).not.toBe(0)
    expect(onGrid.counts.read).toBe(Math.floor(exact.counts.read / 128) * 128)
    // The ideal the row core compares with is on the same grid: no phantom lost tokens.
    expect(gridFirst.trace.carry.tokens).toBe(onGrid.counts.read)
  })

  it('names its evidence in the catalog: source, date and sample size', () => {
    const rules = (findModel('deepseek', 'deepseek-flash') as ModelEntry).cache as DeepSeekCacheRules
    expect(rules.readGranularityTokens).toBe(128)
    expect(rules.readGranularitySource).toMatchObject({
      date: '2026-11-30',
      sample: expect.stringContaining('18 of 18'),
    })
  })

  it("reads only the previous input at a new turn: the answer's reasoning is not in the next prompt", () => {
    const sim = documentedSimulator()
    const first = [{ role: 'system', content: system }, user('What does the log say?')]
    const one = sim.simulate('chat', {
      body: body(first),
      at: 0,
      output: answer,
      reasoning: 'Thinking it over.',
    })
    const next = body([
      ...first,
      {
        role: 'assistant',
        content: 'Here is the summary you asked for.',
        reasoning_content: 'Thinking it over.',
      },
      user('And the errors?'),
    ])
    const two = sim.simulate('chat', { body: next, at: 10, output: answer })
    expect(two.counts.read).toBe(one.prompt.total - one.prompt.trailing)
  })
})
