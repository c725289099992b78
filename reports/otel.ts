// Step rows as OpenTelemetry spans, pure: one trace per session (run, scenario, variant, provider) under a
// session root span, one CLIENT span per request named `chat {model}`, timed on the session's clock from a
// given epoch, and their OTLP/HTTP JSON encoding. Ids are hashes of what the spans describe, so the same
// rows and epoch give the same bytes. The sinks (a file, an OTLP endpoint) are in otel-export.ts.

import { createHash } from 'node:crypto'
import { vendorOf } from '../providers/catalog.ts'
import {
  CACHELAB,
  CACHELAB_SERVICE,
  ERROR_TYPE_OTHER,
  GEN_AI,
  GEN_AI_OPERATION_CHAT,
  OPEN_INFERENCE,
  OPEN_INFERENCE_KIND,
  type OtelNameSet,
  providerNameOf,
  RESOURCE,
} from './otel-names.ts'
import { summarize } from './summary.ts'
import type { StepRow, SummaryRow } from './types.ts'

/** An attribute value with its OTLP type: a cost of 0 is still a double, a token count an int. */
export type AttributeValue =
  | { type: 'string'; value: string }
  | { type: 'int'; value: number }
  | { type: 'double'; value: number }
  | { type: 'bool'; value: boolean }

export interface SpanAttribute {
  key: string
  value: AttributeValue
}

/** A span's status: unset on success (as the conventions ask), error on a failed attempt. */
export type SpanStatus = { code: 'unset' } | { code: 'error'; message: string }

/** One span, ready for either sink. */
export interface SpanRecord {
  /** 32 lowercase hex digits. */
  traceId: string
  /** 16 lowercase hex digits. */
  spanId: string
  /** The session root's id on a request span; undefined on the root. */
  parentSpanId: string | undefined
  name: string
  /** `internal` for a session root, `client` for a request. */
  kind: 'internal' | 'client'
  /** Nanoseconds since the Unix epoch. */
  startTimeUnixNano: bigint
  endTimeUnixNano: bigint
  /** In a fixed order, so the encoding is byte-stable. */
  attributes: SpanAttribute[]
  status: SpanStatus
}

export interface SpanOptions {
  /** Which vocabulary the usage attributes use; cachelab's own are always written. */
  names: OtelNameSet
  /**
   * Unix time (ms) of virtual time 0: a row's `virtualTimeS` seconds after it is when its request was
   * sent. `FIXED_EPOCH_MS` for a simulated run (deterministic files), the wall clock where rows carry it.
   */
  epochMs: number
  /**
   * Mixed into every trace id: one value per export of a run (the CLI draws a random one), so two runs
   * never share a trace even with the same run id and epoch. Absent, ids follow from the rows and epoch.
   */
  nonce?: string
}

/**
 * The epoch of simulated runs, 2000-01-01T00:00:00Z: the same bytes on every run, and a date no one
 * mistakes for a real request's.
 */
export const FIXED_EPOCH_MS = Date.UTC(2000, 0, 1)

/** Spans of the rows: per session, its root span, then one span per row in row order. */
export function spansOf(rows: readonly StepRow[], options: SpanOptions): SpanRecord[] {
  return sessionsOf(rows).flatMap((session) => sessionSpans(session, options))
}

/** How many traces (sessions) the rows make. */
export function traceCount(rows: readonly StepRow[]): number {
  return sessionsOf(rows).length
}

/** Rows grouped by session, the run included (an import can hold several runs), in first-seen order. */
function sessionsOf(rows: readonly StepRow[]): StepRow[][] {
  const groups = new Map<string, StepRow[]>()
  for (const row of rows) {
    const key = [row.runId, row.scenario, row.variant, row.provider].join('\u0000')
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [row])
    else group.push(row)
  }
  return [...groups.values()]
}

