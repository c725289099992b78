// What the loopback server reads off one HTTP exchange — the wire API its path names, the usage and the
// model's answer its response carried, a failure in a few words, the session a bare request belongs to —
// and what a replay answers it with. Pure functions over the request and response texts.

import { isRecord } from '../../harness/json-fields.ts'
import { hashString } from '../../harness/random.ts'
import type { AssistantMessage, CompatibleProviderId, Usage } from '../../harness/types.ts'
import { parseAnthropicUsage } from '../anthropic.ts'
import { parseBedrockUsage } from '../bedrock.ts'
import { isBuiltInVendor, type Vendor } from '../catalog.ts'
import { compatibleProvider, speaksMessages } from '../compatible.ts'
import { parseCompatibleUsage } from '../compatible-chat.ts'
import { parseDeepSeekUsage } from '../deepseek.ts'
import { parseGeminiUsage } from '../gemini.ts'
import { parseOpenAIUsage } from '../openai-chat.ts'
import { geminiRejection } from '../sim/gemini.ts'
import type { CacheSimulators } from '../sim/index.ts'
import { type PreviousRequest, type Prompt, type Simulation, SimulatorRejection } from '../sim/types.ts'
import { compatibleApi, type WireApi } from '../types.ts'
import { parseJsonBody, parseJsonText } from '../wire/body-prefix.ts'
import { digestRequest } from '../wire/digest.ts'
import type { ReplayAnswers, ReplayStep } from '../wire/exchange.ts'
import { answerOf } from '../wire/output.ts'
import type { MockContext } from './context.ts'
import { decodeEventMessages, EVENT_STREAM_CONTENT_TYPE } from './event-stream.ts'
import { DEFAULT_REPLY, SESSION_HEADER } from './script.ts'

/** A body's JSON: an object (or array), else undefined (one definition: `parseJsonBody`). */
export function parseJson(body: Buffer): Record<string, unknown> | undefined {
  return parseJsonBody(body)
}

/** Match a request against the recording; a body the simulator cannot read goes to the handler as is. */
export function replayStep(
  replay: ReplayAnswers,
  context: MockContext,
  api: WireApi,
  session: string,
  body: Record<string, unknown>,
): ReplayStep | { kind: 'unreadable' } {
  let prompt: Prompt
  try {
    prompt = context.simulators.linearize(api, body)
  } catch {
    return { kind: 'unreadable' }
  }
  return replay.next(session, digestRequest(body, prompt))
}

/** The model's answer in a live response, for the capture to keep for replay. */
export function answerField(api: WireApi, text: string, contentType: string): { answer?: AssistantMessage } {
  const answer = answerOf(api, text, contentType)
  return answer === undefined ? {} : { answer }
}

/** An error answer in a vendor's own envelope: its body and the headers the vendor's SDK reads it by. */
export interface ApiError {
  body: Record<string, unknown>
  headers: Record<string, string>
}

/** Anthropic's error types by status (docs.claude.com/en/api/errors). */
const ANTHROPIC_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'overloaded_error',
  529: 'overloaded_error',
}

/** Bedrock's exception names by status (the Converse API reference's Errors section). */
const BEDROCK_TYPES: Readonly<Record<number, string>> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  413: 'ValidationException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
}

/**
 * An error in the vendor's own envelope, for answers the server gives before any handler (unknown paths,
 * bodies too large or too deep, shutdown, replay): Anthropic `{type: "error", error: {type, message}}`,
 * Google `{error: {code, message, status}}`, Bedrock `{message}` with its `x-amzn-errortype` header, and
 * the OpenAI envelope `{error: {message, type, param, code}}` for OpenAI, DeepSeek and every compatible
 * provider. `type`, when given, is the vendor's own name for the error (a replayed failure's); otherwise
 * the vendor's name for the status is used.
 */
