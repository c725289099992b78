import { describe, expect, it } from 'vitest'
import { FIXED_EPOCH_MS, type OtlpAnyValue, otlpJsonLine, type SpanRecord, spansOf } from './otel.ts'
import { sessionRows, stepRow } from './testing.ts'
import type { StepRow } from './types.ts'

/** Two Anthropic requests (cold write, then a warm read with a break), and a failed attempt. */
function anthropicSession(): StepRow[] {
  const rows = sessionRows({ provider: 'anthropic', model: 'claude-sonnet-4-6' }, [
    { write: 2_000, uncached: 50 },
    {
      read: 1_500,
      write: 600,
      uncached: 40,
      lost: 500,
      breakCause: 'system-replace',
      breakNode: 'system[0]',
    },
    { failed: true, attempt: 0 },
  ])
  return rows.map((row, index) => ({ ...row, virtualTimeS: index * 30, latencyMs: 1_250 }))
}

/** A span's attributes as a key → value map (values as they are typed). */
function attributesOf(span: SpanRecord | undefined): Record<string, unknown> {
  return Object.fromEntries((span?.attributes ?? []).map((entry) => [entry.key, entry.value.value]))
}

describe('step rows as OpenTelemetry spans', () => {
  it('makes one trace per session: a session root span, then one CLIENT span per request named "chat {model}"', () => {
    const spans = spansOf(anthropicSession(), { names: 'genai', epochMs: FIXED_EPOCH_MS })
    expect(spans.map((span) => [span.name, span.kind])).toEqual([
      ['session append-only.default.anthropic', 'internal'],
      ['chat claude-sonnet-4-6', 'client'],
      ['chat claude-sonnet-4-6', 'client'],
      ['chat claude-sonnet-4-6', 'client'],
    ])
    const [root, ...requests] = spans
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1)
    expect(root?.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(root?.parentSpanId).toBeUndefined()
    expect(requests.every((span) => span.parentSpanId === root?.spanId)).toBe(true)
    expect(new Set(spans.map((span) => span.spanId)).size).toBe(4)
  })

  it('writes the GenAI usage with input including the cached tokens, read and written, and the cache attributes', () => {
    const [, cold, warm] = spansOf(anthropicSession(), { names: 'genai', epochMs: FIXED_EPOCH_MS })
    expect(attributesOf(warm)).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-sonnet-4-6',
      'gen_ai.conversation.id': 'sim-test/append-only.default.anthropic',
      'gen_ai.usage.input_tokens': 1_500 + 600 + 40,
      'gen_ai.usage.cache_read.input_tokens': 1_500,
      'gen_ai.usage.cache_creation.input_tokens': 600,
      'gen_ai.usage.output_tokens': 10,
      'cachelab.uncached_tokens': 40,
      'cachelab.ideal_cache_read_tokens': 2_000,
      'cachelab.lost_tokens': 500,
      'cachelab.break.cause': 'system-replace',
      'cachelab.break.node': 'system[0]',
      'cachelab.turn': 1,
      'cachelab.step': 2,
      'cachelab.attempt': 0,
    })
    expect(attributesOf(cold)).toMatchObject({
      'gen_ai.usage.input_tokens': 2_050,
      'gen_ai.usage.cache_read.input_tokens': 0,
      'gen_ai.usage.cache_creation.input_tokens': 2_000,
      'cachelab.cold': true,
    })
    expect(attributesOf(cold)).not.toHaveProperty('cachelab.break.cause')
    expect(Object.keys(attributesOf(warm)).some((key) => key.startsWith('llm.'))).toBe(false)
  })

  it('marks a failed attempt as an error with error.type, and reports no usage for it', () => {
    const failed = spansOf(anthropicSession(), { names: 'both', epochMs: FIXED_EPOCH_MS })[3]
    expect(failed?.status).toEqual({ code: 'error', message: 'attempt 0 failed' })
    const attributes = attributesOf(failed)
    expect(attributes['error.type']).toBe('_OTHER')
    expect(Object.keys(attributes).filter((key) => key.includes('token') || key.includes('cost'))).toEqual([])
  })

  it('reports no usage for a request answered without it, says so, and states no cost for a session that reported none', () => {
    const rows = sessionRows({ scenario: 'capture', variant: 'unreported' }, [
      { unreported: { predictedRead: 0 } },
      { unreported: { predictedRead: 1_000 } },
    ])
    const [root, , second] = spansOf(rows, { names: 'both', epochMs: FIXED_EPOCH_MS })
    const attributes = attributesOf(second)
    expect(second?.status).not.toEqual(expect.objectContaining({ code: 'error' }))
    expect(attributes['cachelab.usage_not_reported']).toBe(true)
    expect(attributes['cachelab.predicted.cache_read_tokens']).toBe(1_000)
    expect(
      Object.keys(attributes).filter(
        (key) => (key.includes('token') || key.includes('cost')) && !key.startsWith('cachelab.predicted.'),
      ),
    ).toEqual([])
    expect(attributesOf(root)).toMatchObject({
      'cachelab.session.requests': 2,
      'cachelab.session.usage_not_reported': 2,
    })
    expect(attributesOf(root)).not.toHaveProperty('cachelab.session.cost_usd')
  })

  it('times each request from the epoch plus its virtual time, for its latency, and the root over all of them', () => {
    const epochMs = Date.UTC(2026, 10, 30, 9)
    const [root, first, second, third] = spansOf(anthropicSession(), { names: 'genai', epochMs })
    const nanos = (milliseconds: number) => BigInt(milliseconds) * 1_000_000n
    expect(first?.startTimeUnixNano).toBe(nanos(epochMs))
    expect(first?.endTimeUnixNano).toBe(nanos(epochMs + 1_250))
    expect(second?.startTimeUnixNano).toBe(nanos(epochMs + 30_000))
    expect(root?.startTimeUnixNano).toBe(first?.startTimeUnixNano)
    expect(root?.endTimeUnixNano).toBe(third?.endTimeUnixNano)
  })

  it('writes the OpenInference names instead on request, or both vocabularies, and cachelab’s own either way', () => {
    const openInference = attributesOf(
      spansOf(anthropicSession(), { names: 'openinference', epochMs: FIXED_EPOCH_MS })[2],
    )
    expect(openInference).toMatchObject({
      'openinference.span.kind': 'LLM',
      'llm.model_name': 'claude-sonnet-4-6',
      'llm.provider': 'anthropic',
      'llm.token_count.prompt': 2_140,
      'llm.token_count.prompt_details.cache_read': 1_500,
      'llm.token_count.prompt_details.cache_write': 600,
      'llm.token_count.completion': 10,
      'llm.token_count.total': 2_150,
      'session.id': 'sim-test/append-only.default.anthropic',
      'cachelab.lost_tokens': 500,
    })
    expect(Object.keys(openInference).some((key) => key.startsWith('gen_ai.'))).toBe(false)
    const both = attributesOf(spansOf(anthropicSession(), { names: 'both', epochMs: FIXED_EPOCH_MS })[2])
    expect(both['gen_ai.usage.cache_read.input_tokens']).toBe(1_500)
    expect(both['llm.token_count.prompt_details.cache_read']).toBe(1_500)
  })

  it('names OpenAI’s two wire APIs by their vendor, keeping cachelab’s provider id beside it', () => {
    const rows = [
      stepRow({ provider: 'openai-responses', model: 'gpt-5.4', read: 1_024, uncached: 100 }),
      stepRow({ provider: 'deepseek', model: 'deepseek-flash', read: 64, uncached: 10 }),
    ]
    const spans = spansOf(rows, { names: 'genai', epochMs: FIXED_EPOCH_MS }).filter(
      (span) => span.kind === 'client',
    )
    expect(spans.map((span) => attributesOf(span)['gen_ai.provider.name'])).toEqual(['openai', 'deepseek'])
    expect(attributesOf(spans[0])['cachelab.provider']).toBe('openai-responses')
    expect(attributesOf(spans[0])['gen_ai.usage.input_tokens']).toBe(1_124)
  })

  it('puts each session in its own trace, with the session summary on its root and no usage there', () => {
    const rows = [
      ...anthropicSession(),
      ...sessionRows({ variant: 'other', provider: 'anthropic' }, [{ write: 100 }, { read: 100 }]),
    ]
    const roots = spansOf(rows, { names: 'genai', epochMs: FIXED_EPOCH_MS }).filter(
      (span) => span.parentSpanId === undefined,
    )
    expect(roots.map((span) => span.name)).toEqual([
      'session append-only.default.anthropic',
      'session append-only.other.anthropic',
    ])
    expect(roots[0]?.traceId).not.toBe(roots[1]?.traceId)
    expect(attributesOf(roots[0])).toMatchObject({
      'gen_ai.conversation.id': 'sim-test/append-only.default.anthropic',
      'cachelab.session.requests': 2,
      'cachelab.session.failed_attempts': 1,
      'cachelab.session.breaks': 1,
      'cachelab.session.lost_tokens': 500,
    })
    expect(Object.keys(attributesOf(roots[0])).some((key) => key.startsWith('gen_ai.usage'))).toBe(false)
  })

  it('gives the same ids for the same rows and epoch, and new ones at another epoch', () => {
    const ids = (epochMs: number) =>
      spansOf(anthropicSession(), { names: 'genai', epochMs }).map((span) => span.spanId)
    expect(ids(FIXED_EPOCH_MS)).toEqual(ids(FIXED_EPOCH_MS))
    expect(ids(FIXED_EPOCH_MS)[0]).not.toBe(ids(FIXED_EPOCH_MS + 1)[0])
  })
})

