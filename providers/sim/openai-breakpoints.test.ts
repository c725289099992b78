import { describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { findModel, type ModelEntry, type OpenAIBreakpointRules, withCacheRules } from '../catalog.ts'
import { OpenAICacheSimulator, writeWindow } from './openai.ts'
import { tokensThrough } from './prompt.ts'
import { type Simulation, SimulatorRejection } from './types.ts'

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

  it("with mode 'explicit' and no markers, does not read what an implicit request cached either", () => {
    const sim = new OpenAICacheSimulator()
    const input = [userItem(text('Question one.'))]
    const warm = sim.simulate('responses', { body: body(input), at: 0, output: reply })
    expect(warm.counts.write).toBeGreaterThan(2000)
    const unmarked = sim.simulate('responses', {
      body: body(input, { prompt_cache_options: { mode: 'explicit' } }),
      at: 10,
      output: reply,
      previous: { prompt: warm.prompt },
    })
    expect(unmarked.counts).toMatchObject({ read: 0, write: 0, uncached: unmarked.counts.input })
    expect(unmarked.trace.carry.tokens).toBe(0)
    expect(unmarked.trace.counterfactual).toEqual({ ideal: 0, warm: 0 })
    // The entry is still there for a request that uses the cache.
    expect(sim.simulate('responses', { body: body(input), at: 20, output: reply }).counts.read).toBe(
      warm.counts.write,
    )
  })
})

describe('OpenAI GPT-5.6+ breakpoints: the write window (latest markers write, earlier ones are read-only)', () => {
  const parts = Array.from(
    { length: 7 },
    (_, index) => `Part ${index + 1}: ${fillerText(40, `part-${index}`)}`,
  )
  /** A user item of the parts, with markers on the 1-based part numbers in `marked`. */
  const partsItem = (marked: readonly number[], count = parts.length) =>
    userItem(...parts.slice(0, count).map((value, index) => text(value, marked.includes(index + 1))))
  /** What a request that keeps parts 1..`count` and then asks something else reads. */
  const branchRead = (sim: OpenAICacheSimulator, count: number, at: number) =>
    sim.simulate('responses', {
      body: body([userItem(...parts.slice(0, count).map((value) => text(value)), text(`Branch ${count}.`))]),
      at,
      output: reply,
    }).counts.read
  const through = (sim: OpenAICacheSimulator, count: number) =>
    tokensThrough(sim.linearize('responses', body([partsItem([])])), count + 1)

  it('explicit mode: of six new markers, writes the latest four; the two before are read points', () => {
    const sim = new OpenAICacheSimulator()
    const result = sim.simulate('responses', {
      body: body([partsItem([1, 2, 3, 4, 5, 6], 6)], { prompt_cache_options: { mode: 'explicit' } }),
      at: 0,
      output: reply,
    })
    expect(result.counts.write).toBe(through(sim, 6))
    expect(branchRead(sim, 2, 10)).toBe(0)
    expect(branchRead(sim, 3, 20)).toBe(through(sim, 3))
  })

  it('implicit mode: of six markers, writes the latest three and the implicit breakpoint', () => {
    const sim = new OpenAICacheSimulator()
    const result = sim.simulate('responses', {
      body: body([partsItem([1, 2, 3, 4, 5, 6])]),
      at: 0,
      output: reply,
    })
    expect(result.counts.write).toBe(through(sim, 7))
    expect(branchRead(sim, 3, 10)).toBe(0)
    expect(branchRead(sim, 4, 20)).toBe(through(sim, 4))
    expect(branchRead(sim, 6, 30)).toBe(through(sim, 6))
  })

  it('a latest marker whose prefix is cached is refreshed, and no older marker is written in its place', () => {
    const sim = new OpenAICacheSimulator()
    const explicit = { prompt_cache_options: { mode: 'explicit', ttl: '30m' } }
    sim.simulate('responses', { body: body([partsItem([3, 4, 5, 6], 6)], explicit), at: 0, output: reply })
    const again = sim.simulate('responses', {
      body: body([partsItem([1, 2, 3, 4, 5, 6], 6)], explicit),
      at: 1000,
      output: reply,
    })
    expect(again.counts).toMatchObject({ read: through(sim, 6), write: 0 })
    // Markers 1 and 2 stayed read points: nothing was written for a request that keeps only them.
    expect(branchRead(sim, 2, 1010)).toBe(0)
    // Marker 3 was refreshed at 1,000 s: it outlives the 30 minutes counted from its write.
    expect(branchRead(sim, 3, 2500)).toBe(through(sim, 3))
  })

  it('after the entries expire, the same request writes its window again and still not the earlier markers', () => {
    const sim = new OpenAICacheSimulator()
    const marked = body([partsItem([1, 2, 3, 4, 5, 6])])
    sim.simulate('responses', { body: marked, at: 0, output: reply })
    const cold = sim.simulate('responses', { body: marked, at: 2000, output: reply })
    expect(cold.counts).toMatchObject({ read: 0, write: through(sim, 7) })
    expect(branchRead(sim, 3, 2010)).toBe(0)
    expect(branchRead(sim, 4, 2020)).toBe(through(sim, 4))
  })

  it('selects the window by position: the implicit breakpoint and the latest markers, four entries at most', () => {
    const rules = { maxWritesPerRequest: 4 }
    expect(writeWindow([1, 2, 3, 4, 5, 6], undefined, rules)).toEqual([3, 4, 5, 6])
    expect(writeWindow([1, 2, 3, 4, 5, 6], 7, rules)).toEqual([4, 5, 6, 7])
    // A marker on the implicit breakpoint's segment is one of the latest three and one entry.
    expect(writeWindow([1, 2, 3, 4, 5, 6], 6, rules)).toEqual([4, 5, 6])
    expect(writeWindow([], undefined, rules)).toEqual([])
    expect(writeWindow([2], 5, { maxWritesPerRequest: 1 })).toEqual([5])
  })
})

