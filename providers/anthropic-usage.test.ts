import { describe, expect, it } from 'vitest'
import type { Usage } from '../harness/types.ts'
import { parseAnthropicUsage, usageOfBuckets } from './anthropic-usage.ts'

describe('parseAnthropicUsage', () => {
  const cases: Array<{ name: string; raw: Record<string, unknown>; expected: Omit<Usage, 'raw'> }> = [
    {
      name: 'a first call that writes',
      raw: {
        input_tokens: 21,
        cache_creation_input_tokens: 188086,
        cache_read_input_tokens: 0,
        output_tokens: 393,
      },
      expected: { input: 188107, uncached: 21, cacheRead: 0, cacheWrite: 188086, output: 393 },
    },
    {
      name: 'the documented mixed-TTL example',
      raw: {
        input_tokens: 2048,
        cache_read_input_tokens: 1800,
        cache_creation_input_tokens: 248,
        output_tokens: 503,
        cache_creation: { ephemeral_5m_input_tokens: 148, ephemeral_1h_input_tokens: 100 },
      },
      expected: {
        input: 4096,
        uncached: 2048,
        cacheRead: 1800,
        cacheWrite: 248,
        cacheWrite5m: 148,
        cacheWrite1h: 100,
        output: 503,
      },
    },
    {
      name: 'cache fields not reported stay undefined',
      raw: { input_tokens: 25, output_tokens: 15 },
      expected: { input: 25, uncached: 25, output: 15 },
    },
    {
      name: 'null cache fields stay undefined; thinking tokens are reasoning',
      raw: {
        input_tokens: 10,
        cache_read_input_tokens: null,
        cache_creation_input_tokens: null,
        cache_creation: null,
        output_tokens: 40,
        output_tokens_details: { thinking_tokens: 30 },
      },
      expected: { input: 10, uncached: 10, output: 40, reasoning: 30 },
    },
  ]
  for (const { name, raw, expected } of cases) {
    it(`normalizes ${name}`, () => {
      expect(parseAnthropicUsage(raw)).toEqual({ ...expected, raw })
    })
  }
})

describe('usageOfBuckets', () => {
  it('adds the cache reads and writes to the uncached count, and leaves out what was not reported', () => {
    const raw = { any: 'thing' }
    expect(
      usageOfBuckets(
        {
          uncached: 9,
          cacheRead: 1604,
          cacheWrite: 10,
          cacheWrite5m: undefined,
          cacheWrite1h: 10,
          output: 2,
        },
        raw,
      ),
    ).toEqual({ input: 1623, uncached: 9, cacheRead: 1604, cacheWrite: 10, cacheWrite1h: 10, output: 2, raw })
    expect(
      usageOfBuckets(
        {
          uncached: 5,
          cacheRead: undefined,
          cacheWrite: undefined,
          cacheWrite5m: undefined,
          cacheWrite1h: undefined,
          output: 0,
        },
        undefined,
      ),
    ).toEqual({ input: 5, uncached: 5, output: 0, raw: null })
  })
})