describe('the OTLP/HTTP JSON encoding', () => {
  const line = otlpJsonLine(spansOf(anthropicSession(), { names: 'genai', epochMs: FIXED_EPOCH_MS }))
  const request = JSON.parse(line)
  const spans = request.resourceSpans[0].scopeSpans[0].spans
  const value = (span: { attributes: Array<{ key: string; value: OtlpAnyValue }> }, key: string) =>
    span.attributes.find((attribute) => attribute.key === key)?.value

  it('is one line: a request with one resource named cachelab and the spans under one scope', () => {
    expect(line.endsWith('}\n')).toBe(true)
    expect(line.indexOf('\n')).toBe(line.length - 1)
    expect(request.resourceSpans).toHaveLength(1)
    expect(request.resourceSpans[0].resource.attributes).toEqual([
      { key: 'service.name', value: { stringValue: 'cachelab' } },
    ])
    expect(request.resourceSpans[0].scopeSpans[0].scope).toEqual({ name: 'cachelab' })
    expect(spans).toHaveLength(4)
  })

  it('encodes kinds and statuses as numbers, times as nanosecond strings, ints as strings and costs as doubles', () => {
    const [root, , warm, failed] = spans
    expect(root.kind).toBe(1)
    expect(root.parentSpanId).toBeUndefined()
    expect(warm.kind).toBe(3)
    expect(warm.parentSpanId).toBe(root.spanId)
    expect(warm.startTimeUnixNano).toBe('946684830000000000')
    expect(warm.endTimeUnixNano).toBe('946684831250000000')
    expect(value(warm, 'gen_ai.usage.cache_read.input_tokens')).toEqual({ intValue: '1500' })
    expect(value(warm, 'cachelab.cost_usd')).toEqual({ doubleValue: expect.any(Number) })
    expect(value(warm, 'cachelab.cold')).toEqual({ boolValue: false })
    expect(warm.status).toEqual({ code: 0 })
    expect(failed.status).toEqual({ code: 2, message: 'attempt 0 failed' })
  })

  it('writes a cost of 0 as a double, not an int', () => {
    const free = otlpJsonLine(spansOf([stepRow({ uncached: 0 })], { names: 'genai', epochMs: 0 }))
    const span = JSON.parse(free).resourceSpans[0].scopeSpans[0].spans[1]
    expect(value(span, 'cachelab.cost_usd')).toEqual({ doubleValue: 0 })
  })
})
