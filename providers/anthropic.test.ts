import type Anthropic from '@anthropic-ai/sdk'
import { describe, expect, it } from 'vitest'
import type { DerivedMessage, DerivedRequest } from '../harness/types.ts'
import { MessageEventAccumulator, mapStopReason } from './anthropic.ts'
import { buildAnthropicRequest, developerText, markedMessages } from './anthropic-request.ts'
import { assistantText, derivedRequest, surfaceMessage, userText } from './testing.ts'
import type { BreakpointStrategy, BuildOptions, StopReason } from './types.ts'

const derived = (messages: DerivedMessage[], extra: Partial<DerivedRequest> = {}) =>
  derivedRequest({ provider: 'anthropic', model: 'claude-sonnet-4-6' }, messages, extra)

type WireMessage = { role: string; content: Array<Record<string, unknown>> }
const build = (request: DerivedRequest, options: Partial<BuildOptions> = {}) =>
  buildAnthropicRequest(request, { stream: false, ...options })
const messagesOf = (body: Record<string, unknown>) => body.messages as WireMessage[]
const systemOf = (body: Record<string, unknown>) => body.system as Array<Record<string, unknown>> | undefined

/** Where markers sit: `system[i]` and `messages[i].j`. */
function markers(body: Record<string, unknown>): string[] {
  const found: string[] = []
  for (const [index, block] of (systemOf(body) ?? []).entries())
    if (block.cache_control !== undefined) found.push(`system[${index}]`)
  for (const [index, message] of messagesOf(body).entries())
    for (const [block, part] of message.content.entries())
      if (part.cache_control !== undefined) found.push(`messages[${index}].${block}`)
  return found
}

/** A conversation of `count` wire messages after a header system prompt. */
const conversation = (count: number) =>
  derived(
    Array.from({ length: count }, (_, index) =>
      index % 2 === 0
        ? userText(`question ${index}`, index + 10)
        : assistantText(`answer ${index}`, index + 10),
    ),
    { system: { text: 'You are terse.', sourceSeq: 1 } },
  )

describe('buildAnthropicRequest', () => {
  it('puts the header prompt and leading system messages in system; a later one stays in messages', () => {
    const built = build(
      derived(
        [
          surfaceMessage({ role: 'system', text: 'Two.' }, 2),
          userText('hi', 4),
          surfaceMessage({ role: 'system', text: 'Three.' }, 5),
        ],
        { system: { text: 'One.', sourceSeq: 1 } },
      ),
      { breakpoints: 'none' },
    )
    expect(built.body.system).toEqual([
      { type: 'text', text: 'One.' },
      { type: 'text', text: 'Two.' },
    ])
    expect(messagesOf(built.body)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'system', content: [{ type: 'text', text: 'Three.' }] },
    ])
    expect(built.sources).toEqual({ system: [1, 2], tools: [], messages: [[4], [5]] })
  })

  it('merges consecutive tool results into one user turn and unions their sources', () => {
    const built = build(
      derived([
        userText('look', 2),
        surfaceMessage(
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Reading.' },
              {
                type: 'tool-call',
                callId: 'toolu_1',
                name: 'read_file',
                arguments: '{"path":"a.ts","lines":2}',
              },
              { type: 'tool-call', callId: 'toolu_2', name: 'read_file', arguments: '{"path":"b.ts"}' },
            ],
          },
          3,
        ),
        surfaceMessage({ role: 'tool', callId: 'toolu_1', name: 'read_file', text: 'A' }, 4),
        surfaceMessage(
          { role: 'tool', callId: 'toolu_2', name: 'read_file', text: 'missing', isError: true },
          5,
        ),
        surfaceMessage({ role: 'developer', text: 'Tools changed.' }, 6),
      ]),
      { breakpoints: 'none' },
    )
    expect(messagesOf(built.body)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.ts', lines: 2 } },
          { type: 'tool_use', id: 'toolu_2', name: 'read_file', input: { path: 'b.ts' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'A' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'missing', is_error: true },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: developerText('Tools changed.') }] },
    ])
    expect(built.sources.messages).toEqual([[2], [3], [4, 5], [6]])
  })

  it('sends images as base64 blocks, tools with input_schema, and a default max_tokens', () => {
    const built = build(
      derived(
        [
          surfaceMessage(
            {
              role: 'user',
              content: [
                { type: 'text', text: 'what is this' },
                { type: 'image', id: 'i1', mediaType: 'image/png', data: 'AAAA', width: 1, height: 1 },
              ],
            },
            2,
          ),
        ],
        {
          tools: [{ name: 'grep', description: 'Search.', parameters: { type: 'object' } }],
          toolsSeq: 1,
        },
      ),
      { breakpoints: 'none', stream: true },
    )
    expect(messagesOf(built.body)[0]?.content[1]).toEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: 'AAAA' },
    })
    expect(built.body.tools).toEqual([
      { name: 'grep', description: 'Search.', input_schema: { type: 'object' } },
    ])
    expect(built.body.max_tokens).toBe(1024)
    expect(built.body.stream).toBe(true)
    expect(built.sources.tools).toEqual([1])
  })

  const placements: Array<{ strategy: BreakpointStrategy; count: number; expected: string[] }> = [
    { strategy: 'none', count: 5, expected: [] },
    { strategy: 'automatic', count: 5, expected: [] },
    { strategy: 'last-message', count: 5, expected: ['messages[4].0'] },
    { strategy: 'system-and-last', count: 5, expected: ['system[0]', 'messages[4].0'] },
    { strategy: 'rolling', count: 5, expected: ['system[0]', 'messages[0].0', 'messages[4].0'] },
    { strategy: 'rolling', count: 9, expected: ['system[0]', 'messages[0].0', 'messages[8].0'] },
    {
      strategy: 'rolling',
      count: 30,
      expected: ['system[0]', 'messages[16].0', 'messages[24].0', 'messages[29].0'],
    },
  ]
  for (const { strategy, count, expected } of placements) {
    it(`places '${strategy}' markers on ${expected.join(', ') || 'no block'} of ${count} messages`, () => {
      const built = build(conversation(count), { breakpoints: strategy })
      expect(markers(built.body)).toEqual(expected)
      expect(built.body.cache_control).toEqual(strategy === 'automatic' ? { type: 'ephemeral' } : undefined)
    })
  }

  it('gives every marker the requested TTL, and never more than four markers', () => {
    for (let count = 1; count <= 40; count += 1) {
      const built = build(conversation(count), { breakpoints: 'rolling', anthropicTtl: '1h' })
      expect(markers(built.body).length).toBeLessThanOrEqual(4)
    }
    const built = build(conversation(3), { breakpoints: 'system-and-last', anthropicTtl: '1h' })
    expect(systemOf(built.body)?.[0]?.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' })
    expect(messagesOf(built.body)[2]?.content[0]?.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' })
  })

  it('keeps rolling markers on the same messages as the conversation grows', () => {
    expect(markedMessages('rolling', 20)).toEqual([8, 16, 19])
    expect(markedMessages('rolling', 23)).toEqual([8, 16, 22])
    expect(markedMessages('rolling', 26)).toEqual([16, 24, 25])
  })
})