function sessionSpans(rows: readonly StepRow[], options: SpanOptions): SpanRecord[] {
  const first = rows[0] as StepRow
  const sessionName = `${first.scenario}.${first.variant}.${first.provider}`
  const conversationId = `${first.runId}/${sessionName}`
  // The epoch is part of the identity: the same run exported at another time is another trace.
  const traceId = hexHash(
    [
      'trace',
      options.epochMs,
      ...(options.nonce !== undefined ? [options.nonce] : []),
      first.runId,
      first.scenario,
      first.variant,
      first.provider,
    ].join('\u0000'),
    32,
  )
  const rootId = hexHash(`${traceId}\u0000root`, 16)
  const startMs = (row: StepRow): number => options.epochMs + row.virtualTimeS * 1000
  const endMs = (row: StepRow): number => startMs(row) + row.latencyMs
  const requests = rows.map(
    (row, index): SpanRecord => ({
      traceId,
      spanId: hexHash(`${traceId}\u0000${index}`, 16),
      parentSpanId: rootId,
      name: `${GEN_AI_OPERATION_CHAT} ${row.model}`,
      kind: 'client',
      startTimeUnixNano: nanos(startMs(row)),
      endTimeUnixNano: nanos(endMs(row)),
      attributes: requestAttributes(row, conversationId, options.names),
      status: row.ok ? { code: 'unset' } : { code: 'error', message: `attempt ${row.attempt} failed` },
    }),
  )
  const summary = summarize(rows)[0] as SummaryRow
  const root: SpanRecord = {
    traceId,
    spanId: rootId,
    parentSpanId: undefined,
    name: `session ${sessionName}`,
    kind: 'internal',
    startTimeUnixNano: nanos(
      rows.reduce((low, row) => Math.min(low, startMs(row)), Number.POSITIVE_INFINITY),
    ),
    endTimeUnixNano: nanos(rows.reduce((high, row) => Math.max(high, endMs(row)), Number.NEGATIVE_INFINITY)),
    attributes: rootAttributes(first, summary, conversationId, options.names),
    status: { code: 'unset' },
  }
  return [root, ...requests]
}

const string = (value: string): AttributeValue => ({ type: 'string', value })
const int = (value: number): AttributeValue => ({ type: 'int', value })
const double = (value: number): AttributeValue => ({ type: 'double', value })
const bool = (value: boolean): AttributeValue => ({ type: 'bool', value })

const withGenAi = (names: OtelNameSet): boolean => names === 'genai' || names === 'both'
const withOpenInference = (names: OtelNameSet): boolean => names === 'openinference' || names === 'both'

/**
 * A request's attributes. A failed attempt reports no usage: its zeros mean "none", not "0 tokens"; nor
 * does a request answered without usage, whose numbers are unknown.
 */
