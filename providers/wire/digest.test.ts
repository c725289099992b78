import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CacheSimulators } from '../sim/index.ts'
import {
  canonicalJson,
  configOf,
  contentHash,
  digestRequest,
  firstDivergentSegment,
  framedHash,
  isUserTurn,
  itemDigest,
} from './digest.ts'

describe('request digests', () => {
  it('compare content, not cache markers or key order', () => {
    const marked = {
      role: 'user',
      content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }],
    }
    const plain = { content: [{ text: 'hi', type: 'text' }], role: 'user' }
    expect(canonicalJson(marked)).toBe(canonicalJson(plain))
    expect(itemDigest(marked).hash).toBe(itemDigest({ role: 'user', content: 'hi' }).hash)
  })

  it('tell a user turn from a message of tool results', () => {
    expect(itemDigest({ role: 'user', content: 'go on' }).userTurn).toBe(true)
    const results = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] }
    expect(itemDigest(results).userTurn).toBe(false)
    expect(itemDigest({ role: 'tool', content: 'x' }).userTurn).toBe(false)
  })

  it("go on with the turn on tool results whatever the agent sends beside them (Claude Code's ToolSearch)", () => {
    const loaded = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't', content: [{ type: 'tool_reference', tool_name: 'echo' }] },
        { type: 'text', text: 'Tool loaded.' },
      ],
    }
    expect(itemDigest(loaded).userTurn).toBe(false)
    expect(isUserTurn(loaded)).toBe(false)
  })

  it('tell a user turn without digesting, exactly as the digest tells it', () => {
    const items: unknown[] = [
      { role: 'user', content: 'go on' },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 't', content: [] } }, { cachePoint: {} }] },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] },
      { role: 'user', content: [{ cachePoint: {} }] },
      { role: 'tool', content: 'x' },
      { type: 'function_call_output', output: 'x' },
      { role: 'assistant', content: 'done' },
      'not an item',
    ]
    expect(items.map(isUserTurn)).toEqual(items.map((item) => itemDigest(item).userTurn))
    expect(items.map(isUserTurn)).toEqual([true, false, false, false, true, false, false, false, false])
  })

  it('keep the settings, not the content, and a large setting as a hash', () => {
    const config = configOf({
      model: 'gpt-5.4',
      temperature: 0.2,
      messages: [{ role: 'user', content: 'secret plan' }],
      tools: [],
      prompt_cache_key: 'k',
      response_format: { type: 'json_schema', json_schema: { schema: { description: 'x'.repeat(300) } } },
    })
    expect(Object.keys(config)).toEqual(['model', 'response_format', 'temperature'])
    expect(config.response_format).toMatch(/^#[0-9a-f]{16}$/)
    expect(JSON.stringify(config)).not.toContain('secret plan')
  })

  it('leave out what asks for the provider’s cache diagnostics, which names another response every request', () => {
    const anthropic = (previous: string | null) => ({
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      diagnostics: { previous_message_id: previous },
    })
    expect(configOf(anthropic(null))).toEqual(configOf(anthropic('msg_01')))
    expect(Object.keys(configOf(anthropic('msg_01')))).toEqual(['max_tokens', 'model'])
    const responses = (compared: string) => ({
      model: 'gpt-5.6-sol',
      prompt_cache_options: { ttl: '30m', comparison_response_id: compared },
    })
    expect(configOf(responses('resp_1'))).toEqual(configOf(responses('resp_2')))
    expect(configOf(responses('resp_1'))).toEqual(
      configOf({ model: 'gpt-5.6-sol', prompt_cache_options: { ttl: '30m' } }),
    )
  })

  it('keep an unknown field (an api_key, extra headers) as a hash only, so a change shows and no value does', () => {
    const body = (key: string) => ({
      model: 'gpt-5.4',
      api_key: key,
      extra_headers: { Authorization: `Bearer ${key}` },
    })
    const config = configOf(body('caller-secret-1'))
    expect(config.model).toBe('gpt-5.4')
    expect(config.api_key).toMatch(/^#[0-9a-f]{16}$/)
    expect(config.extra_headers).toMatch(/^#[0-9a-f]{16}$/)
    expect(JSON.stringify(config)).not.toContain('caller-secret')
    expect(configOf(body('caller-secret-2')).api_key).not.toBe(config.api_key)
  })

  it('hold no text, and find where two requests diverge by content', () => {
    const simulators = new CacheSimulators()
    const body = (system: string) => ({
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      system,
      messages: [{ role: 'user', content: 'the question' }],
    })
    const digest = (system: string) =>
      digestRequest(body(system), simulators.linearize('anthropic-messages', body(system)))
    const before = digest('You are terse.')
    expect(JSON.stringify(before)).not.toContain('terse')
    expect(before.segments.reduce((total, segment) => total + segment[2], 0) + before.trailing).toBe(
      before.total,
    )
    expect(firstDivergentSegment(before.segments, digest('You are terse.').segments)).toBeUndefined()
    expect(firstDivergentSegment(before.segments, digest('You are brief.').segments)).toBe(0)
  })
})

describe("a segment's hash", () => {
  it('is the hash of its frame and text joined by U+0000, short or long, lone surrogates at the joins included', () => {
    const text = fc.tuple(
      fc.string({ unit: 'binary' }),
      fc.nat({ max: 6_000 }),
      fc.string({ unit: 'binary' }),
    )
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), text, (frame, [start, filler, end]) => {
        const joined = `${start}${'x'.repeat(filler)}${end}`
        expect(framedHash(frame, joined)).toBe(contentHash(`${frame}\u0000${joined}`))
      }),
      { numRuns: 300 },
    )
    const long = 'y'.repeat(5_000)
    for (const [frame, text] of [
      ['user\ud800', `\udc00${long}`],
      ['\ud83d', `\ude00${long}\ud800`],
    ] as const)
      expect(framedHash(frame, text)).toBe(contentHash(`${frame}\u0000${text}`))
  })
})
