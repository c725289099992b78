import { describe, expect, it } from 'vitest'
import type { CompatibleProviderId } from '../harness/types.ts'
import { resolveModel } from './catalog.ts'
import {
  askDiagnostics,
  diagnosable,
  readAnthropicDiagnostics,
  readResponsesDiagnostics,
} from './diagnostics.ts'
import { compatibleApi } from './types.ts'

describe('asking a provider for its cache diagnostics', () => {
  it('is offered by the Claude API and by OpenAI Responses from GPT-5.6 on', () => {
    expect(diagnosable('anthropic-messages', resolveModel('anthropic'))).toBe(true)
    expect(diagnosable('openai-responses', resolveModel('openai-responses', 'gpt-5.6-sol'))).toBe(true)
    // GPT-5.4 refuses `prompt_cache_options`; Chat Completions, Bedrock and compatible APIs have no diagnostics.
    expect(diagnosable('openai-responses', resolveModel('openai-responses', 'gpt-5.4'))).toBe(false)
    expect(diagnosable('openai-chat', resolveModel('openai-chat', 'gpt-5.6-sol'))).toBe(false)
    expect(diagnosable('bedrock-converse', resolveModel('bedrock'))).toBe(false)
    expect(
      diagnosable(
        compatibleApi('deepseek-anthropic' as CompatibleProviderId, 'messages'),
        resolveModel('deepseek'),
      ),
    ).toBe(false)
  })

  it('opts in on Anthropic’s first request with a null id, and names the previous message after', () => {
    const body = { model: 'claude-sonnet-4-6', max_tokens: 64, messages: [] }
    expect(askDiagnostics('anthropic-messages', body, undefined)).toEqual({
      ...body,
      diagnostics: { previous_message_id: null },
    })
    expect(askDiagnostics('anthropic-messages', body, 'msg_01').diagnostics).toEqual({
      previous_message_id: 'msg_01',
    })
  })

  it('asks OpenAI from the second request on, beside the cache options already set', () => {
    const body = { model: 'gpt-5.6-sol', input: 'Hi.', prompt_cache_options: { ttl: '30m' } }
    expect(askDiagnostics('openai-responses', body, undefined)).toBe(body)
    expect(askDiagnostics('openai-responses', body, 'resp_1').prompt_cache_options).toEqual({
      ttl: '30m',
      comparison_response_id: 'resp_1',
    })
    expect(body.prompt_cache_options).toEqual({ ttl: '30m' })
  })
})

describe("reading a provider's cache diagnostics", () => {
  it("reads Anthropic's three documented values of diagnostics", () => {
    expect(readAnthropicDiagnostics(undefined)).toBeUndefined()
    expect(readAnthropicDiagnostics(null)).toEqual({ reason: 'none' })
    expect(readAnthropicDiagnostics({ cache_miss_reason: null })).toEqual({ reason: 'pending' })
    expect(
      readAnthropicDiagnostics({
        cache_miss_reason: { type: 'system_changed', cache_missed_input_tokens: 41850 },
      }),
    ).toEqual({ reason: 'system_changed', missedTokens: 41850 })
    expect(readAnthropicDiagnostics({ cache_miss_reason: { type: 'previous_message_not_found' } })).toEqual({
      reason: 'previous_message_not_found',
    })
  })

  it("reads OpenAI's outcomes, a miss by its reason", () => {
    expect(readResponsesDiagnostics(undefined)).toBeUndefined()
    expect(readResponsesDiagnostics(null)).toBeUndefined()
    expect(readResponsesDiagnostics({ type: 'cache_hit' })).toEqual({ reason: 'cache_hit' })
    expect(
      readResponsesDiagnostics({
        type: 'cache_miss',
        reason: 'tools_changed',
        comparison_reusable_tokens: 5629,
        cache_missed_tokens: 5629,
      }),
    ).toEqual({ reason: 'tools_changed', missedTokens: 5629 })
    expect(readResponsesDiagnostics({ type: 'comparison_response_not_found' })).toEqual({
      reason: 'comparison_response_not_found',
    })
  })
})
