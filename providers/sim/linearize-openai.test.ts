// The OpenAI linearizers on their own: prompt order (tools first), token arithmetic, prefix stability as a
// conversation grows, and the single-slot cache and item memo agreeing with a newly loaded module.

import { describe, expect, it, vi } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import * as linearizers from './linearize-openai.ts'
import { describeNode } from './prompt.ts'
import { TokenCounter } from './tokens.ts'
import type { Prompt } from './types.ts'

type Body = Record<string, unknown>
type Linearizers = typeof linearizers

const parameters = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }
const readme = '# cachelab\nA harness that measures prompt-cache hits of agent loops.'

/** One wire API: its bodies (fresh objects on every call) and its linearizer. */
interface Api {
  name: string
  /** A body with these tool names, the shared history and `followUps` more user turns. */
  body: (tools: string[], followUps?: number) => Body
  /** The same body with one more item appended; earlier items stay the same objects. */
  extend: (body: Body, text: string) => Body
  /** The body's items (messages, input items): the very array the body holds. */
  items: (body: Body) => Body[]
  /** A user turn as an item of this API. */
  user: (text: string) => Body
  linearize: (module: Linearizers, body: Body, counter: TokenCounter, scale?: number) => Prompt
  /** Wire nodes of `body(['read_file'])`, in prompt order. */
  order: string[]
}

const followUp = (index: number) => `Follow-up question ${index}: what does it measure?`

const chat: Api = {
  name: 'Chat Completions',
  body: (tools, followUps = 0) => ({
    model: 'gpt-5.4',
    messages: [
      { role: 'developer', content: 'You are a careful coding agent.' },
      { role: 'user', content: [{ type: 'text', text: 'Open README.md and summarize it.' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'read_file', arguments: '{"path":"README.md"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: readme },
      { role: 'assistant', content: 'It is a prompt-cache harness.' },
      ...Array.from({ length: followUps }, (_, index) => ({ role: 'user', content: followUp(index) })),
    ],
    tools: tools.map((name) => ({
      type: 'function',
      function: { name, description: `The ${name} tool.`, parameters },
    })),
    response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } },
  }),
  extend: (body, text) => ({
    ...body,
    messages: [...(body.messages as Body[]), { role: 'user', content: text }],
  }),
  items: (body) => body.messages as Body[],
  user: (text) => ({ role: 'user', content: text }),
  linearize: (module, body, counter, scale = 1) => module.linearizeChat(body, counter, scale),
  order: [
    'tools[0]',
    'response_format[0]',
    'messages[0]',
    'messages[1].0',
    'messages[2].0',
    'messages[3]',
    'messages[4]',
  ],
}

const responses: Api = {
  name: 'Responses',
  body: (tools, followUps = 0) => ({
    model: 'gpt-5.4',
    instructions: 'You are a careful coding agent.',
    input: [
      {
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: 'Open README.md and summarize it.' }],
      },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"README.md"}' },
      { type: 'function_call_output', call_id: 'call_1', output: readme },
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'It is a prompt-cache harness.', annotations: [] }],
      },
      ...Array.from({ length: followUps }, (_, index) => userItem(followUp(index))),
    ],
    tools: tools.map((name) => ({
      type: 'function',
      name,
      description: `The ${name} tool.`,
      parameters,
      strict: false,
    })),
    store: false,
  }),
  extend: (body, text) => ({ ...body, input: [...(body.input as Body[]), userItem(text)] }),
  items: (body) => body.input as Body[],
  user: userItem,
  linearize: (module, body, counter, scale = 1) => module.linearizeResponses(body, counter, scale),
  order: ['tools[0]', 'system[0]', 'input[0].0', 'input[1]', 'input[2]', 'input[3].0'],
}

function userItem(text: string): Body {
  return { type: 'message', role: 'user', content: [{ type: 'input_text', text }] }
}

/** What a prompt says, without `base` (a hint of which segment objects were reused). */
const content = ({ segments, cumulative, trailing, total }: Prompt) => ({
  segments,
  cumulative,
  trailing,
  total,
})
/** The wire node of each segment, printed: `tools[0]`, `messages[1].0`. */
const nodes = (prompt: Prompt) => prompt.segments.map((segment) => describeNode(segment.node))
const layout = (prompt: Prompt) => prompt.segments.map(({ frame, text }) => ({ frame, text }))
/** The body with an explicit breakpoint on the first content part of its first item that has parts. */
function withBreakpoint(body: Body): Body {
  const items = (body.messages ?? body.input) as Body[]
  const parts = items.find((item) => Array.isArray(item.content))?.content as Body[]
  Object.assign(parts[0] as Body, { prompt_cache_breakpoint: { mode: 'explicit' } })
  return body
}
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)

