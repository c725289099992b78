import { describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { findModel, type ModelEntry, type OpenAIBreakpointRules, withCacheRules } from '../catalog.ts'
import { OpenAICacheSimulator } from './openai.ts'
import { tokensThrough } from './prompt.ts'
import { SimulatorRejection } from './types.ts'

const MODEL = 'gpt-5.6-sol'
const reply: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] }

type Part = Record<string, unknown>
type Item = Record<string, unknown>

const marker = { prompt_cache_breakpoint: { mode: 'explicit' } }
const text = (value: string, marked = false): Part => ({
  type: 'input_text',
  text: value,
  ...(marked ? marker : {}),
})
const userItem = (...content: Part[]): Item => ({ type: 'message', role: 'user', content })
const assistantItem = (value: string): Item => ({
  type: 'message',
  role: 'assistant',
  content: [{ type: 'output_text', text: value, annotations: [] }],
})

const instructions = fillerText(2000, 'breakpoint-instructions')
const documentText = fillerText(1500, 'breakpoint-document')

function body(input: Item[], extra: Record<string, unknown> = {}) {
  return { model: MODEL, instructions, input, prompt_cache_key: 'conversation', ...extra }
}

/** A simulator whose GPT-5.6 model follows `rules` instead of the catalog's. */
function simulatorWith(rules: Partial<OpenAIBreakpointRules>): OpenAICacheSimulator {
  const entry = findModel('openai', MODEL) as ModelEntry
  return new OpenAICacheSimulator({ models: [withCacheRules<OpenAIBreakpointRules>(entry, rules)] })
}

describe('OpenAI GPT-5.6+ breakpoints: implicit', () => {
  it('writes the prompt through the latest message and reports the write as its own bucket', () => {
    const sim = new OpenAICacheSimulator()
    expect(sim.reportsWrites(MODEL)).toBe(true)
    expect(sim.reportsWrites('gpt-5.4')).toBe(false)
    const first = sim.simulate('responses', {
      body: body([userItem(text('Question one.'))]),
      at: 0,
      output: reply,
    })
    const cacheable = first.prompt.total - first.prompt.trailing
    expect(first.counts).toMatchObject({ read: 0, write: cacheable, uncached: first.prompt.trailing })
    expect(first.counts.write5m).toBe(first.counts.write)
    expect(first.counts.read + first.counts.write + first.counts.uncached).toBe(first.counts.input)
  })

  it('reads the previous breakpoint exactly on the next append-only request, not in 128-token steps', () => {
    const sim = new OpenAICacheSimulator()
    const turn1 = [userItem(text('Question one.'))]
    const first = sim.simulate('responses', { body: body(turn1), at: 0, output: reply })
    const turn2 = [...turn1, assistantItem('Done.'), userItem(text('Question two.'))]
    const second = sim.simulate('responses', { body: body(turn2), at: 20, output: reply })
    expect(second.counts.read).toBe(first.counts.write)
    expect(second.counts.read % 128).not.toBe(0)
    expect(second.counts.write).toBe(second.prompt.total - second.prompt.trailing - second.counts.read)
    expect(first.trace.carry.tokens).toBe(second.counts.read)
  })

  it('writes nothing below the 1,024-token minimum', () => {
    const sim = new OpenAICacheSimulator()
    const small = { model: MODEL, input: [userItem(text('A short question.'))] }
    const first = sim.simulate('responses', { body: small, at: 0, output: reply })
    expect(first.counts.write).toBe(0)
    expect(first.trace.shortfall).toBe('below-minimum')
  })
})

