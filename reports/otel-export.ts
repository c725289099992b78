// Rows exported to observability tools: the spans of reports/otel.ts written as an OTLP/HTTP JSON file
// and sent to an OTLP/HTTP endpoint through the official exporter. `run`, `report` and `import` call
// `exportRows` after their own files are written; an endpoint that fails is reported, never thrown.

import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { HrTime } from '@opentelemetry/api'
import type { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import type { Resource } from '@opentelemetry/resources'
import type { ReadableSpan } from '@opentelemetry/sdk-trace'
import { makeDirectories } from '../harness/directories.ts'
import { CachelabError } from '../harness/errors.ts'
import { redactText } from '../providers/mock/serve-safety.ts'
import { FIXED_EPOCH_MS, otlpJsonLine, type SpanRecord, spansOf, traceCount } from './otel.ts'
import { CACHELAB_SERVICE, type OtelNameSet, RESOURCE } from './otel-names.ts'
import type { StepRow } from './types.ts'

/** Where and how to export. With neither `file` nor `endpoint`, nothing is exported. */
export interface OtelExportOptions {
  /** Write the spans here, as one line of OTLP/HTTP JSON (`{"resourceSpans": [...]}`); parents are created. */
  file?: string
  /**
   * An OTLP/HTTP endpoint: a traces URL ending in `/v1/traces` is used as is; any other URL is a base,
   * as `OTEL_EXPORTER_OTLP_ENDPOINT` is, and gets `/v1/traces` appended.
   */
  endpoint?: string
  /** Which vocabulary the usage attributes use; `genai` when absent. */
  names?: OtelNameSet
  /** Unix time (ms) of virtual time 0; `FIXED_EPOCH_MS` (2000-01-01) when absent. */
  epochMs?: number
  /** Give up on the endpoint after this long, retries included; the exporter's default (10 s, or `OTEL_EXPORTER_OTLP_TIMEOUT`) when absent. */
  timeoutMs?: number
  /** Extra request headers (authorization); `OTEL_EXPORTER_OTLP_HEADERS` is read by the exporter too. */
  headers?: Record<string, string>
  /**
   * Mixed into the trace ids, so this export's traces are its own (two runs of one scenario never share
   * one); a random value per call when absent. Give one to write the same ids again.
   */
  nonce?: string
}

/** What an export did. */
export interface OtelExportResult {
  spans: number
  /** One per session. */
  traces: number
  /** The file written (absolute), when one was asked for. */
  file: string | undefined
  /** The endpoint's outcome, when one was asked for. */
  endpoint: EndpointOutcome | undefined
}

/** Whether the endpoint took the spans; a failure keeps the exporter's reason. */
export type EndpointOutcome =
  | { url: string; delivered: true }
  | { url: string; delivered: false; reason: string }

/** Spans per request to the endpoint: the SDK's batch processor default, well under collectors' body limits. */
const BATCH_SPANS = 512

/**
 * Export rows as spans to a file and/or an OTLP/HTTP endpoint. A file that cannot be written throws a
 * `CachelabError` (kind `input`) before the endpoint is tried; an endpoint that cannot be reached, or
 * refuses, is an outcome (`delivered: false`) once the exporter has given up, never an exception.
 */
export async function exportRows(
  rows: readonly StepRow[],
  options: OtelExportOptions,
): Promise<OtelExportResult> {
  const url = options.endpoint === undefined ? undefined : tracesUrl(options.endpoint)
  const spans = spansOf(rows, {
    names: options.names ?? 'genai',
    epochMs: options.epochMs ?? FIXED_EPOCH_MS,
    nonce: options.nonce ?? randomBytes(8).toString('hex'),
  })
  const file = options.file === undefined ? undefined : resolve(options.file)
  if (file !== undefined) writeSpans(file, spans)
  const endpoint =
    url === undefined
      ? undefined
      : await sendSpans(spans, url, {
          ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
          ...(options.headers !== undefined ? { headers: options.headers } : {}),
        })
  return { spans: spans.length, traces: traceCount(rows), file, endpoint }
}

/**
 * The traces URL of an endpoint: kept when it ends in `/v1/traces`, else `/v1/traces` appended as the
 * OTLP exporter configuration does for `OTEL_EXPORTER_OTLP_ENDPOINT`. Not an http(s) URL: a usage error.
 */
export function tracesUrl(endpoint: string): string {
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    throw new CachelabError('usage', `OTLP endpoint ${JSON.stringify(redactText(endpoint))} is not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CachelabError(
      'usage',
      `OTLP endpoint ${JSON.stringify(redactText(endpoint))} is not an http or https URL`,
    )
  if (/\/v1\/traces\/?$/.test(url.pathname)) return url.toString()
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`
  return url.toString()
}

function writeSpans(file: string, spans: readonly SpanRecord[]): void {
  try {
    makeDirectories(dirname(file))
    writeFileSync(file, otlpJsonLine(spans))
  } catch (error) {
    throw new CachelabError('input', `cannot write the OTLP file ${file}: ${(error as Error).message}`)
  }
}

/** Send the spans in batches, one after the other, and shut the exporter down (flushing it) before returning. */
async function sendSpans(
  spans: readonly SpanRecord[],
  url: string,
  options: { timeoutMs?: number; headers?: Record<string, string> },
): Promise<EndpointOutcome> {
  // Loaded on demand: the exporter adds about 50 ms to every command's start, and only this needs it.
  const [{ OTLPTraceExporter }, { resourceFromAttributes }, api] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/api'),
  ])
  const exporter = new OTLPTraceExporter({
    url,
    ...(options.timeoutMs !== undefined ? { timeoutMillis: options.timeoutMs } : {}),
    ...(options.headers !== undefined ? { headers: options.headers } : {}),
  })
  const resource = resourceFromAttributes({ [RESOURCE.serviceName]: CACHELAB_SERVICE })
  const readable = spans.map((span) => readableSpan(span, resource, api))
  try {
    for (let start = 0; start < readable.length; start += BATCH_SPANS) {
      const failure = await exportBatch(exporter, readable.slice(start, start + BATCH_SPANS))
      // The URL is reported as shown: a collector's key in its query or user-info is not.
      if (failure !== undefined)
        return { url: redactText(url), delivered: false, reason: redactText(failure) }
    }
    return { url: redactText(url), delivered: true }
  } finally {
    await exporter.shutdown()
  }
}