/** The linearizers of a newly loaded module: an empty single-slot cache and item memo. */
async function pristine(): Promise<Linearizers> {
  vi.resetModules()
  return import('./linearize-openai.ts')
}

describe.each([chat, responses])('linearizing a $name body', (api) => {
  it('renders tools first, then the instructions and each item in order', () => {
    const prompt = api.linearize(linearizers, api.body(['read_file']), new TokenCounter())
    expect(nodes(prompt)).toEqual(api.order)
    expect(prompt.segments[0]?.frame).toBe('tool')
  })

  it.each([1, 1.25])('totals the sum of its segments and the priming at scale %s', (scale) => {
    const counter = new TokenCounter()
    const prompt = api.linearize(linearizers, api.body(['read_file', 'write_file'], 2), counter, scale)
    const tokens = prompt.segments.map((segment) => segment.tokens)
    expect(prompt.trailing).toBe(Math.round(3 * scale))
    expect(prompt.total).toBe(sum(tokens) + prompt.trailing)
    expect(prompt.cumulative).toEqual(tokens.map((_, index) => sum(tokens.slice(0, index + 1))))
    for (const segment of prompt.segments) expect(segment.tokens).toBeGreaterThanOrEqual(segment.framing)
  })

  it('counts a plain user turn as its text and three framing tokens', () => {
    const counter = new TokenCounter()
    const prompt = api.linearize(linearizers, api.body([], 1), counter)
    expect(prompt.segments.at(-1)?.tokens).toBe(3 + counter.count(followUp(0)))
  })

  it('keeps every earlier segment when a turn is appended to fresh copies of the history', () => {
    const counter = new TokenCounter()
    const before = api.linearize(linearizers, api.body(['read_file']), counter)
    const after = api.linearize(linearizers, api.body(['read_file'], 1), counter)
    expect(after.segments.slice(0, before.segments.length)).toEqual(before.segments)
    expect(after.cumulative.slice(0, before.segments.length)).toEqual(before.cumulative)
    expect(after.segments).toHaveLength(before.segments.length + 1)
  })

  it('reuses the very segment objects when the appended body shares the earlier items', () => {
    const counter = new TokenCounter()
    const body = api.body(['read_file'])
    const before = api.linearize(linearizers, body, counter)
    const after = api.linearize(linearizers, api.extend(body, followUp(0)), counter)
    for (const [index, segment] of before.segments.entries()) expect(after.segments[index]).toBe(segment)
    expect(content(after)).toEqual(content(api.linearize(linearizers, api.body(['read_file'], 1), counter)))
  })

  it('changes the earliest segment when a tool changes, and only the tool segments', () => {
    const counter = new TokenCounter()
    const one = api.linearize(linearizers, api.body(['read_file']), counter)
    const other = api.linearize(linearizers, api.body(['read_files']), counter)
    expect(layout(other)[0]).not.toEqual(layout(one)[0])
    expect(layout(other).slice(1)).toEqual(layout(one).slice(1))
    const two = api.linearize(linearizers, api.body(['read_file', 'write_file']), counter)
    expect(layout(two)[0]).toEqual(layout(one)[0])
    expect(two.segments[1]?.frame).toBe('tool')
    expect(layout(two).slice(2)).toEqual(layout(one).slice(1))
  })

  it('leaves a deferred tool out of the prompt', () => {
    const body = api.body(['read_file', 'write_file'])
    const tools = body.tools as Body[]
    body.tools = [tools[0], { ...tools[1], defer_loading: true }]
    const prompt = api.linearize(linearizers, body, new TokenCounter())
    expect(layout(prompt)).toEqual(
      layout(api.linearize(linearizers, api.body(['read_file']), new TokenCounter())),
    )
  })

  it('gives body A, then B, then A again what a newly loaded module gives', async () => {
    const counter = new TokenCounter()
    const first = api.body(['read_file'], 2)
    const second = api.body(['write_file'], 1)
    const results = [first, second, first, api.body(['read_file'], 2), api.extend(first, 'more')].map(
      (body) => content(api.linearize(linearizers, body, counter)),
    )
    const fresh = await pristine()
    expect(results[0]).toEqual(content(api.linearize(fresh, api.body(['read_file'], 2), new TokenCounter())))
    expect(results[1]).toEqual(content(api.linearize(await pristine(), second, new TokenCounter())))
    expect(results[2]).toEqual(results[0])
    expect(results[3]).toEqual(results[0])
    const extended = api.extend(api.body(['read_file'], 2), 'more')
    expect(results[4]).toEqual(content(api.linearize(await pristine(), extended, new TokenCounter())))
  })

  it('gives the same items under other tools what a newly loaded module gives', async () => {
    const counter = new TokenCounter()
    const body = api.body(['read_file'], 1)
    api.linearize(linearizers, body, counter)
    const retooled = { ...body, tools: api.body(['write_file']).tools }
    const result = content(api.linearize(linearizers, retooled, counter))
    expect(result).toEqual(content(api.linearize(await pristine(), retooled, new TokenCounter())))
  })

  it('gives the same items under another cache TTL and scale what a newly loaded module gives', async () => {
    const counter = new TokenCounter()
    const body = withBreakpoint(api.body(['read_file'], 1))
    const marked = (prompt: Prompt) => prompt.segments.flatMap((segment) => segment.breakpoint ?? [])
    expect(marked(api.linearize(linearizers, body, counter))).toEqual([
      { ttl: '30m', ttlSeconds: 1800, explicit: true },
    ])
    const shorter = { ...body, prompt_cache_options: { ttl: '5m' } }
    const result = api.linearize(linearizers, shorter, counter, 1.25)
    expect(marked(result)).toEqual([{ ttl: '5m', ttlSeconds: 300, explicit: true }])
    expect(content(result)).toEqual(
      content(api.linearize(await pristine(), shorter, new TokenCounter(), 1.25)),
    )
  })
  it('gives a body whose item was replaced in place what a newly loaded module gives', async () => {
    const counter = new TokenCounter()
    const body = api.body(['read_file'], 1)
    api.linearize(linearizers, body, counter)
    api.items(body)[1] = api.user('A completely different question here.')
    const result = content(api.linearize(linearizers, body, counter))
    expect(layout(result).map((segment) => segment.text)).toContain('A completely different question here.')
    expect(result).toEqual(content(api.linearize(await pristine(), body, new TokenCounter())))
  })

  it('numbers the tools anew when a deferred tool before them is dropped', async () => {
    const counter = new TokenCounter()
    const body = api.body(['write_file', 'read_file'], 1)
    const [deferred, read] = body.tools as Body[]
    body.tools = [{ ...deferred, defer_loading: true }, read]
    expect(nodes(api.linearize(linearizers, body, counter))[0]).toBe('tools[1]')
    const dropped = { ...body, tools: [read] }
    const result = content(api.linearize(linearizers, dropped, counter))
    expect(nodes(result)[0]).toBe('tools[0]')
    expect(result).toEqual(content(api.linearize(await pristine(), dropped, new TokenCounter())))
  })
})

