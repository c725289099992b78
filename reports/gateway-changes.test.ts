import { describe, expect, it } from 'vitest'
import { cacheMarks, gatewayChanges } from './gateway-changes.ts'

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
