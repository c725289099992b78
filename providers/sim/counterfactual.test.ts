import { describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { type AnthropicCacheRules, DEEPSEEK_DOCUMENTED, simulationModel, withCacheRules } from '../catalog.ts'
import { AnthropicCacheSimulator } from './anthropic.ts'
import { counterfactualPrompt, firstDivergence } from './counterfactual.ts'
import { DeepSeekCacheSimulator } from './deepseek.ts'
import { OpenAICacheSimulator } from './openai.ts'
import { PromptBuilder } from './prompt.ts'
import { TokenCounter } from './tokens.ts'
import type { Breakpoint, PreviousRequest, Simulation } from './types.ts'

type Body = Record<string, unknown>
const reply: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }
const previousOf = (simulation: Simulation): PreviousRequest => ({
  prompt: simulation.prompt,
  ...(simulation.trace.machine !== undefined ? { machine: simulation.trace.machine } : {}),
})

describe('the counterfactual request', () => {
  const counter = new TokenCounter()
  const marker: Breakpoint = { ttl: '5m', ttlSeconds: 300, explicit: false }
  const prompt = (texts: string[], marked: number[] = []) => {
    const builder = new PromptBuilder(counter, 1)
    for (const [index, text] of texts.entries())
      builder.add({ frame: 'user', text, framing: 3, node: { part: 'messages', index } })
    return { ...builder.build(3), placed: marked.map((index) => ({ index, breakpoint: marker })) }
  }

  it('is the current request itself when that request extends the previous one', () => {
    const previous = prompt(['a', 'b'])
    const current = prompt(['a', 'b', 'c'], [2])
    expect(firstDivergence(previous, current)).toBeUndefined()
    expect(counterfactualPrompt(previous, current)).toBe(current)
  })

  it('keeps the previous request whole, its own breakpoints too, and appends what the current one added after its last segment', () => {
    const previous = prompt(['a', 'b', 'c'], [2])
    const current = prompt(['A', 'b', 'c', 'd', 'e'], [4])
    expect(firstDivergence(previous, current)).toBe(0)
    const candidate = counterfactualPrompt(previous, current)
    expect(candidate.segments.map((segment) => segment.text)).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(candidate.placed?.map((placed) => placed.index)).toEqual([2, 4])
    expect(candidate.cumulative.at(-1)).toBe(candidate.total - candidate.trailing)
  })

  it('re-sends the previous request as it was when the current one added nothing after it', () => {
    const previous = prompt(['a', 'b', 'c', 'd'], [3])
    const current = prompt(['a', 'B', 'c', 'd'], [3])
    const candidate = counterfactualPrompt(previous, current)
    expect(candidate.segments.map((segment) => segment.text)).toEqual(['a', 'b', 'c', 'd'])
    expect(candidate.placed?.map((placed) => placed.index)).toEqual([3])
  })

  it('cuts the previous request to what a request that shrank holds, its last breakpoint at the cut', () => {
    const previous = prompt(['a', 'b', 'c', 'd'], [3])
    const current = prompt(['a', 'summary'], [1])
    const candidate = counterfactualPrompt(previous, current)
    expect(candidate.total - candidate.trailing).toBeLessThanOrEqual(current.total - current.trailing)
    expect(candidate.segments.map((segment) => segment.text)).toEqual(['a', 'b'])
    expect(candidate.placed?.map((placed) => placed.index)).toEqual([1])
  })
})