function requestAttributes(row: StepRow, conversationId: string, names: OtelNameSet): SpanAttribute[] {
  const attributes = attributeList()
  const measured = row.ok && row.usageNotReported !== true
  const provider = providerNameOf(vendorOf(row.provider))
  if (withGenAi(names)) {
    attributes.set(GEN_AI.operationName, string(GEN_AI_OPERATION_CHAT))
    attributes.set(GEN_AI.providerName, string(provider))
    attributes.set(GEN_AI.requestModel, string(row.model))
    attributes.set(GEN_AI.conversationId, string(conversationId))
    if (measured) {
      // cachelab's input is the sum of its disjoint buckets: cached tokens included, as the convention asks.
      attributes.set(GEN_AI.usageInputTokens, int(row.inputTokens))
      attributes.set(GEN_AI.usageOutputTokens, int(row.outputTokens))
      attributes.set(GEN_AI.usageCacheReadInputTokens, int(row.cacheReadTokens))
      attributes.set(GEN_AI.usageCacheCreationInputTokens, int(row.cacheWriteTokens))
    }
  }
  if (withOpenInference(names)) {
    attributes.set(OPEN_INFERENCE.spanKind, string(OPEN_INFERENCE_KIND.llm))
    attributes.set(OPEN_INFERENCE.modelName, string(row.model))
    attributes.set(OPEN_INFERENCE.provider, string(provider))
    attributes.set(OPEN_INFERENCE.system, string(provider))
    attributes.set(OPEN_INFERENCE.sessionId, string(conversationId))
    if (measured) {
      attributes.set(OPEN_INFERENCE.tokenCountPrompt, int(row.inputTokens))
      attributes.set(OPEN_INFERENCE.tokenCountCompletion, int(row.outputTokens))
      attributes.set(OPEN_INFERENCE.tokenCountTotal, int(row.inputTokens + row.outputTokens))
      attributes.set(OPEN_INFERENCE.tokenCountCacheRead, int(row.cacheReadTokens))
      attributes.set(OPEN_INFERENCE.tokenCountCacheWrite, int(row.cacheWriteTokens))
      attributes.set(OPEN_INFERENCE.costTotal, double(row.costUsd))
    }
  }
  if (!row.ok) attributes.set(GEN_AI.errorType, string(ERROR_TYPE_OTHER))
  if (row.usageNotReported === true) attributes.set(CACHELAB.usageNotReported, bool(true))
  setSessionLabels(attributes, row)
  attributes.set(CACHELAB.route, string(row.route))
  attributes.set(CACHELAB.turn, int(row.turn))
  attributes.set(CACHELAB.step, int(row.step))
  attributes.set(CACHELAB.attempt, int(row.attempt))
  if (row.headerReason !== undefined) attributes.set(CACHELAB.headerReason, string(row.headerReason))
  attributes.set(CACHELAB.startsSeries, bool(row.startsSeries))
  attributes.set(CACHELAB.cold, bool(row.cold))
  attributes.set(CACHELAB.virtualTimeS, double(row.virtualTimeS))
  if (measured) {
    attributes.set(CACHELAB.uncachedTokens, int(row.uncachedTokens))
    if (row.hitRatio !== undefined) attributes.set(CACHELAB.hitRatio, double(row.hitRatio))
    attributes.set(CACHELAB.idealCacheReadTokens, int(row.idealCacheReadTokens))
    attributes.set(CACHELAB.lostTokens, int(row.lostTokens))
  }
  if (row.breakCause !== undefined) attributes.set(CACHELAB.breakCause, string(row.breakCause))
  if (row.breakNode !== undefined) attributes.set(CACHELAB.breakNode, string(row.breakNode))
  if (row.breakEventSeq !== undefined) attributes.set(CACHELAB.breakEventSeq, int(row.breakEventSeq))
  if (row.providerCause !== undefined) {
    attributes.set(CACHELAB.providerBreakCause, string(row.providerCause))
    attributes.set(CACHELAB.providerBreakLostTokens, int(row.providerLostTokens))
    attributes.set(CACHELAB.providerBreakLostUsd, double(row.providerLostUsd))
  }
  if (measured) {
    attributes.set(CACHELAB.costUsd, double(row.costUsd))
    attributes.set(CACHELAB.idealCostUsd, double(row.idealCostUsd))
  }
  if (row.predictedCacheReadTokens !== undefined)
    attributes.set(CACHELAB.predictedCacheReadTokens, int(row.predictedCacheReadTokens))
  if (row.predictedCacheWriteTokens !== undefined)
    attributes.set(CACHELAB.predictedCacheWriteTokens, int(row.predictedCacheWriteTokens))
  return attributes.list()
}

/**
 * A session root's attributes: the session's identity and summary. It carries no usage attribute, so a
 * backend that adds up a trace's tokens counts each request once.
 */
function rootAttributes(
  first: StepRow,
  summary: SummaryRow,
  conversationId: string,
  names: OtelNameSet,
): SpanAttribute[] {
  const attributes = attributeList()
  if (withGenAi(names)) attributes.set(GEN_AI.conversationId, string(conversationId))
  if (withOpenInference(names)) {
    attributes.set(OPEN_INFERENCE.spanKind, string(OPEN_INFERENCE_KIND.agent))
    attributes.set(OPEN_INFERENCE.sessionId, string(conversationId))
  }
  setSessionLabels(attributes, first)
  attributes.set(CACHELAB.sessionRequests, int(summary.requests))
  attributes.set(CACHELAB.sessionFailedAttempts, int(summary.failedAttempts))
  attributes.set(CACHELAB.sessionBreaks, int(summary.breaks))
  if (summary.hitRatioWarm !== undefined)
    attributes.set(CACHELAB.sessionHitRatioWarm, double(summary.hitRatioWarm))
  // A session none of whose requests reported usage has no tokens or cost to state.
  const unreported = summary.usageNotReported ?? 0
  if (unreported < summary.requests || summary.requests === 0) {
    attributes.set(CACHELAB.sessionLostTokens, int(summary.lostTokens))
    attributes.set(CACHELAB.sessionCostUsd, double(summary.costUsd))
  }
  if (unreported > 0) attributes.set(CACHELAB.sessionUsageNotReported, int(unreported))
  return attributes.list()
}

