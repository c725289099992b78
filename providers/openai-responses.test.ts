import type OpenAI from 'openai'
import { describe, expect, it } from 'vitest'
import type { DerivedMessage, DerivedRequest, Usage } from '../harness/types.ts'
import { parseOpenAIUsage } from './openai-chat.ts'
import {
  assistantFromOutput,
  buildOpenAIResponsesRequest,
  mapResponseStop,
  type ResponsesReply,
} from './openai-responses.ts'
import { derivedRequest, surfaceMessage, userText } from './testing.ts'
import type { StopReason } from './types.ts'

const derived = (messages: DerivedMessage[], extra: Partial<DerivedRequest> = {}) =>
  derivedRequest({ provider: 'openai-responses', model: 'gpt-5.4' }, messages, extra)

describe('buildOpenAIResponsesRequest', () => {
  const cases: Array<{
    name: string
    request: DerivedRequest
    instructions: string | undefined
    input: unknown[]
    system: number[]
    sources: number[][]
  }> = [
    {
      name: 'the header system prompt becomes instructions',
      request: derived([userText('hi', 3)], { system: { text: 'Be brief.', sourceSeq: 1 } }),
      instructions: 'Be brief.',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      system: [1],
      sources: [[3]],
    },
    {
      name: 'leading system messages join the instructions; a later one stays in the input',
      request: derived([
        surfaceMessage({ role: 'system', text: 'One.' }, 2),
        surfaceMessage({ role: 'system', text: 'Two.' }, 3),
        userText('hi', 4),
        surfaceMessage({ role: 'system', text: 'Three.' }, 5),
      ]),
      instructions: 'One.\n\nTwo.',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Three.' }] },
      ],
      system: [2, 3],
      sources: [[4], [5]],
    },
    {
      name: 'developer messages keep their role; images become data URLs',
      request: derived([
        surfaceMessage({ role: 'developer', text: 'Tools changed.' }, 2),
        surfaceMessage(
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image', id: 'i1', mediaType: 'image/png', data: 'AAAA', width: 1, height: 1 },
            ],
          },
          3,
        ),
      ]),
      instructions: undefined,
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Tools changed.' }] },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'look' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' },
          ],
        },
      ],
      system: [],
      sources: [[2], [3]],
    },
    {
      name: 'an assistant turn splits into a message and function calls, each traced to its event',
      request: derived([
        userText('fix it', 2),
        surfaceMessage(
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Looking.' },
              { type: 'tool-call', callId: 'call_1', name: 'grep', arguments: '{"p":"x"}' },
              { type: 'tool-call', callId: 'call_2', name: 'read', arguments: '{}' },
            ],
          },
          3,
        ),
        surfaceMessage({ role: 'tool', callId: 'call_1', name: 'grep', text: 'found' }, 4),
        surfaceMessage({ role: 'tool', callId: 'call_2', name: 'read', text: 'body', isError: true }, 5),
      ]),
      instructions: undefined,
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'fix it' }] },
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Looking.', annotations: [] }],
        },
        { type: 'function_call', call_id: 'call_1', name: 'grep', arguments: '{"p":"x"}' },
        { type: 'function_call', call_id: 'call_2', name: 'read', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'found' },
        { type: 'function_call_output', call_id: 'call_2', output: 'body' },
      ],
      system: [],
      sources: [[2], [3], [3], [3], [4], [5]],
    },
    {
      name: 'an assistant turn of tool calls only sends no empty message',
      request: derived([
        surfaceMessage(
          {
            role: 'assistant',
            content: [{ type: 'tool-call', callId: 'c', name: 'ls', arguments: '{}' }],
          },
          2,
        ),
      ]),
      instructions: undefined,
      input: [{ type: 'function_call', call_id: 'c', name: 'ls', arguments: '{}' }],
      system: [],
      sources: [[2]],
    },
  ]

  for (const testCase of cases) {
    it(testCase.name, () => {
      const built = buildOpenAIResponsesRequest(testCase.request, { stream: false })
      expect(built.body.instructions).toBe(testCase.instructions)
      expect(built.body.input).toEqual(testCase.input)
      expect(built.sources.system).toEqual(testCase.system)
      expect(built.sources.messages).toEqual(testCase.sources)
      expect(built.sources.messages).toHaveLength((built.body.input as unknown[]).length)
    })
  }

  it('sends tools as non-strict functions, the output cap, no storage and the cache options', () => {
    const request = derived([userText('hi', 3)], {
      config: { provider: 'openai-responses', model: 'gpt-5.6-sol', maxTokens: 512, temperature: 0 },
      tools: [{ name: 'grep', description: 'Search.', parameters: { type: 'object' } }],
      toolsSeq: 1,
    })
    const built = buildOpenAIResponsesRequest(request, {
      stream: true,
      promptCacheKey: 'session-1',
      retention: '24h',
      cacheTtl: '30m',
    })
    expect(built.body).toMatchObject({
      model: 'gpt-5.6-sol',
      tools: [
        {
          type: 'function',
          name: 'grep',
          description: 'Search.',
          parameters: { type: 'object' },
          strict: false,
        },
      ],
      max_output_tokens: 512,
      temperature: 0,
      store: false,
      prompt_cache_key: 'session-1',
      prompt_cache_retention: '24h',
      prompt_cache_options: { ttl: '30m' },
      stream: true,
    })
    expect(built.sources.tools).toEqual([1])
    expect(built).toMatchObject({ provider: 'openai-responses', api: 'openai-responses' })
  })

  it('leaves out every option not asked for', () => {
    const built = buildOpenAIResponsesRequest(derived([userText('hi', 3)]), { stream: false })
    expect(Object.keys(built.body).sort()).toEqual(['input', 'model', 'store'])
  })
})