describe('OpenAI GPT-5.6+ breakpoints: explicit markers and mode', () => {
  it('caches at an explicit marker on a content part, so a different question still reads the document', () => {
    const sim = new OpenAICacheSimulator()
    const ask = (question: string, at: number) =>
      sim.simulate('responses', {
        body: body([userItem(text(documentText, true), text(question))], {
          prompt_cache_options: { mode: 'explicit' },
        }),
        at,
        output: reply,
      })
    const first = ask('What is the first risk?', 0)
    const throughDocument = tokensThrough(first.prompt, 2)
    expect(first.counts.write).toBe(throughDocument)
    const second = ask('What is the second risk?', 30)
    expect(second.counts.read).toBe(throughDocument)
    expect(second.counts.write).toBe(0)
  })

  it("with mode 'explicit' and no markers, caches nothing", () => {
    const sim = new OpenAICacheSimulator()
    const request = body([userItem(text('Question one.'))], { prompt_cache_options: { mode: 'explicit' } })
    const first = sim.simulate('responses', { body: request, at: 0, output: reply })
    const second = sim.simulate('responses', { body: request, at: 1, output: reply })
    expect([first.counts.read, first.counts.write, second.counts.read, second.counts.write]).toEqual([
      0, 0, 0, 0,
    ])
  })

  it('rejects more than four markers, or more than three beside the implicit breakpoint, with a 400', () => {
    const sim = new OpenAICacheSimulator()
    const parts = (count: number) => Array.from({ length: count }, (_, index) => text(`part ${index}`, true))
    const attempt = (count: number, mode: 'implicit' | 'explicit') => () =>
      sim.simulate('responses', {
        body: body([userItem(...parts(count))], { prompt_cache_options: { mode } }),
        at: 0,
        output: reply,
      })
    expect(attempt(4, 'explicit')).not.toThrow()
    expect(attempt(3, 'implicit')).not.toThrow()
    for (const [count, mode] of [
      [5, 'explicit'],
      [4, 'implicit'],
    ] as const) {
      let rejection: unknown
      try {
        attempt(count, mode)()
      } catch (error) {
        rejection = error
      }
      expect(rejection).toBeInstanceOf(SimulatorRejection)
      expect((rejection as SimulatorRejection).status).toBe(400)
      expect((rejection as SimulatorRejection).body).toMatchObject({
        error: { type: 'invalid_request_error' },
      })
    }
  })
})

describe('OpenAI GPT-5.6+ breakpoints: lifetime and read horizon', () => {
  it("keeps an entry 30 minutes with ttl '30m', where the default idle eviction loses it", () => {
    const request = (extra: Record<string, unknown>) => body([userItem(text('Question one.'))], extra)
    const withTtl = new OpenAICacheSimulator()
    withTtl.simulate('responses', {
      body: request({ prompt_cache_options: { ttl: '30m' } }),
      at: 0,
      output: reply,
    })
    const kept = withTtl.simulate('responses', {
      body: request({ prompt_cache_options: { ttl: '30m' } }),
      at: 1700,
      output: reply,
    })
    expect(kept.counts.read).toBeGreaterThan(2000)

    const idle = new OpenAICacheSimulator()
    idle.simulate('responses', { body: request({}), at: 0, output: reply })
    const lost = idle.simulate('responses', { body: request({}), at: 1700, output: reply })
    expect(lost.counts.read).toBe(0)
    expect(lost.trace.shortfall).toBe('ttl-expired')
  })

  it('refreshes an idle entry on every read', () => {
    const sim = new OpenAICacheSimulator()
    const request = body([userItem(text('Question one.'))])
    sim.simulate('responses', { body: request, at: 0, output: reply })
    for (const at of [290, 580, 870]) {
      expect(sim.simulate('responses', { body: request, at, output: reply }).counts.read).toBeGreaterThan(
        2000,
      )
    }
    expect(sim.simulate('responses', { body: request, at: 870 + 301, output: reply }).counts.read).toBe(0)
  })

  it('reads only the latest breakpoints of a conversation (the read horizon)', () => {
    const branchAfterFirstTurn = (sim: OpenAICacheSimulator) => {
      const input: Item[] = [userItem(text('Question 0.'))]
      sim.simulate('responses', { body: body(input), at: 0, output: reply })
      const firstBreakpoint = sim.linearize('responses', body(input))
      for (let turn = 1; turn <= 3; turn += 1) {
        input.push(assistantItem('Done.'), userItem(text(`Question ${turn}.`)))
        sim.simulate('responses', { body: body([...input]), at: turn * 10, output: reply })
      }
      // Go back to the first turn and take another path: only its breakpoint could serve it.
      const branch = [input[0] as Item, assistantItem('Something else entirely.')]
      const result = sim.simulate('responses', { body: body(branch), at: 50, output: reply })
      return {
        read: result.counts.read,
        shortfall: result.trace.shortfall,
        first: firstBreakpoint.total - firstBreakpoint.trailing,
      }
    }
    const wide = branchAfterFirstTurn(new OpenAICacheSimulator())
    expect(wide.read).toBe(wide.first)
    const narrow = branchAfterFirstTurn(simulatorWith({ readHorizon: 2 }))
    expect(narrow.read).toBe(0)
    expect(narrow.shortfall).toBe('lookback-miss')
  })
})
