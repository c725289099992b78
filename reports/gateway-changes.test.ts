import { describe, expect, it } from 'vitest'
import type { Usage } from '../harness/types.ts'
import { cacheMarks, droppedFields, gatewayChanges, gatewayNotes, usageChanges } from './gateway-changes.ts'

const mark = { type: 'ephemeral' }
const anthropic = (body: Record<string, unknown>) => ({ api: 'anthropic-messages' as const, body })
const chat = (body: Record<string, unknown>) => ({ api: 'openai-chat' as const, body })

const client = {
  model: 'claude-sonnet-4-6',
  system: [{ type: 'text', text: 'You are a coding agent.', cache_control: mark }],
  tools: [{ name: 'read' }, { name: 'grep' }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Fix the parser.' }] }],
}

describe('what a gateway changed in a request', () => {
  it('finds nothing in a request forwarded as sent', () => {
    expect(gatewayChanges(anthropic(client), anthropic(structuredClone(client)))).toEqual([])
  })

  it('names a billing block put before the system text as a prefix, not a rewrite', () => {
    const upstream = {
      ...client,
      system: [
        {
          type: 'text',
          text: 'x-anthropic-billing-header: cc_version=2.1; cch=abcde;\nYou are a coding agent.',
          cache_control: mark,
        },
      ],
    }
    const changes = gatewayChanges(anthropic(client), anthropic(upstream))
    expect(changes.map((change) => change.kind)).toEqual([
      'gateway-cache-marks-moved',
      'gateway-system-prefixed',
    ])
    expect(changes[1]?.detail).toContain('x-anthropic-billing-header')
  })

  it('tells reordered tools from changed ones, and injected blocks from stripped ones', () => {
    const reordered = { ...client, tools: [{ name: 'grep' }, { name: 'read' }] }
    expect(gatewayChanges(anthropic(client), anthropic(reordered)).map((change) => change.kind)).toEqual([
      'gateway-tools-reordered',
    ])
    const injected = {
      ...client,
      tools: [{ name: 'read' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<reminder/>' },
            { type: 'text', text: 'Fix the parser.' },
          ],
        },
      ],
    }
    expect(gatewayChanges(anthropic(client), anthropic(injected)).map((change) => change.kind)).toEqual([
      'gateway-blocks-injected',
      'gateway-tools-changed',
    ])
  })

  it('names a translation to OpenAI Chat, keeping marks found by their text across the wires', () => {
    const translated = {
      model: 'gpt-5.4',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'You are a coding agent.', cache_control: mark }] },
        { role: 'user', content: 'Fix the parser.' },
      ],
      tools: [
        { type: 'function', function: { name: 'read' } },
        { type: 'function', function: { name: 'grep' } },
      ],
    }
    expect(cacheMarks(translated)).toEqual(cacheMarks(client))
    expect(gatewayChanges(anthropic(client), chat(translated))).toEqual([
      { kind: 'gateway-wire-translated', detail: 'anthropic-messages → openai-chat' },
      { kind: 'gateway-model-changed', detail: 'model claude-sonnet-4-6 → gpt-5.4' },
    ])
  })

  it('names the model a gateway sends in place of the client’s', () => {
    expect(gatewayChanges(anthropic(client), anthropic({ ...client, model: 'claude-haiku-4-5' }))).toEqual([
      { kind: 'gateway-model-changed', detail: 'model claude-sonnet-4-6 → claude-haiku-4-5' },
    ])
  })

  it('tells a key set by the gateway from one it dropped', () => {
    const body = { model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] }
    expect(gatewayChanges(chat(body), chat({ ...body, prompt_cache_key: 'k' }))[0]?.kind).toBe(
      'gateway-cache-key-set',
    )
    expect(gatewayChanges(chat({ ...body, prompt_cache_key: 'k' }), chat(body))[0]?.kind).toBe(
      'gateway-cache-key-dropped',
    )
  })
})

/** Claude Code 2.1.328's request as Claude Code Router 2.0.0 got it and sent it on (texts stand-ins). */
const claudeCode = {
  model: 'claude-sonnet-4-6',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'What does README.md say?' }] }],
  system: [{ type: 'text', text: 'You are Claude Code.' }],
  tools: [{ name: 'Read', description: 'Read a file', input_schema: { type: 'object' } }],
  metadata: { user_id: '{"session_id":"s"}' },
  max_tokens: 32000,
  thinking: { type: 'adaptive', display: 'omitted' },
  context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  output_config: { effort: 'high' },
  stream: true,
}
const routed = {
  max_tokens: 32000,
  messages: [
    { role: 'system', content: [{ type: 'text', text: 'You are Claude Code.' }] },
    { role: 'user', content: [{ type: 'text', text: 'What does README.md say?' }] },
  ],
  model: 'gpt-4.1',
  reasoning: { effort: 'high', enabled: false },
  stream: true,
  tools: [{ type: 'function', function: { name: 'Read', description: 'Read a file', parameters: {} } }],
}