describe('OpenAI GPT-5.6+ breakpoints: a loop that marks every user turn', () => {
  for (const mode of ['implicit', 'explicit'] as const) {
    it(`runs ten turns without a 400 and reads its previous prefix every turn (${mode} mode)`, () => {
      const sim = new OpenAICacheSimulator()
      const input: Item[] = []
      let previous: Simulation | undefined
      for (let turn = 1; turn <= 10; turn += 1) {
        if (turn > 1) input.push(assistantItem(`Answer ${turn - 1}.`))
        input.push(userItem(text(`Question ${turn}: ${fillerText(30, `turn-${turn}`)}`, true)))
        const result = sim.simulate('responses', {
          body: body([...input], { prompt_cache_options: { mode } }),
          at: turn * 20,
          output: reply,
          ...(previous !== undefined ? { previous: { prompt: previous.prompt } } : {}),
        })
        const cacheable = result.prompt.total - result.prompt.trailing
        const previousCacheable =
          previous === undefined ? 0 : previous.prompt.total - previous.prompt.trailing
        expect(result.counts.read).toBe(previousCacheable)
        // Only what the turn appended is written: one new entry, the earlier markers are read points.
        expect(result.counts.write).toBe(cacheable - previousCacheable)
        expect(result.trace.counterfactual?.ideal ?? 0).toBe(result.counts.read)
        previous = result
      }
    })
  }

  it('answers a request with three earlier markers and one new one with usage (the default implicit mode)', () => {
    const sim = new OpenAICacheSimulator()
    const turns = [1, 2, 3, 4].map((turn) => userItem(text(`Question ${turn}.`, true)))
    const [first, second, third, fourth] = turns as [Item, Item, Item, Item]
    const history = [first, assistantItem('A1.'), second, assistantItem('A2.'), third, assistantItem('A3.')]
    sim.simulate('responses', { body: body(history.slice(0, 5)), at: 0, output: reply })
    const earlier = sim.linearize('responses', body(history.slice(0, 5)))
    const result = sim.simulate('responses', { body: body([...history, fourth]), at: 10, output: reply })
    expect(result.counts.read).toBe(earlier.total - earlier.trailing)
    expect(result.counts.write).toBe(result.prompt.total - result.prompt.trailing - result.counts.read)
  })
})

