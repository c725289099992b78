// A recorded Chat Completions body translated to each provider's wire: the conversation keeps its parts
// in the target's framing, and the target's simulator accepts the body.

import { describe, expect, it } from 'vitest'
import type { BuiltInProviderId } from '../../../harness/types.ts'
import { CacheSimulators } from '../../../providers/sim/index.ts'
import { TARGET_WIRES, type TranslatedBody, WireTranslator } from './translate.ts'

const SYSTEM = { role: 'system', content: 'You keep the kettle log. Answer in one line.' }
const QUESTION = { role: 'user', content: 'When was the kettle last descaled?' }
const CALL = {
  role: 'assistant',
  content: '',
  reasoning_content: 'The log file holds the dates.',
  tool_calls: [
    { id: 'call_1', type: 'function', function: { name: 'read_log', arguments: '{"name":"kettle"}' } },
  ],
}
const RESULT = { role: 'tool', tool_call_id: 'call_1', content: '2026-10-02 descaled' }
const NOTE = { role: 'user', content: 'And the toaster?' }
const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'read_log',
      description: 'Read one appliance log.',
      parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    },
  },
]

/** A DSH-style rebuilt DeepSeek body over `messages`. */
function chatBody(messages: readonly unknown[]): Record<string, unknown> {
  return {
    model: 'deepseek-v4-flash',
    stream: true,
    stream_options: { include_usage: true },
    thinking: { type: 'enabled' },
    reasoning_effort: 'high',
    tools: TOOLS,
    messages,
  }
}

function translated(target: BuiltInProviderId, model: string, messages: readonly unknown[]): TranslatedBody {
  const translation = new WireTranslator(target, model).translate(
    { api: 'deepseek-chat', body: chatBody(messages) },
    'session-1',
  )
  if (translation.kind !== 'translated') throw new Error(translation.reason)
  return translation.translated
}

const CONVERSATION = [SYSTEM, QUESTION, CALL, RESULT, NOTE]

describe('translating a recorded Chat body to Anthropic Messages', () => {
  const { api, body } = translated('anthropic', 'claude-sonnet-4-6', CONVERSATION)

  it('moves the system prompt to the top level and marks the request with the automatic cache_control', () => {
    expect(api).toBe('anthropic-messages')
    expect(body.model).toBe('claude-sonnet-4-6')
    expect(body.system).toEqual([{ type: 'text', text: SYSTEM.content }])
    expect(body.cache_control).toEqual({ type: 'ephemeral', ttl: '5m' })
    expect(body.max_tokens).toBe(1024)
  })

  it('turns tool calls into tool_use blocks and joins the tool result and the next user text into one user turn', () => {
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: QUESTION.content }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'call_1', name: 'read_log', input: { name: 'kettle' } }],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: RESULT.content },
          { type: 'text', text: NOTE.content },
        ],
      },
    ])
  })

  it('gives tools the Anthropic schema and drops DeepSeek-only fields', () => {
    expect(body.tools).toEqual([
      {
        name: 'read_log',
        description: 'Read one appliance log.',
        input_schema: TOOLS[0]?.function.parameters,
      },
    ])
    expect(body).not.toHaveProperty('thinking')
    expect(body).not.toHaveProperty('stream')
  })

  it('turns a system message inside the history into tagged user text, which a head-only model accepts', () => {
    const late = { role: 'system', content: 'The toaster log moved.' }
    const { body: withLate } = translated('anthropic', 'claude-sonnet-4-6', [...CONVERSATION, late])
    const last = (withLate.messages as Array<{ role: string; content: unknown[] }>).at(-1)
    expect(last?.role).toBe('user')
    expect(last?.content.at(-1)).toEqual({
      type: 'text',
      text: '<system>\nThe toaster log moved.\n</system>',
    })
    expect(() =>
      new CacheSimulators().simulate('anthropic-messages', {
        body: withLate,
        at: 0,
        output: { role: 'assistant', content: [] },
      }),
    ).not.toThrow()
  })

  it('keeps arguments that are no JSON object as text under `arguments`', () => {
    const torn = {
      ...CALL,
      tool_calls: [{ ...CALL.tool_calls[0], function: { name: 'read_log', arguments: '{"na' } }],
    }
    const { body: tornBody } = translated('anthropic', 'claude-sonnet-4-6', [SYSTEM, QUESTION, torn, RESULT])
    const turn = (tornBody.messages as Array<{ content: Array<Record<string, unknown>> }>)[1]
    expect(turn?.content[0]?.input).toEqual({ arguments: '{"na' })
  })
})

describe('translating a recorded Chat body to OpenAI Chat', () => {
  const { api, body } = translated('openai-chat', 'gpt-5.4', CONVERSATION)

  it('keeps the messages and tools, drops the reasoning passed back, and routes by the session', () => {
    expect(api).toBe('openai-chat')
    expect(body.model).toBe('gpt-5.4')
    expect(body.tools).toBe(TOOLS)
    const messages = body.messages as Array<Record<string, unknown>>
    expect(messages).toHaveLength(CONVERSATION.length)
    expect(messages[2]).not.toHaveProperty('reasoning_content')
    expect(messages[2]?.tool_calls).toEqual(CALL.tool_calls)
    expect(messages[3]).toBe(RESULT)
    expect(body.prompt_cache_key).toBe('session-1')
    expect(body).not.toHaveProperty('reasoning_effort')
  })
})