export function apiError(vendor: Vendor, status: number, message: string, type?: string): ApiError {
  switch (messagesProvider(vendor) ? 'anthropic' : vendor) {
    case 'anthropic':
      return {
        body: { type: 'error', error: { type: type ?? ANTHROPIC_TYPES[status] ?? 'api_error', message } },
        headers: {},
      }
    case 'gemini':
      return { body: geminiRejection(status, message).body, headers: {} }
    case 'bedrock': {
      const exception = type ?? BEDROCK_TYPES[status] ?? 'InternalServerException'
      return {
        body: { message },
        headers: { 'x-amzn-errortype': `${exception}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
      }
    }
    default:
      return {
        body: {
          error: {
            message,
            type: type ?? (status >= 500 ? 'server_error' : 'invalid_request_error'),
            param: null,
            code: null,
          },
        },
        headers: {},
      }
  }
}

/** The wire API a path names under its vendor's prefix, if it names one. */
export function apiOfPath(vendor: Vendor, path: string): WireApi | undefined {
  const route = path.split('?')[0] ?? ''
  if (route.endsWith('/messages'))
    return vendor === 'anthropic'
      ? 'anthropic-messages'
      : messagesProvider(vendor)
        ? compatibleApi(vendor as CompatibleProviderId, 'messages')
        : undefined
  if (route.endsWith('/chat/completions'))
    return vendor === 'deepseek'
      ? 'deepseek-chat'
      : vendor === 'openai'
        ? 'openai-chat'
        : vendor === 'anthropic' || vendor === 'bedrock' || vendor === 'gemini'
          ? undefined
          : messagesProvider(vendor)
            ? undefined
            : compatibleApi(vendor)
  if (route.endsWith('/responses')) return vendor === 'openai' ? 'openai-responses' : undefined
  if (/\/models\/[^/]+:(stream)?[gG]enerateContent$/.test(route))
    return vendor === 'gemini' ? 'gemini-generate' : undefined
  if (CONVERSE_PATH.test(route)) return vendor === 'bedrock' ? 'bedrock-converse' : undefined
  return undefined
}

/** Bedrock's Converse and ConverseStream paths; the model id, URL-encoded, is the first group. */
const CONVERSE_PATH = /\/model\/([^/]+)\/converse(?:-stream)?$/

/**
 * A request body in cachelab's view of its API: a Gemini body gains the model and streaming its URL
 * names (`…/models/{model}:streamGenerateContent`), a Bedrock Converse body the model id its path names
 * (`…/model/{modelId}/converse`, as the mock's handler reads it); every other body is its JSON as is.
 */
export function bodyInView(
  api: WireApi,
  path: string,
  body: Record<string, unknown>,
): Record<string, unknown> {
  if (api === 'bedrock-converse') {
    const encoded = CONVERSE_PATH.exec(path.split('?')[0] ?? '')?.[1]
    if (encoded === undefined) return body
    let modelId = encoded
    try {
      modelId = decodeURIComponent(encoded)
    } catch {
      // A malformed escape: the id as the path spells it.
    }
    return { modelId, ...body }
  }
  if (api !== 'gemini-generate') return body
  const match = /\/models\/([^/:?]+):(\w+)/.exec(path)
  if (match === null) return body
  const model = decodeURIComponent(match[1] ?? '')
  return { ...body, model, ...(match[2] === 'streamGenerateContent' ? { stream: true } : {}) }
}

/**
 * The simulator's prediction of a request the real provider answered: the same body on a predictor of
 * one account's caches, with the session's previous request. None when the simulator would refuse it.
 */
export function predict(
  predictor: CacheSimulators,
  api: WireApi,
  body: Record<string, unknown>,
  at: number,
  previous: PreviousRequest | undefined,
): Simulation | undefined {
  try {
    return predictor.simulate(api, {
      body,
      at,
      output: DEFAULT_REPLY,
      ...(previous !== undefined ? { previous } : {}),
    })
  } catch (error) {
    if (error instanceof SimulatorRejection) return undefined
    throw error
  }
}

/** A failed response in a few words: its status and the provider's error type, never its message text. */
export function errorOf(status: number, text: string): string {
  const body = parseJsonText(text)
  const error = body?.error as { type?: unknown } | undefined
  // Google's envelope names the error by `status` (`INVALID_ARGUMENT`), the others by `type`.
  const googleStatus = (error as { status?: unknown } | undefined)?.status
  const type =
    typeof error?.type === 'string'
      ? error.type
      : typeof body?.type === 'string'
        ? body.type
        : typeof googleStatus === 'string'
          ? googleStatus
          : undefined
  return type === undefined ? `HTTP ${status}` : `HTTP ${status} ${type}`
}

/**
 * Which session a request belongs to: the `x-cachelab-session` header, else `prompt_cache_key`, else a
 * hash of the request's first message (requests that share their start are one conversation).
 */
export function sessionOf(headers: Headers, body: Record<string, unknown> | undefined): string {
  const header = headers.get(SESSION_HEADER)
  if (header !== null && header !== '') return header
  if (typeof body?.prompt_cache_key === 'string') return body.prompt_cache_key
  const first = Array.isArray(body?.messages)
    ? body.messages[0]
    : Array.isArray(body?.input)
      ? body.input[0]
      : Array.isArray(body?.contents)
        ? body.contents[0]
        : body?.input
  const system = body?.system ?? body?.instructions ?? body?.systemInstruction ?? null
  const anchor = JSON.stringify([system, first ?? null])
  return `prefix-${hashString(anchor).toString(16).padStart(8, '0')}`
}

/**
 * An answer's bytes as the text its usage and output are read from, and the content type to read it as:
 * UTF-8 as sent, except AWS event-stream framing (ConverseStream), whose messages become server-sent events
 * (`event:` the event or exception type, `data:` the JSON payload) so that every stream is read one way.
 */
export function answerText(bytes: Uint8Array, contentType: string): { text: string; contentType: string } {
  if (!contentType.includes(EVENT_STREAM_CONTENT_TYPE))
    return {
      text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
      contentType,
    }
  const events = decodeEventMessages(bytes).map((message) => {
    // An exception names its type; an error message (`:message-type` error) its code.
    const type =
      message.headers[':event-type'] ??
      `exception:${message.headers[':exception-type'] ?? message.headers[':error-code'] ?? ''}`
    return `event: ${type}\ndata: ${message.payload}\n\n`
  })
  return { text: events.join(''), contentType: 'text/event-stream' }
}

/**
 * The final usage object of a response: the body's `usage` (or Responses' `response.usage`), or from a
 * stream the last usage seen, Anthropic's `message_delta` counters overwriting its `message_start` ones.
 */
export function usageFromResponse(text: string, contentType: string): Record<string, unknown> | undefined {
  if (!contentType.includes('text/event-stream')) {
    const body = parseJsonText(text)
    return usageIn(body)
  }
  let usage: Record<string, unknown> | undefined
  for (const frame of text.split('\n\n')) {
    const data = frame
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n')
    if (data === '' || data === '[DONE]') continue
    const event = parseJsonText(data)
    if (event === undefined) continue
    const found =
      usageIn(event) ??
      usageIn(event.message as Record<string, unknown> | undefined) ??
      usageIn(event.response as Record<string, unknown> | undefined)
    if (found === undefined) continue
    usage = { ...usage, ...Object.fromEntries(Object.entries(found).filter(([, value]) => value !== null)) }
  }
  return usage
}

/**
 * A provider's name for an error, when it is one: a word or a dotted or colon path of at most 64
 * characters, or a whole number (OpenRouter's `code` is the HTTP status it stands for).
 */
function errorName(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : undefined
  return typeof value === 'string' && /^[\w.:-]{1,64}$/.test(value) ? value : undefined
}

/** An `error` object's name: its `type`, Google's `status`, or its `code`. */
function nameOf(error: Record<string, unknown>): string | undefined {
  return errorName(error.type) ?? errorName(error.status) ?? errorName(error.code)
}

/**
 * Why an answer that came with a 200 failed inside its body, in a few words and never the message text,
 * or undefined when nothing in it says it failed. The client's SDK throws on each (or finds no answer),
 * so the attempt failed and gave no usage, whatever came before the failure. A stream's in-band failure:
 * - Anthropic: an `error` event, `{type: "error", error: {type}}`;
 * - Responses: an `error` event (`{type: "error", code}`) or `response.failed` (`response.error.code`);
 * - Chat Completions and Gemini: a chunk holding an `error` object (`type`, or Google's `status`);
 * - ConverseStream: an exception message (`answerText` names it `exception:<type>`).
 * A JSON body fails with an `error` object: OpenRouter answers a failure after the model started with a
 * 200 and `{error: {code, message}}`, a background Responses response with `status: "failed"` holds
 * one, and Gemini's JSON-array stream may end with one.
 */
export function answerFailureOf(text: string, contentType: string): string | undefined {
  if (contentType.includes('text/event-stream')) return streamFailure(text)
  if (!contentType.includes('json')) return undefined
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return undefined
  }
  for (const value of Array.isArray(body) ? body : [body])
    if (isRecord(value) && isRecord(value.error)) {
      const name = nameOf(value.error)
      return name === undefined ? 'error in the answer' : `error in the answer: ${name}`
    }
  return undefined
}

function streamFailure(text: string): string | undefined {
  for (const frame of text.split(/\r?\n\r?\n/)) {
    let event = ''
    const data: string[] = []
    for (const line of frame.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim()
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart())
    }
    if (event.startsWith('exception:')) return failedWith(errorName(event.slice(10)))
    const payload = data.length === 0 ? undefined : parseJsonText(data.join('\n'))
    if (payload === undefined) continue
    if (payload.type === 'response.failed') {
      const response = isRecord(payload.response) ? payload.response : {}
      return failedWith(isRecord(response.error) ? errorName(response.error.code) : undefined)
    }
    const error = isRecord(payload.error) ? payload.error : undefined
    if (payload.type === 'error') return failedWith(errorName(error?.type) ?? errorName(payload.code))
    if (error !== undefined) return failedWith(nameOf(error))
  }
  return undefined
}

function failedWith(name: string | undefined): string {
  return name === undefined ? 'error event in the stream' : `error event in the stream: ${name}`
}

function usageIn(value: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  // Gemini reports `usageMetadata`; the others `usage`.
  const usage = value?.usage ?? value?.usageMetadata
  return typeof usage === 'object' && usage !== null ? (usage as Record<string, unknown>) : undefined
}

/** Whether a vendor is a compatible provider speaking Anthropic's Messages API. */
function messagesProvider(vendor: Vendor): boolean {
  return !isBuiltInVendor(vendor) && speaksMessages(compatibleProvider(vendor))
}

/** Normalize with the vendor's own parser (both OpenAI wire APIs share one). */
export function normalize(vendor: Vendor, raw: Record<string, unknown>): Usage {
  if (messagesProvider(vendor)) return parseAnthropicUsage(raw)
  switch (vendor) {
    case 'anthropic':
      return parseAnthropicUsage(raw)
    case 'deepseek':
      return parseDeepSeekUsage(raw)
    case 'openai':
      return parseOpenAIUsage(raw)
    case 'bedrock':
      return parseBedrockUsage(raw)
    case 'gemini':
      return parseGeminiUsage(raw)
    default:
      return parseCompatibleUsage(compatibleProvider(vendor).cache.usage, raw)
  }
}