/** An attribute list in the order it is filled in, so the encoding is byte-stable. */
function attributeList(): { set: (key: string, value: AttributeValue) => void; list: () => SpanAttribute[] } {
  const entries: SpanAttribute[] = []
  return {
    set: (key, value) => {
      entries.push({ key, value })
    },
    list: () => entries,
  }
}

function hexHash(text: string, digits: number): string {
  return createHash('sha256').update(`cachelab\u0000${text}`).digest('hex').slice(0, digits)
}

/** Milliseconds as nanoseconds, rounded to the microsecond (virtual time is in fractions of seconds). */
function nanos(milliseconds: number): bigint {
  return BigInt(Math.round(milliseconds * 1000)) * 1000n
}

// ─── OTLP/HTTP JSON encoding ────────────────────────────────────────────────────────────────────────

/** An OTLP `AnyValue` in the JSON encoding: 64-bit integers as decimal strings, as proto3 JSON maps them. */
export type OtlpAnyValue =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean }

export interface OtlpKeyValue {
  key: string
  value: OtlpAnyValue
}

/** An OTLP span in the JSON encoding: hex ids, enum numbers, times as decimal strings of nanoseconds. */
export interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  /** 1 internal, 3 client (`SpanKind` of the OTLP protocol). */
  kind: number
  startTimeUnixNano: string
  endTimeUnixNano: string
  attributes: OtlpKeyValue[]
  /** `code` 0 unset, 2 error. */
  status: { code: number; message?: string }
}

/** An `ExportTraceServiceRequest`: the body of `POST /v1/traces` with `Content-Type: application/json`. */
export interface OtlpTraceRequest {
  resourceSpans: Array<{
    resource: { attributes: OtlpKeyValue[] }
    scopeSpans: Array<{ scope: { name: string }; spans: OtlpSpan[] }>
  }>
}

/** The spans as one OTLP export request: one resource (service `cachelab`), one scope. */
export function otlpTraceRequest(spans: readonly SpanRecord[]): OtlpTraceRequest {
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [otlpKeyValue({ key: RESOURCE.serviceName, value: string(CACHELAB_SERVICE) })],
        },
        scopeSpans: [{ scope: { name: CACHELAB_SERVICE }, spans: spans.map(otlpSpan) }],
      },
    ],
  }
}

/**
 * The request as one line of JSON: a file that `curl --data-binary @FILE …/v1/traces` posts as is, and
 * that the OpenTelemetry Collector's `otlpjsonfile` receiver (one request per line) reads.
 */
export function otlpJsonLine(spans: readonly SpanRecord[]): string {
  return `${JSON.stringify(otlpTraceRequest(spans))}\n`
}

function otlpSpan(span: SpanRecord): OtlpSpan {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(span.parentSpanId !== undefined ? { parentSpanId: span.parentSpanId } : {}),
    name: span.name,
    kind: span.kind === 'client' ? 3 : 1,
    startTimeUnixNano: span.startTimeUnixNano.toString(),
    endTimeUnixNano: span.endTimeUnixNano.toString(),
    attributes: span.attributes.map(otlpKeyValue),
    status: span.status.code === 'error' ? { code: 2, message: span.status.message } : { code: 0 },
  }
}

function otlpKeyValue(attribute: SpanAttribute): OtlpKeyValue {
  return { key: attribute.key, value: otlpAnyValue(attribute.value) }
}

function otlpAnyValue(value: AttributeValue): OtlpAnyValue {
  switch (value.type) {
    case 'string':
      return { stringValue: value.value }
    case 'int':
      return { intValue: String(value.value) }
    case 'double':
      return { doubleValue: value.value }
    case 'bool':
      return { boolValue: value.value }
    default: {
      const unreachable: never = value
      return unreachable
    }
  }
}

/** The labels that name a row's session (run, scenario, variant, provider), on a request's span and its session's. */
function setSessionLabels(
  attributes: { set: (key: string, value: AttributeValue) => void },
  row: StepRow,
): void {
  attributes.set(CACHELAB.runId, string(row.runId))
  attributes.set(CACHELAB.scenario, string(row.scenario))
  attributes.set(CACHELAB.variant, string(row.variant))
  attributes.set(CACHELAB.provider, string(row.provider))
}