describe('an item object shared by a Chat and a Responses body', () => {
  it('is linearized as an input item in the Responses body', async () => {
    const counter = new TokenCounter()
    const item = { role: 'user', content: 'Open README.md and summarize it.' }
    const chatPrompt = linearizers.linearizeChat({ model: 'm', messages: [item] }, counter, 1)
    expect(nodes(chatPrompt)).toEqual(['messages[0]'])
    const body = { model: 'm', input: [item] }
    const result = content(linearizers.linearizeResponses(body, counter, 1))
    expect(nodes(result)).toEqual(['input[0]'])
    expect(result).toEqual(content((await pristine()).linearizeResponses(body, new TokenCounter(), 1)))
  })

  it('is linearized as a message again in a later Chat body', async () => {
    const counter = new TokenCounter()
    const item = { role: 'user', content: 'Open README.md and summarize it.' }
    linearizers.linearizeResponses({ model: 'm', input: [item] }, counter, 1)
    const body = { model: 'm', messages: [item] }
    const result = content(linearizers.linearizeChat(body, counter, 1))
    expect(nodes(result)).toEqual(['messages[0]'])
    expect(result).toEqual(content((await pristine()).linearizeChat(body, new TokenCounter(), 1)))
  })
})

describe('the last body each linearizer remembers', () => {
  it('is kept per API: a Responses body between two Chat bodies does not displace the Chat one', () => {
    const counter = new TokenCounter()
    const body = chat.body(['read_file'], 1)
    const first = chat.linearize(linearizers, body, counter)
    responses.linearize(linearizers, responses.body(['read_file'], 1), counter)
    expect(chat.linearize(linearizers, chat.extend(body, 'next'), counter).base).toEqual({
      segments: first.segments,
      count: first.segments.length,
    })
  })

  it('is not displaced by a Chat fragment linearized with remember: false', () => {
    const counter = new TokenCounter()
    const body = chat.body(['read_file'], 1)
    const first = chat.linearize(linearizers, body, counter)
    linearizers.linearizeChat({ messages: [{ role: 'assistant', content: 'A fragment.' }] }, counter, 1, {
      remember: false,
    })
    expect(chat.linearize(linearizers, chat.extend(body, 'next'), counter).base?.segments).toBe(
      first.segments,
    )
  })
})

