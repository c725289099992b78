import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { deadEndpoint, receivedSpans, startReceiver } from '../bin/otel-testing.ts'
import { withEnv } from '../bin/testing.ts'
import type { OtlpTraceRequest } from './otel.ts'
import { exportRows, tracesUrl } from './otel-export.ts'
import { sessionRows } from './testing.ts'
import type { StepRow } from './types.ts'

const rows: StepRow[] = sessionRows({ provider: 'anthropic', model: 'claude-sonnet-4-6' }, [
  { write: 3_000, uncached: 20 },
  { read: 3_000, write: 400, uncached: 30 },
  { read: 1_000, write: 2_500, uncached: 30, lost: 2_000, breakCause: 'tools-changed', breakNode: 'tools' },
])

let closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.map((close) => close()))
  closers = []
})

describe('exporting rows to an OTLP/HTTP endpoint', () => {
  it('sends one span per request, with the cache attributes, as JSON to /v1/traces, plus the session root', async () => {
    const receiver = await startReceiver()
    closers.push(receiver.close)
    const result = await exportRows(rows, { endpoint: receiver.url })
    expect(result).toEqual({
      spans: 4,
      traces: 1,
      file: undefined,
      endpoint: { url: `${receiver.url}/v1/traces`, delivered: true },
    })
    expect(receiver.received).toHaveLength(1)
    const [request] = receiver.received
    expect(request).toMatchObject({ method: 'POST', path: '/v1/traces', contentType: 'application/json' })
    const spans = receivedSpans(request?.body as OtlpTraceRequest)
    const calls = spans.filter((span) => span.name === 'chat claude-sonnet-4-6')
    expect(calls).toHaveLength(3)
    expect(calls.map((span) => span.kind)).toEqual([3, 3, 3])
    expect(calls.map((span) => span.values['gen_ai.usage.cache_read.input_tokens'])).toEqual([
      0, 3_000, 1_000,
    ])
    expect(calls.map((span) => span.values['gen_ai.usage.cache_creation.input_tokens'])).toEqual([
      3_000, 400, 2_500,
    ])
    expect(calls.map((span) => span.values['gen_ai.usage.input_tokens'])).toEqual([3_020, 3_430, 3_530])
    expect(calls[2]?.values).toMatchObject({
      'cachelab.break.cause': 'tools-changed',
      'cachelab.lost_tokens': 2_000,
    })
    const root = spans.find((span) => span.parentSpanId === undefined || span.parentSpanId === '')
    expect(root?.name).toBe('session append-only.default.anthropic')
    expect(calls.every((span) => span.parentSpanId === root?.spanId && span.traceId === root?.traceId)).toBe(
      true,
    )
  })

  it('sends the same spans it writes to the file: ids, names, times and attribute values', async () => {
    const receiver = await startReceiver()
    closers.push(receiver.close)
    const file = join(mkdtempSync(join(tmpdir(), 'cachelab-otel-')), 'nested', 'traces.json')
    const result = await exportRows(rows, { endpoint: receiver.url, file, names: 'both' })
    expect(result.file).toBe(file)
    const fromFile = receivedSpans(JSON.parse(readFileSync(file, 'utf8')))
    const sent = receivedSpans(receiver.received[0]?.body as OtlpTraceRequest)
    // The file follows proto3 JSON (64-bit integers as strings); the SDK sends numbers: compare as numbers.
    const comparable = (spans: typeof sent) =>
      spans.map((span) => ({
        ids: [span.traceId, span.spanId, span.parentSpanId || undefined],
        name: span.name,
        kind: span.kind,
        times: [String(span.startTimeUnixNano), String(span.endTimeUnixNano)],
        status: span.status.code,
        values: Object.fromEntries(
          Object.entries(span.values).map(([key, value]) => [
            key,
            typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value,
          ]),
        ),
      }))
    expect(comparable(sent)).toEqual(comparable(fromFile))
  })

  it('passes headers (an authorization) to the endpoint, given or from OTEL_EXPORTER_OTLP_HEADERS', async () => {
    const receiver = await startReceiver()
    closers.push(receiver.close)
    await exportRows(rows, {
      endpoint: `${receiver.url}/v1/traces`,
      headers: { Authorization: 'Basic cGs6c2s=' },
    })
    await withEnv({ OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Basic%20ZW52OmtleQ==' }, () =>
      exportRows(rows, { endpoint: receiver.url }),
    )
    expect(receiver.received.map((request) => request.authorization)).toEqual([
      'Basic cGs6c2s=',
      'Basic ZW52OmtleQ==',
    ])
  })

  it('reports an endpoint that refuses the spans, with its status, instead of throwing', async () => {
    const receiver = await startReceiver(400)
    closers.push(receiver.close)
    const result = await exportRows(rows, { endpoint: receiver.url })
    expect(result.endpoint).toEqual({
      url: `${receiver.url}/v1/traces`,
      delivered: false,
      reason: expect.stringContaining('HTTP 400'),
    })
  })

  it('reports an endpoint without the key its URL carries', async () => {
    const receiver = await startReceiver(400)
    closers.push(receiver.close)
    const result = await exportRows(rows, {
      endpoint: `${receiver.url}/v1/traces?api_key=collector-key-0001`,
    })
    expect(result.endpoint).toMatchObject({
      url: `${receiver.url}/v1/traces?api_key=[redacted]`,
      delivered: false,
    })
    expect(JSON.stringify(result)).not.toContain('collector-key-0001')
    expect(() => tracesUrl('ftp://collector/v1/traces?token=collector-key-0002')).toThrow(
      'OTLP endpoint "ftp://collector/v1/traces?token=[redacted]" is not an http or https URL',
    )
  })

  it('reports an endpoint nothing listens on once the exporter gives up, and still writes the file', async () => {
    const url = await deadEndpoint()
    const file = join(mkdtempSync(join(tmpdir(), 'cachelab-otel-')), 'traces.json')
    const result = await exportRows(rows, { endpoint: url, file, timeoutMs: 300 })
    expect(result.endpoint).toMatchObject({
      delivered: false,
      reason: expect.stringMatching(/ECONNREFUSED|timed out/),
    })
    expect(readFileSync(file, 'utf8')).toContain('"resourceSpans"')
  })
})

describe('exporting rows to a file', () => {
  it('throws an input error naming the file when it cannot be written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-otel-'))
    writeFileSync(join(dir, 'plain'), 'a file, not a directory')
    await expect(exportRows(rows, { file: join(dir, 'plain', 'traces.json') })).rejects.toThrow(
      /cannot write the OTLP file .*plain\/traces\.json/,
    )
  })
})

describe('the traces URL of an endpoint', () => {
  it('appends /v1/traces to a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT does, and keeps a traces URL', () => {
    expect(tracesUrl('http://localhost:4318')).toBe('http://localhost:4318/v1/traces')
    expect(tracesUrl('https://cloud.langfuse.com/api/public/otel/')).toBe(
      'https://cloud.langfuse.com/api/public/otel/v1/traces',
    )
    expect(tracesUrl('http://localhost:6006/v1/traces')).toBe('http://localhost:6006/v1/traces')
  })

  it('refuses what is not an http or https URL', () => {
    expect(() => tracesUrl('localhost:4318')).toThrow('is not an http or https URL')
    expect(() => tracesUrl('not a url')).toThrow('is not a URL')
  })
})