describe('mapStopReason', () => {
  const cases: Array<[Anthropic.StopReason, StopReason]> = [
    ['end_turn', 'end'],
    ['stop_sequence', 'end'],
    ['tool_use', 'tool-calls'],
    ['max_tokens', 'max-tokens'],
  ]
  for (const [raw, expected] of cases) {
    it(`maps ${raw} to ${expected}`, () => expect(mapStopReason(raw)).toBe(expected))
  }
  it('names a stop reason the loop cannot continue from', () => {
    expect(() => mapStopReason('refusal')).toThrow('"refusal"')
  })
})

describe('MessageEventAccumulator', () => {
  it('overwrites running usage totals instead of adding them', () => {
    const accumulator = new MessageEventAccumulator()
    const start = {
      type: 'message_start',
      message: {
        id: 'msg_1',
        usage: {
          input_tokens: 5,
          cache_read_input_tokens: 900,
          cache_creation_input_tokens: 100,
          output_tokens: 1,
        },
      },
    }
    const events = [
      start,
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 't1', name: 'grep', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{"pattern"' },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: ':"x"}' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: {
          input_tokens: 5,
          cache_read_input_tokens: 900,
          cache_creation_input_tokens: 100,
          output_tokens: 12,
        },
      },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: {
          input_tokens: null,
          cache_read_input_tokens: null,
          cache_creation_input_tokens: null,
          output_tokens: 12,
        },
      },
      { type: 'message_stop' },
    ]
    for (const event of events) accumulator.add(event as unknown as Anthropic.RawMessageStreamEvent)
    const reply = accumulator.reply()
    expect(reply.usage).toMatchObject({
      input: 1005,
      uncached: 5,
      cacheRead: 900,
      cacheWrite: 100,
      output: 12,
    })
    expect(reply.message.content).toEqual([
      { type: 'tool-call', callId: 't1', name: 'grep', arguments: '{"pattern":"x"}' },
    ])
    expect(reply.stopReason).toBe('tool-calls')
  })

  it('refuses a stream that ended before message_stop', () => {
    const accumulator = new MessageEventAccumulator()
    accumulator.add({
      type: 'message_start',
      message: { id: 'msg_1', usage: { input_tokens: 1, output_tokens: 1 } },
    } as unknown as Anthropic.RawMessageStreamEvent)
    expect(() => accumulator.reply()).toThrow('message_stop')
  })
})
