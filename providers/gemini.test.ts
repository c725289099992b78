import { describe, expect, it } from 'vitest'
import type { DerivedRequest } from '../harness/types.ts'
import { buildGeminiRequest, parseGeminiUsage, sdkParameters, toGeminiProviderError } from './gemini.ts'
import { derivedRequest, surfaceMessage, userText } from './testing.ts'

const derived = (extra: Partial<DerivedRequest> = {}) =>
  derivedRequest(
    { provider: 'gemini', model: 'gemini-2.5-flash' },
    [
      surfaceMessage({ role: 'system', text: 'Answer in English.' }, 2),
      userText('hi', 3),
      surfaceMessage(
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Looking.' },
            { type: 'tool-call', callId: 'call_1', name: 'grep', arguments: '{"q":"a"}' },
            { type: 'tool-call', callId: 'gemini-local-call-r-1', name: 'ls', arguments: '{}' },
          ],
        },
        4,
      ),
      surfaceMessage({ role: 'tool', callId: 'call_1', name: 'grep', text: 'none' }, 5),
      surfaceMessage(
        { role: 'tool', callId: 'gemini-local-call-r-1', name: 'ls', text: 'a.ts', isError: true },
        6,
      ),
      surfaceMessage({ role: 'developer', text: 'Tool cat added.' }, 7),
    ],
    extra,
  )

describe('buildGeminiRequest', () => {
  it('puts the header prompt and leading system messages in systemInstruction, and one round of results in one user content', () => {
    const built = buildGeminiRequest(derived({ system: { text: 'Be brief.', sourceSeq: 1 } }), {
      stream: false,
    })
    expect(built).toMatchObject({ provider: 'gemini', api: 'gemini-generate' })
    expect(built.body.systemInstruction).toEqual({
      parts: [{ text: 'Be brief.' }, { text: 'Answer in English.' }],
    })
    expect(built.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'hi' }] },
      {
        role: 'model',
        parts: [
          { text: 'Looking.' },
          { functionCall: { id: 'call_1', name: 'grep', args: { q: 'a' } } },
          { functionCall: { name: 'ls', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'call_1', name: 'grep', response: { output: 'none' } } },
          { functionResponse: { name: 'ls', response: { error: 'a.ts' } } },
        ],
      },
      { role: 'user', parts: [{ text: '<developer>\nTool cat added.\n</developer>' }] },
    ])
    expect(built.sources).toEqual({ system: [1, 2], tools: [], messages: [[3], [4], [5, 6], [7]] })
  })

  it('declares tools with their JSON schema, caps output in generationConfig and marks a stream, which the SDK takes apart', () => {
    const built = buildGeminiRequest(
      derived({
        config: { provider: 'gemini', model: 'gemini-2.5-pro', maxTokens: 256, temperature: 0.2 },
        tools: [{ name: 'grep', description: 'Search.', parameters: { type: 'object' } }],
        toolsSeq: 1,
      }),
      { stream: true, promptCacheKey: 'ignored' },
    )
    expect(built.body).toMatchObject({
      model: 'gemini-2.5-pro',
      stream: true,
      tools: [
        {
          functionDeclarations: [
            { name: 'grep', description: 'Search.', parametersJsonSchema: { type: 'object' } },
          ],
        },
      ],
      generationConfig: { maxOutputTokens: 256, temperature: 0.2 },
    })
    expect(built.body.prompt_cache_key).toBeUndefined()
    const parameters = sdkParameters(built.body, { stream: true, headers: { 'x-a': '1' } })
    expect(parameters.model).toBe('gemini-2.5-pro')
    expect(parameters.config).toMatchObject({
      maxOutputTokens: 256,
      temperature: 0.2,
      httpOptions: { headers: { 'x-a': '1' } },
    })
    expect(parameters.config).not.toHaveProperty('stream')
  })
})

describe('parseGeminiUsage', () => {
  it('takes the cached part out of the prompt count and counts thoughts as output', () => {
    const usage = parseGeminiUsage({
      promptTokenCount: 5000,
      cachedContentTokenCount: 4096,
      candidatesTokenCount: 20,
      thoughtsTokenCount: 100,
      totalTokenCount: 5120,
    })
    expect(usage).toMatchObject({ input: 5000, cacheRead: 4096, uncached: 904, output: 120, reasoning: 100 })
    expect(usage.cacheWrite).toBeUndefined()
  })

  it('reads an absent cached count as zero (proto3 JSON leaves zeros out)', () => {
    expect(parseGeminiUsage({ promptTokenCount: 10, candidatesTokenCount: 2 })).toMatchObject({
      input: 10,
      cacheRead: 0,
      uncached: 10,
      output: 2,
    })
  })
})

describe('toGeminiProviderError', () => {
  it('keeps the status and Google error status of an SDK error, and retries 429 and 5xx only', () => {
    const error = Object.assign(
      new Error('{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}'),
      {
        status: 429,
      },
    )
    expect(toGeminiProviderError(error)).toMatchObject({
      status: 429,
      errorType: 'RESOURCE_EXHAUSTED',
      retryable: true,
    })
    const refused = Object.assign(
      new Error('{"error":{"code":400,"message":"x","status":"INVALID_ARGUMENT"}}'),
      {
        status: 400,
      },
    )
    expect(toGeminiProviderError(refused)).toMatchObject({ status: 400, retryable: false })
  })
})