const message = (text: string): OpenAI.Responses.ResponseOutputMessage => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [] }],
})
const call = (callId: string): OpenAI.Responses.ResponseFunctionToolCall => ({
  type: 'function_call',
  call_id: callId,
  name: 'grep',
  arguments: '{"p":1}',
})

describe('reading a reply', () => {
  it('builds the assistant message from message text and function calls, in output order', () => {
    expect(assistantFromOutput([message('Looking.'), call('call_1')])).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool-call', callId: 'call_1', name: 'grep', arguments: '{"p":1}' },
      ],
    })
    expect(assistantFromOutput([message('')]).content).toEqual([])
  })

  const stops: Array<{ reply: ResponsesReply; stop: StopReason }> = [
    { reply: { status: 'completed', output: [message('done')] }, stop: 'end' },
    { reply: { status: 'completed', output: [message('x'), call('c')] }, stop: 'tool-calls' },
    {
      reply: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [] },
      stop: 'max-tokens',
    },
    {
      reply: { status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [] },
      stop: 'error',
    },
    { reply: { status: 'failed', output: [] }, stop: 'error' },
    { reply: { output: [] }, stop: 'error' },
  ]
  for (const { reply, stop } of stops) {
    it(`maps status ${String(reply.status)} (${reply.output.length} items) to ${stop}`, () => {
      expect(mapResponseStop(reply)).toBe(stop)
    })
  }

  it('names an unknown status', () => {
    expect(() => mapResponseStop({ status: 'paused', output: [] })).toThrow(/paused/)
  })
})

describe('Responses usage, normalized', () => {
  const cases: Array<{ name: string; raw: Record<string, unknown>; usage: Omit<Usage, 'raw'> }> = [
    {
      name: 'before GPT-5.6: cached tokens are part of input_tokens; writes are not reported',
      raw: {
        input_tokens: 2006,
        input_tokens_details: { cached_tokens: 1920 },
        output_tokens: 300,
        output_tokens_details: { reasoning_tokens: 12 },
        total_tokens: 2306,
      },
      usage: { input: 2006, uncached: 86, cacheRead: 1920, output: 300, reasoning: 12 },
    },
    {
      name: 'GPT-5.6+: writes are a bucket of their own',
      raw: {
        input_tokens: 5000,
        input_tokens_details: { cached_tokens: 3000, cache_write_tokens: 1997 },
        output_tokens: 10,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 5010,
      },
      usage: { input: 5000, uncached: 3, cacheRead: 3000, cacheWrite: 1997, output: 10, reasoning: 0 },
    },
    {
      name: 'no details at all: nothing reported, everything uncached',
      raw: { input_tokens: 40, output_tokens: 2, total_tokens: 42 },
      usage: { input: 40, uncached: 40, output: 2 },
    },
  ]
  for (const testCase of cases) {
    it(testCase.name, () => {
      const usage = parseOpenAIUsage(testCase.raw)
      expect(usage).toEqual({ ...testCase.usage, raw: testCase.raw })
      expect(usage.uncached + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0)).toBe(usage.input)
    })
  }
})
