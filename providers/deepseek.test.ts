import { describe, expect, it } from 'vitest'
import type { DerivedRequest, Usage } from '../harness/types.ts'
import { buildDeepSeekRequest, parseDeepSeekUsage } from './deepseek.ts'
import { derivedRequest, surfaceMessage, userText } from './testing.ts'

const derived = (extra: Partial<DerivedRequest> = {}) =>
  derivedRequest(
    { provider: 'deepseek', model: 'deepseek-flash' },
    [
      surfaceMessage({ role: 'developer', text: 'Tool grep added.' }, 2),
      userText('hi', 3),
      surfaceMessage(
        {
          role: 'assistant',
          content: [{ type: 'tool-call', callId: 'call_1', name: 'grep', arguments: '{}' }],
        },
        4,
      ),
      surfaceMessage({ role: 'tool', callId: 'call_1', name: 'grep', text: 'none' }, 5),
    ],
    extra,
  )

describe('buildDeepSeekRequest', () => {
  it('sends the Chat shape with developer messages as system and the header prompt first', () => {
    const built = buildDeepSeekRequest(derived({ system: { text: 'Be brief.', sourceSeq: 1 } }), {
      stream: false,
    })
    expect(built).toMatchObject({ provider: 'deepseek', api: 'deepseek-chat' })
    expect(built.body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Tool grep added.' },
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'grep', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'none' },
    ])
    expect(built.sources.messages).toEqual([[1], [2], [3], [4], [5]])
  })

  it('caps output with max_tokens and ignores the OpenAI cache options DeepSeek does not have', () => {
    const built = buildDeepSeekRequest(
      derived({
        config: { provider: 'deepseek', model: 'deepseek-flash', maxTokens: 256, temperature: 0.2 },
        tools: [{ name: 'grep', description: 'Search.', parameters: { type: 'object' } }],
        toolsSeq: 1,
      }),
      { stream: true, promptCacheKey: 'k', retention: '24h', cacheTtl: '30m' },
    )
    expect(built.body).toMatchObject({
      model: 'deepseek-flash',
      max_tokens: 256,
      temperature: 0.2,
      tools: [
        {
          type: 'function',
          function: { name: 'grep', description: 'Search.', parameters: { type: 'object' } },
        },
      ],
      stream: true,
      stream_options: { include_usage: true },
    })
    for (const absent of [
      'max_completion_tokens',
      'prompt_cache_key',
      'prompt_cache_retention',
      'prompt_cache_options',
    ]) {
      expect(built.body).not.toHaveProperty(absent)
    }
    expect(built.sources.tools).toEqual([1])
  })
})

describe('parseDeepSeekUsage', () => {
  const cases: Array<{ name: string; raw: Record<string, unknown>; usage: Omit<Usage, 'raw'> }> = [
    {
      name: 'hits come from prompt_cache_hit_tokens and are part of prompt_tokens',
      raw: {
        prompt_tokens: 1000,
        completion_tokens: 20,
        total_tokens: 1020,
        prompt_tokens_details: { cached_tokens: 896 },
        prompt_cache_hit_tokens: 896,
        prompt_cache_miss_tokens: 104,
      },
      usage: { input: 1000, uncached: 104, cacheRead: 896, output: 20 },
    },
    {
      name: 'without the DeepSeek fields, the OpenAI-style cached_tokens is read',
      raw: { prompt_tokens: 500, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 128 } },
      usage: { input: 500, uncached: 372, cacheRead: 128, output: 5 },
    },
    {
      name: 'only a miss count: hits are the rest of the prompt',
      raw: { prompt_tokens: 500, completion_tokens: 5, prompt_cache_miss_tokens: 100 },
      usage: { input: 500, uncached: 100, cacheRead: 400, output: 5 },
    },
    {
      name: 'reasoning tokens when the reasoning model reports them',
      raw: {
        prompt_tokens: 64,
        completion_tokens: 300,
        prompt_cache_hit_tokens: 0,
        prompt_cache_miss_tokens: 64,
        completion_tokens_details: { reasoning_tokens: 250 },
      },
      usage: { input: 64, uncached: 64, cacheRead: 0, output: 300, reasoning: 250 },
    },
    {
      name: 'no cache fields at all: reads are not reported, not zero',
      raw: { prompt_tokens: 30, completion_tokens: 2 },
      usage: { input: 30, uncached: 30, output: 2 },
    },
  ]
  for (const testCase of cases) {
    it(testCase.name, () => {
      const usage = parseDeepSeekUsage(testCase.raw)
      expect(usage).toEqual({ ...testCase.usage, raw: testCase.raw })
      expect(usage.cacheWrite).toBeUndefined()
      expect(usage.uncached + (usage.cacheRead ?? 0)).toBe(usage.input)
    })
  }
})