describe('the request fields a gateway drops', () => {
  it('names what a translation to OpenAI Chat leaves nothing to carry: thinking, metadata, context management', () => {
    expect(gatewayChanges(anthropic(claudeCode), chat(routed)).map((change) => change.kind)).toEqual([
      'gateway-wire-translated',
      'gateway-model-changed',
      'gateway-fields-dropped',
    ])
    expect(droppedFields(anthropic(claudeCode), chat(routed))).toEqual([
      'metadata',
      'thinking',
      'context_management',
      'output_config',
    ])
  })

  it('counts a field carried under its other wire’s name as carried', () => {
    const carried = { ...routed, reasoning_effort: 'high', user: 's', stop: ['END'] }
    expect(droppedFields(anthropic({ ...claudeCode, stop_sequences: ['END'] }), chat(carried))).toEqual([
      'context_management',
    ])
  })

  it('compares by name on one wire, and says nothing across wires it has no table for', () => {
    const body = { model: 'gpt-4.1', messages: [], max_tokens: 10, metadata: { a: '1' }, seed: 3 }
    expect(droppedFields(chat(body), chat({ ...body, metadata: undefined, seed: undefined }))).toEqual([
      'metadata',
      'seed',
    ])
    expect(
      droppedFields(chat(body), chat({ ...body, max_tokens: undefined, max_completion_tokens: 10 })),
    ).toEqual([])
    expect(
      droppedFields(anthropic(claudeCode), { api: 'openai-responses', body: { model: 'gpt-4.1' } }),
    ).toEqual([])
  })
})

describe('what the client is told of its usage across a gateway', () => {
  const zero: Usage = {
    input: 0,
    uncached: 0,
    cacheRead: 0,
    output: 0,
    raw: { input_tokens: 0, output_tokens: 0 },
  }
  const counted = { input: 20_086, output: 11 }
  const upstream = { api: 'openai-chat' as const, body: routed, usage: undefined, counted }

  it('names usage zeroed when the client is told 0 and the upstream request had tokens, and why the gateway had none', () => {
    expect(usageChanges(zero, upstream)).toEqual([
      {
        kind: 'gateway-usage-zeroed',
        detail:
          "usage all 0 to the client, upstream had 20086 input and 11 output tokens by the simulator's count (not reported to the gateway: streamed without stream_options.include_usage)",
      },
    ])
  })

  it('names usage dropped when the client is told none, and nothing when it is told the upstream’s', () => {
    const reported: Usage = { input: 20_086, uncached: 20_086, cacheRead: 0, output: 11, raw: {} }
    expect(usageChanges(undefined, { ...upstream, usage: reported })).toEqual([
      {
        kind: 'gateway-usage-dropped',
        detail:
          'no usage to the client, upstream had 20086 input and 11 output tokens (reported to the gateway)',
      },
    ])
    expect(usageChanges(reported, { ...upstream, usage: reported })).toEqual([])
    expect(usageChanges(zero, { ...upstream, counted: undefined })).toEqual([])
  })

  it('sums a gateway’s changes for check: per kind, on how many requests, without per-request counts', () => {
    const cells = [1, 2].map((turn) =>
      [
        'gateway-wire-translated: anthropic-messages → openai-chat',
        'gateway-model-changed: model claude-sonnet-4-6 → gpt-4.1',
        'gateway-fields-dropped: metadata, thinking',
        `gateway-usage-zeroed: usage all 0 to the client, upstream had ${turn}000 input and 5 output tokens by the simulator's count (not reported to the gateway)`,
      ].join('; '),
    )
    expect(gatewayNotes([...cells, 'gateway-wire-translated: anthropic-messages → openai-chat'])).toEqual([
      "gateway-usage-zeroed on 2 of 3 requests: usage all 0 to the client, while the upstream request had tokens by the simulator's count (not reported to the gateway)",
      'gateway-model-changed on 2 of 3 requests: model claude-sonnet-4-6 → gpt-4.1',
      'gateway-fields-dropped on 2 of 3 requests: metadata, thinking',
    ])
  })
})