describe('reasoning passed back to an OpenAI-style API', () => {
  const call = { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }
  const thought = (turn: number) => fillerText(200, `deepseek-reasoning-${turn}`)
  /** A DeepSeek conversation: turn 1 calls a tool, turn 2 answers without one, turn 3 is asked. */
  const deepseekBody = () => ({
    model: 'deepseek-flash',
    messages: [
      { role: 'user', content: 'Open a.' },
      { role: 'assistant', content: null, reasoning_content: thought(1), tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: 'contents of a' },
      { role: 'assistant', content: 'a holds a list.', reasoning_content: thought(2) },
      { role: 'user', content: 'Thanks. And b?' },
      { role: 'assistant', content: 'b is empty.', reasoning_content: thought(3) },
      { role: 'user', content: 'And c?' },
    ],
  })

  it('DeepSeek keeps the reasoning of tool calls and drops that of a final answer once a user message follows', () => {
    const body = deepseekBody()
    expect(linearizers.deepseekReasoningShown(body.messages)).toEqual([
      false,
      true,
      false,
      false,
      false,
      false,
      false,
    ])
    const texts = linearizers
      .linearizeChat(body, new TokenCounter(), 1, { reasoning: 'deepseek' })
      .segments.map((segment) => segment.text)
    expect(texts).toContain(thought(1))
    expect(texts).not.toContain(thought(2))
    expect(texts).not.toContain(thought(3))
  })

  it('DeepSeek keeps the reasoning of an answer after the latest user message (an assistant prefix)', () => {
    const messages = [
      { role: 'user', content: 'Go.' },
      { role: 'assistant', content: 'Partial', reasoning_content: 'why' },
    ]
    expect(linearizers.deepseekReasoningShown(messages)).toEqual([false, true])
  })

  it('OpenAI Chat renders no reasoning at all', () => {
    const texts = linearizers
      .linearizeChat(deepseekBody(), new TokenCounter(), 1)
      .segments.map((segment) => segment.text)
    expect(texts.some((text) => text.startsWith(thought(1).slice(0, 20)))).toBe(false)
  })

  /** A Responses conversation whose first turn called a tool after reasoning. */
  const responsesInput = (next: boolean) => [
    { role: 'user', content: 'Open a.' },
    { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: fillerText(150, 'encrypted-1') },
    { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"a"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'contents of a' },
    ...(next
      ? [
          { role: 'assistant', content: [{ type: 'output_text', text: 'a holds a list.' }] },
          { role: 'user', content: 'And b?' },
        ]
      : []),
  ]
  const reasoningNodes = (body: Record<string, unknown>) =>
    linearizers
      .linearizeResponses(body, new TokenCounter(), 1)
      .segments.filter((segment) => segment.frame === 'reasoning')
      .map((segment) => describeNode(segment.node))

  it('Responses renders the reasoning items of the current turn, not those before the latest user message', () => {
    expect(reasoningNodes({ model: 'gpt-5.4', input: responsesInput(false) })).toEqual(['input[1]'])
    expect(reasoningNodes({ model: 'gpt-5.4', input: responsesInput(true) })).toEqual([])
  })

  it('Responses keeps earlier turns’ reasoning items when reasoning.context asks for all turns', () => {
    const body = { model: 'gpt-5.6-sol', reasoning: { context: 'all_turns' }, input: responsesInput(true) }
    expect(reasoningNodes(body)).toEqual(['input[1]'])
  })

  it('Responses drops the earlier turn’s reasoning from a body that extends the tool-use turn', () => {
    const counter = new TokenCounter()
    const during = responsesInput(false)
    linearizers.linearizeResponses({ model: 'gpt-5.4', input: during }, counter, 1)
    const after = linearizers.linearizeResponses(
      { model: 'gpt-5.4', input: [...during, ...responsesInput(true).slice(during.length)] },
      counter,
      1,
    )
    expect(after.segments.some((segment) => segment.frame === 'reasoning')).toBe(false)
  })
})