describe('Anthropic: the ideal is the simulator reading an unchanged extension', () => {
  const model = 'claude-sonnet-4-6'
  const system = fillerText(3000, 'cf-anthropic-system')
  const message = (role: string, text: string) => ({ role, content: [{ type: 'text', text }] })
  const body = (systemText: string, messages: Body[], extra: Body = {}): Body => ({
    model,
    max_tokens: 512,
    cache_control: { type: 'ephemeral' },
    system: [{ type: 'text', text: systemText }],
    messages,
    ...extra,
  })
  const turn = (count: number) =>
    Array.from({ length: count }, (_, index) =>
      message(index % 2 === 0 ? 'user' : 'assistant', fillerText(40, `cf-turn-${index}`)),
    )

  it('counts what a rewritten head cost: the previous prefix an extension would have read', () => {
    const simulator = new AnthropicCacheSimulator()
    const first = simulator.simulate({ body: body(system, turn(3)), at: 0, output: reply })
    const rewritten = simulator.simulate({
      body: body(`${system} Build mode is on.`, turn(5)),
      at: 10,
      output: reply,
      previous: previousOf(first),
    })
    expect(rewritten.counts.read).toBe(0)
    expect(rewritten.trace.counterfactual?.ideal).toBe(first.counts.write)
    expect(rewritten.trace.counterfactual?.warm).toBe(first.counts.write)
  })

  it('counts a rewritten system prompt that carried the only breakpoint: the system an extension would have read', () => {
    const simulator = new AnthropicCacheSimulator()
    const marked = (text: string): Body => ({
      ...body(text, turn(3)),
      cache_control: undefined,
      system: [{ type: 'text', text, cache_control: { type: 'ephemeral' } }],
    })
    const first = simulator.simulate({ body: marked(system), at: 0, output: reply })
    expect(first.counts.write).toBeGreaterThanOrEqual(1024)
    const rewritten = simulator.simulate({
      body: marked(`REWRITTEN. ${system}`),
      at: 10,
      output: reply,
      previous: previousOf(first),
    })
    expect(rewritten.counts.read).toBe(0)
    expect(rewritten.trace.counterfactual?.ideal).toBe(first.counts.write)
  })

  it('gives a request below the model minimum an ideal of 0, never its own size', () => {
    const simulator = new AnthropicCacheSimulator()
    const first = simulator.simulate({ body: body(system, turn(3)), at: 0, output: reply })
    expect(first.counts.write).toBeGreaterThanOrEqual(1024)
    const small = simulator.simulate({
      body: body('You summarize.', [message('user', fillerText(400, 'cf-small'))]),
      at: 10,
      output: reply,
      previous: previousOf(first),
    })
    expect(small.counts.input).toBeLessThan(1024)
    expect(small.trace.counterfactual?.ideal).toBe(0)
  })

  it('treats an entry as expired at exactly its lifetime, and shows what the gap cost apart', () => {
    const simulator = new AnthropicCacheSimulator()
    const first = simulator.simulate({ body: body(system, turn(3)), at: 0, output: reply })
    const justBefore = new AnthropicCacheSimulator()
    justBefore.simulate({ body: body(system, turn(3)), at: 0, output: reply })
    const early = justBefore.simulate({
      body: body(system, turn(5)),
      at: 299.999,
      output: reply,
      previous: previousOf(first),
    })
    expect(early.counts.read).toBe(first.counts.write)
    const late = simulator.simulate({
      body: body(system, turn(5)),
      at: 300,
      output: reply,
      previous: previousOf(first),
    })
    expect(late.counts.read).toBe(0)
    expect(late.trace.counterfactual).toEqual({ ideal: 0, warm: first.counts.write, cause: 'ttl-expired' })
  })

  it('takes a lookback miss on an extension as the provider side, not a client loss', () => {
    const rules = { collapseToolRuns: false } satisfies Partial<AnthropicCacheRules>
    const simulator = new AnthropicCacheSimulator({
      models: [withCacheRules<AnthropicCacheRules>(simulationModel('anthropic', model), rules)],
    })
    const history = [message('user', 'Read every file.')]
    const first = simulator.simulate({ body: body(system, history), at: 0, output: reply })
    const calls = Array.from({ length: 12 }, (_, index) => ({
      type: 'tool_use',
      id: `toolu_${index}`,
      name: 'read_file',
      input: { path: `f${index}` },
    }))
    const results = calls.map((call) => ({
      type: 'tool_result',
      tool_use_id: call.id,
      content: fillerText(20, call.id),
    }))
    const fanOut = [...history, { role: 'assistant', content: calls }, { role: 'user', content: results }]
    const next = simulator.simulate({
      body: body(system, fanOut),
      at: 5,
      output: reply,
      previous: previousOf(first),
    })
    expect(next.counts.read).toBe(0)
    expect(next.trace.counterfactual).toEqual({ ideal: 0, warm: first.counts.write, cause: 'lookback-miss' })
  })
})

describe('OpenAI before GPT-5.6: the ideal follows the 1,024-token minimum and 128-token steps', () => {
  const instructions = fillerText(11_000, 'cf-openai-instructions')
  const body = (input: Body[]): Body => ({
    model: 'gpt-5.4',
    instructions,
    input,
    prompt_cache_key: 'cf',
  })
  const user = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] })

  it('caps the ideal of a request that shrank at what its own size allows, on the grid', () => {
    const simulator = new OpenAICacheSimulator()
    const long = [user(fillerText(3000, 'cf-openai-long')), user('Next.')]
    const first = simulator.simulate('responses', { body: body(long), at: 0, output: reply })
    const shrunk = simulator.simulate('responses', {
      body: body([user('Summary of what happened.')]),
      at: 10,
      output: reply,
      previous: previousOf(first),
    })
    const ideal = shrunk.trace.counterfactual?.ideal ?? -1
    const cacheable = shrunk.prompt.total - shrunk.prompt.trailing
    expect(ideal).toBeGreaterThanOrEqual(1024)
    expect((ideal - 1024) % 128).toBe(0)
    expect(ideal).toBeLessThanOrEqual(cacheable)
  })
})

describe('DeepSeek: the ideal reads whole units', () => {
  it('reads the previous request whole when an unchanged extension would have', () => {
    // The documented mode: exact unit positions, no 128-token read grid.
    const simulator = new DeepSeekCacheSimulator({
      models: [{ ...simulationModel('deepseek', 'deepseek-flash'), cache: DEEPSEEK_DOCUMENTED }],
    })
    const system = { role: 'system', content: fillerText(2000, 'cf-deepseek') }
    const body = (messages: Body[]): Body => ({ model: 'deepseek-flash', messages })
    const first = simulator.simulate('chat', {
      body: body([system, { role: 'user', content: 'one' }]),
      at: 0,
      output: reply,
    })
    const changed = simulator.simulate('chat', {
      body: body([
        { role: 'system', content: `${system.content} changed` },
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'two' },
      ]),
      at: 10,
      output: reply,
      previous: previousOf(first),
    })
    expect(changed.counts.read).toBe(0)
    // The unit at the end of the previous answer: its input, then the answer as the next request renders it.
    expect(changed.trace.counterfactual?.ideal).toBeGreaterThan(first.counts.input - first.prompt.trailing)
  })
})