describe('OpenAI GPT-5.6+ breakpoints: the 400s the API answers', () => {
  const rejection = (run: () => unknown): SimulatorRejection => {
    try {
      run()
    } catch (error) {
      if (error instanceof SimulatorRejection) return error
      throw error
    }
    throw new Error('expected a 400')
  }
  const responses = (request: Record<string, unknown>) => () =>
    new OpenAICacheSimulator().simulate('responses', { body: request, at: 0, output: reply })
  const chat = (request: Record<string, unknown>) => () =>
    new OpenAICacheSimulator().simulate('chat', { body: request, at: 0, output: reply })

  it('refuses a marker on assistant output (output_text) with the parameter named', () => {
    const assistant = {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Done.', annotations: [], ...marker }],
    }
    const refused = rejection(responses(body([userItem(text('Question one.')), assistant])))
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({
      error: {
        type: 'invalid_request_error',
        param: 'input[1].content[0].prompt_cache_breakpoint',
        code: 'invalid_value',
      },
    })
  })

  it('refuses a marker on a Chat message itself, and accepts one on its text and image parts', () => {
    const system = { role: 'system', content: instructions }
    const onMessage = { role: 'user', content: 'Question one.', ...marker }
    expect(rejection(chat({ model: MODEL, messages: [system, onMessage] })).body).toMatchObject({
      error: { type: 'invalid_request_error', param: 'messages[1].prompt_cache_breakpoint' },
    })
    const onParts = {
      role: 'user',
      content: [
        { type: 'text', text: 'Look at this.', ...marker },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' }, ...marker },
      ],
    }
    expect(chat({ model: MODEL, messages: [system, onParts] })).not.toThrow()
  })

  it("refuses a marker whose mode is not 'explicit', and a mode or ttl the options do not have", () => {
    const implicitMarker = userItem({
      type: 'input_text',
      text: 'Q.',
      prompt_cache_breakpoint: { mode: 'implicit' },
    })
    const cases: Array<[Record<string, unknown>, string]> = [
      [body([implicitMarker]), 'input[0].content[0].prompt_cache_breakpoint.mode'],
      [body([userItem(text('Q.'))], { prompt_cache_options: { mode: 'auto' } }), 'prompt_cache_options.mode'],
      [body([userItem(text('Q.'))], { prompt_cache_options: { ttl: '24h' } }), 'prompt_cache_options.ttl'],
      [body([userItem(text('Q.'))], { prompt_cache_options: 'explicit' }), 'prompt_cache_options'],
    ]
    for (const [request, param] of cases) {
      const refused = rejection(responses(request))
      expect(refused.status).toBe(400)
      expect(refused.body).toMatchObject({ error: { type: 'invalid_request_error', param } })
    }
    expect(
      responses(body([userItem(text('Q.'))], { prompt_cache_options: { ttl: '30m', mode: null } })),
    ).not.toThrow()
  })

  it('refuses both fields on a model before GPT-5.6', () => {
    const older = (extra: Record<string, unknown>, input: Item[] = [userItem(text('Q.'))]) =>
      rejection(responses({ ...body(input, extra), model: 'gpt-5.4' })).body
    expect(older({ prompt_cache_options: { ttl: '30m' } })).toMatchObject({
      error: { type: 'invalid_request_error', param: 'prompt_cache_options', code: 'unsupported_parameter' },
    })
    expect(older({}, [userItem(text('Q.', true))])).toMatchObject({
      error: { param: 'input[0].content[0].prompt_cache_breakpoint', code: 'unsupported_parameter' },
    })
    expect(responses({ ...body([userItem(text('Q.'))]), model: 'gpt-5.4' })).not.toThrow()
  })

  it('honours a marker on a content part of a function_call_output', () => {
    const sim = new OpenAICacheSimulator()
    const call = { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{}' }
    const output = (question: string) => ({
      type: 'function_call_output',
      call_id: 'call_1',
      output: [text(documentText, true), text(question)],
    })
    const explicit = { prompt_cache_options: { mode: 'explicit' } }
    const first = sim.simulate('responses', {
      body: body([userItem(text('Read it.')), call, output('First tail.')], explicit),
      at: 0,
      output: reply,
    })
    const second = sim.simulate('responses', {
      body: body([userItem(text('Read it.')), call, output('Second tail.')], explicit),
      at: 10,
      output: reply,
    })
    expect(first.counts.write).toBeGreaterThan(3000)
    expect(second.counts.read).toBe(first.counts.write)
  })
})

describe('OpenAI GPT-5.6+ breakpoints: lifetime and read horizon', () => {
  it("keeps an entry 30 minutes, ttl '30m' named or not (it is the default and only value), and no longer", () => {
    const request = (extra: Record<string, unknown>) => body([userItem(text('Question one.'))], extra)
    for (const extra of [{ prompt_cache_options: { ttl: '30m' } }, {}]) {
      const sim = new OpenAICacheSimulator()
      sim.simulate('responses', { body: request(extra), at: 0, output: reply })
      expect(
        sim.simulate('responses', { body: request(extra), at: 1799, output: reply }).counts.read,
      ).toBeGreaterThan(2000)
      const other = new OpenAICacheSimulator()
      other.simulate('responses', { body: request(extra), at: 0, output: reply })
      const lost = other.simulate('responses', { body: request(extra), at: 1800, output: reply })
      expect(lost.counts.read).toBe(0)
      expect(lost.trace.shortfall).toBe('ttl-expired')
    }
  })

  it('refreshes an idle entry on every read', () => {
    const sim = new OpenAICacheSimulator()
    const request = body([userItem(text('Question one.'))])
    sim.simulate('responses', { body: request, at: 0, output: reply })
    for (const at of [1700, 3400, 5100]) {
      expect(sim.simulate('responses', { body: request, at, output: reply }).counts.read).toBeGreaterThan(
        2000,
      )
    }
    expect(sim.simulate('responses', { body: request, at: 5100 + 1800, output: reply }).counts.read).toBe(0)
  })

  it('reads an entry among the latest 50 breakpoints of its conversation (the guide), not past them; 80 is the SDK reading', () => {
    /** A first turn, then `later` turns that each write one breakpoint, then a branch back to the first turn. */
    const branchAfter = (sim: OpenAICacheSimulator, later: number) => {
      const input: Item[] = [userItem(text('Question 0.'))]
      sim.simulate('responses', { body: body([...input]), at: 0, output: reply })
      const first = sim.linearize('responses', body(input))
      for (let turn = 1; turn <= later; turn += 1) {
        input.push(assistantItem('Done.'), userItem(text(`Question ${turn}.`)))
        sim.simulate('responses', { body: body([...input]), at: turn, output: reply })
      }
      const branch = [input[0] as Item, assistantItem('Another path.')]
      const result = sim.simulate('responses', { body: body(branch), at: later + 1, output: reply })
      return {
        read: result.counts.read,
        shortfall: result.trace.shortfall,
        first: first.total - first.trailing,
      }
    }
    expect(findModel('openai', MODEL)?.cache).toMatchObject({ readHorizon: 50 })
    const within = branchAfter(new OpenAICacheSimulator(), 49)
    expect(within.read).toBe(within.first)
    const past = branchAfter(new OpenAICacheSimulator(), 50)
    expect(past).toMatchObject({ read: 0, shortfall: 'lookback-miss' })
    const sdk = branchAfter(simulatorWith({ readHorizon: 80 }), 50)
    expect(sdk.read).toBe(sdk.first)
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