/** One export call; the reason it failed, or undefined. */
function exportBatch(exporter: OTLPTraceExporter, spans: ReadableSpan[]): Promise<string | undefined> {
  return new Promise((settle) => {
    exporter.export(spans, (result) => {
      // ExportResultCode.SUCCESS is 0 (@opentelemetry/core, not a direct dependency).
      if (result.code === 0) settle(undefined)
      else settle(failureReason(result.error))
    })
  })
}

/** The exporter's error in one line: the HTTP status and body when the endpoint answered, else the network error. */
function failureReason(error: Error | undefined): string {
  if (error === undefined) return 'export failed'
  const detail = error as Error & { code?: unknown; data?: unknown }
  const parts: string[] = []
  if (typeof detail.code === 'number') parts.push(`HTTP ${detail.code}`)
  if (typeof detail.code === 'string' && !error.message.includes(detail.code)) parts.push(detail.code)
  if (error.message !== '') parts.push(error.message)
  if (typeof detail.data === 'string' && detail.data !== '') parts.push(detail.data.slice(0, 200))
  return parts.join(': ').replace(/\s+/g, ' ').trim() || 'export failed'
}

/** A span record as the SDK's exporters read one: already ended, its ids and times given. */
function readableSpan(
  span: SpanRecord,
  resource: Resource,
  { SpanKind, SpanStatusCode, TraceFlags }: typeof import('@opentelemetry/api'),
): ReadableSpan {
  const context = { traceId: span.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED }
  return {
    name: span.name,
    kind: span.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
    spanContext: () => context,
    ...(span.parentSpanId !== undefined
      ? {
          parentSpanContext: {
            traceId: span.traceId,
            spanId: span.parentSpanId,
            traceFlags: TraceFlags.SAMPLED,
          },
        }
      : {}),
    startTime: hrTime(span.startTimeUnixNano),
    endTime: hrTime(span.endTimeUnixNano),
    duration: hrTime(span.endTimeUnixNano - span.startTimeUnixNano),
    status:
      span.status.code === 'error'
        ? { code: SpanStatusCode.ERROR, message: span.status.message }
        : { code: SpanStatusCode.UNSET },
    attributes: Object.fromEntries(
      span.attributes.map((attribute) => [attribute.key, attribute.value.value]),
    ),
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: { name: CACHELAB_SERVICE },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  }
}

function hrTime(nanoseconds: bigint): HrTime {
  return [Number(nanoseconds / 1_000_000_000n), Number(nanoseconds % 1_000_000_000n)]
}