describe('translating a recorded Chat body to OpenAI Responses', () => {
  const { api, body } = translated('openai-responses', 'gpt-5.4', CONVERSATION)

  it('puts the system prompt in instructions and the turns in input items, calls as function_call items', () => {
    expect(api).toBe('openai-responses')
    expect(body.instructions).toBe(SYSTEM.content)
    expect(body.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: QUESTION.content }] },
      { type: 'function_call', call_id: 'call_1', name: 'read_log', arguments: '{"name":"kettle"}' },
      { type: 'function_call_output', call_id: 'call_1', output: RESULT.content },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: NOTE.content }] },
    ])
    expect(body.tools).toEqual([{ type: 'function', ...TOOLS[0]?.function }])
    expect(body.store).toBe(false)
  })
})

describe('translating a recorded Chat body to DeepSeek', () => {
  it('keeps the body, reasoning included, under the target model', () => {
    const { api, body } = translated('deepseek', 'deepseek-v4-pro', CONVERSATION)
    expect(api).toBe('deepseek-chat')
    expect(body.model).toBe('deepseek-v4-pro')
    expect(body.messages).toEqual(CONVERSATION)
  })
})

describe('every translated body', () => {
  const targets: Array<[BuiltInProviderId, string]> = [
    ['anthropic', 'claude-sonnet-4-6'],
    ['openai-chat', 'gpt-5.4'],
    ['openai-responses', 'gpt-5.4'],
    ['deepseek', 'deepseek-flash'],
  ]

  it.each(targets)(
    'is accepted by the %s simulator, which reads the next request’s shared prefix',
    (target, model) => {
      // A prefix long enough for every provider's minimum, so the second request reads the first.
      const long = { role: 'system', content: 'Keep the kettle log tidy. '.repeat(400) }
      const translator = new WireTranslator(target, model)
      const first = translator.translate(
        { api: 'deepseek-chat', body: chatBody([long, QUESTION, CALL, RESULT]) },
        's',
      )
      const second = translator.translate(
        { api: 'deepseek-chat', body: chatBody([long, QUESTION, CALL, RESULT, NOTE]) },
        's',
      )
      if (first.kind !== 'translated' || second.kind !== 'translated') throw new Error('not translated')
      expect(first.translated.api).toBe(TARGET_WIRES[target])
      const simulators = new CacheSimulators()
      const answer = { role: 'assistant' as const, content: [] }
      const one = simulators.simulate(first.translated.api, {
        body: first.translated.body,
        at: 0,
        output: answer,
      })
      const two = simulators.simulate(second.translated.api, {
        body: second.translated.body,
        at: 10,
        output: answer,
        previous: { prompt: one.prompt },
      })
      expect(one.counts.input).toBeGreaterThan(2000)
      expect(two.counts.read).toBeGreaterThan(2000)
    },
  )

  it('shares converted messages between bodies that share the recorded ones', () => {
    const translator = new WireTranslator('openai-responses', 'gpt-5.4')
    const bodies = [CONVERSATION.slice(0, 4), CONVERSATION].map((messages) => {
      const translation = translator.translate({ api: 'deepseek-chat', body: chatBody(messages) }, 's')
      if (translation.kind !== 'translated') throw new Error(translation.reason)
      return translation.translated.body.input as unknown[]
    })
    expect(bodies[1]?.[1]).toBe(bodies[0]?.[1])
  })
})

describe('a recorded body of another wire', () => {
  it('translates to its own wire under the target model, and to no other', () => {
    const body = { model: 'claude-opus-4-8', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }
    const same = new WireTranslator('anthropic', 'claude-sonnet-4-6').translate(
      { api: 'anthropic-messages', body },
      's',
    )
    expect(same.kind === 'translated' && same.translated.body.model).toBe('claude-sonnet-4-6')
    const other = new WireTranslator('openai-chat', 'gpt-5.4').translate(
      { api: 'anthropic-messages', body },
      's',
    )
    expect(other.kind).toBe('untranslatable')
  })
})

describe('translating a recorded Chat body to Gemini generateContent', () => {
  const { api, body } = translated('gemini', 'gemini-2.5-flash', CONVERSATION)

  it('puts the system prompt in systemInstruction, turns in user/model contents, calls and results as parts named alike', () => {
    expect(api).toBe('gemini-generate')
    expect(body.systemInstruction).toEqual({ parts: [{ text: SYSTEM.content }] })
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: QUESTION.content }] },
      {
        role: 'model',
        parts: [{ functionCall: { id: 'call_1', name: 'read_log', args: { name: 'kettle' } } }],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: { id: 'call_1', name: 'read_log', response: { output: '2026-10-02 descaled' } },
          },
          { text: NOTE.content },
        ],
      },
    ])
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'read_log',
            description: 'Read one appliance log.',
            parametersJsonSchema: TOOLS[0]?.function.parameters,
          },
        ],
      },
    ])
  })

  it('is a body the Gemini simulator accepts', () => {
    expect(
      new CacheSimulators().simulate(TARGET_WIRES.gemini, {
        body,
        at: 0,
        output: { role: 'assistant', content: [] },
      }).counts.input,
    ).toBeGreaterThan(0)
  })
})
