// Mock Anthropic Messages: usage computed by the cache simulator over the request as received, in the
// Message body or, streamed, as named SSE events (full usage on message_start, cumulative final
// counters on message_delta). Reasoning leads the content as a signed thinking block (or a redacted
// one); its tokens are part of output_tokens. A request with `diagnostics` gets the cache diagnostics
// against the message it names (diagnostics.ts), on the Message and on message_start. Errors take
// Anthropic's shape: {type: "error", error, request_id}.

import { createHash } from 'node:crypto'
import { type SimCounts, type Simulation, SimulatorRejection } from '../sim/types.ts'
import type { WireApi } from '../types.ts'
import type { Answer } from './answer.ts'
import type { MockContext } from './context.ts'
import {
  type AnthropicDiagnostics,
  anthropicDiagnosis,
  anthropicSettings,
  fingerprintOf,
} from './diagnostics.ts'
import { type Fault, retryHeaders } from './faults.ts'
import type { StopReason } from './reply.ts'
import { jsonAnswer, type MockAnswer, type MockHttpRequest, readMockRequest, sseAnswer } from './request.ts'
import { type SseFrame, sseStream, textPieces } from './sse.ts'

/** The usage object of a Message (and of message_start). */
export function anthropicUsage(counts: SimCounts, output: number): Record<string, unknown> {
  return {
    input_tokens: counts.uncached,
    cache_creation_input_tokens: counts.write,
    cache_read_input_tokens: counts.read,
    cache_creation: {
      ephemeral_5m_input_tokens: counts.write5m,
      ephemeral_1h_input_tokens: counts.write1h,
    },
    output_tokens: output,
    service_tier: 'standard',
  }
}

/** An Anthropic error response: the body shape and the `request-id` header the API sends. */
function errorResponse(
  context: MockContext,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): MockAnswer {
  const requestId = context.nextId('req_sim')
  return jsonAnswer(
    status,
    { type: 'error', error: { type, message }, request_id: requestId },
    { 'request-id': requestId, ...headers },
  )
}

/** A refused request: the API's error body with the request id the API adds. */
function rejectionResponse(context: MockContext, rejection: SimulatorRejection): MockAnswer {
  const requestId = context.nextId('req_sim')
  return jsonAnswer(
    rejection.status,
    { ...rejection.body, request_id: requestId },
    { 'request-id': requestId },
  )
}

/** The HTTP response of a fault that happens before any output. */
function faultResponse(fault: Fault, context: MockContext): MockAnswer | undefined {
  switch (fault.kind) {
    case 'rate-limit':
      return errorResponse(
        context,
        429,
        'rate_limit_error',
        'This request would exceed the rate limit for your organization. Please retry later.',
        retryHeaders(fault),
      )
    case 'overloaded':
      return errorResponse(context, 529, 'overloaded_error', 'Overloaded')
    case 'server-error':
      return errorResponse(context, 500, 'api_error', 'Internal server error')
    case 'stream-cut':
    case 'stream-error':
      return undefined
  }
}

/** The `stop_reason` of a stop: a content filter stops the way a refusal does (`refusal`). */
function stopReasonOf(stop: StopReason): string {
  switch (stop) {
    case 'end':
      return 'end_turn'
    case 'tool-use':
      return 'tool_use'
    case 'max-tokens':
      return 'max_tokens'
    case 'content-filter':
    case 'refusal':
      return 'refusal'
    case 'pause-turn':
      return 'pause_turn'
  }
}

/** A deterministic stand-in for the signature the API puts on a thinking block it produced. */
export function thinkingSignature(thinking: string): string {
  return createHash('sha256').update(`cachelab-thinking\u0000${thinking}`).digest('base64')
}

/** The tool input a call's arguments stand for (arguments that are not a JSON object become `{}`). */
function toolInput(argumentsText: string): unknown {
  try {
    const value: unknown = JSON.parse(argumentsText)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}
  } catch {
    return {}
  }
}

/** The input JSON a tool_use block streams: the call's arguments as written. */
function streamedInput(block: Record<string, unknown>, answer: Answer): string {
  const call = answer.message.content.find((part) => part.type === 'tool-call' && part.callId === block.id)
  return call?.type === 'tool-call' ? call.arguments : ''
}

/**
 * The response content blocks of an answer: its thinking (omitted text when the request says
 * `display: "omitted"`, the signature kept), then its text and tool calls.
 */
function contentBlocks(answer: Answer, body: Record<string, unknown>): Array<Record<string, unknown>> {
  const blocks: Array<Record<string, unknown>> = []
  const reasoning = answer.reasoning
  if (reasoning !== undefined) {
    const display = (body.thinking as { display?: unknown } | undefined)?.display
    blocks.push(
      reasoning.redacted
        ? {
            type: 'redacted_thinking',
            data: Buffer.from(`cachelab-redacted:${reasoning.text}`, 'utf8').toString('base64'),
          }
        : {
            type: 'thinking',
            thinking: display === 'omitted' ? '' : reasoning.text,
            signature: thinkingSignature(reasoning.text),
          },
    )
  }
  for (const block of answer.message.content) {
    blocks.push(
      block.type === 'text'
        ? { type: 'text', text: block.text }
        : { type: 'tool_use', id: block.callId, name: block.name, input: toolInput(block.arguments) },
    )
  }
  return blocks
}

/** The Claude API's wire: the one that answers cache diagnostics. */
const API = 'anthropic-messages'

/**
 * The cache diagnostics of a request that carries `diagnostics` (Claude API only: not an
 * Anthropic-compatible provider's), against the message its `previous_message_id` names; the request's own
 * fingerprint is kept under its message id, as the API keeps one only for a request that includes the
 * object. Null when it names no message (the first turn opts in) or nothing diverged.
 */
function diagnose(
  context: MockContext,
  id: string,
  body: Record<string, unknown>,
  headers: Headers,
  simulation: Simulation,
  at: number,
): AnthropicDiagnostics {
  const asked = body.diagnostics
  if (typeof asked !== 'object' || asked === null) return null
  const betas = (headers.get('anthropic-beta') ?? '').split(',').map((beta) => beta.trim())
  const model = typeof body.model === 'string' ? body.model : ''
  const fingerprint = fingerprintOf(
    model,
    anthropicSettings(body, betas),
    simulation.prompt,
    simulation.trace.carry.tokens,
    at,
  )
  const previousId = (asked as { previous_message_id?: unknown }).previous_message_id
  const diagnostics =
    typeof previousId === 'string'
      ? anthropicDiagnosis(context.fingerprints.find(API, previousId, at), fingerprint)
      : null
  context.fingerprints.remember(API, id, fingerprint)
  return diagnostics
}

/** Handle one Messages request: Anthropic's, or (`api`) an Anthropic-compatible provider's. */
export async function handleMessages(
  request: MockHttpRequest,
  context: MockContext,
  api: WireApi = 'anthropic-messages',
): Promise<MockAnswer> {
  const parsed = await readMockRequest(request, context)
  if ('problem' in parsed) return errorResponse(context, 400, 'invalid_request_error', parsed.problem)
  const { body } = parsed
  const invalid = (message: string) => errorResponse(context, 400, 'invalid_request_error', message)
  if (typeof body.model !== 'string' || body.model === '') return invalid('model: Field required')
  // Its type and range are the validation's (validation/anthropic.ts), which lenient mocks skip.
  if (body.max_tokens === undefined || body.max_tokens === null) return invalid('max_tokens: Field required')
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return invalid('messages: at least one message is required')

  const refused = context.refuse(api, parsed, request.headers)
  if (refused !== undefined) return rejectionResponse(context, refused)
  const early = context.failEarly(api, parsed, (fault) => faultResponse(fault, context))
  if (early !== undefined) return early
  const answer = context.answer(api, parsed)
  const simulation = context.simulate(api, parsed, answer)
  if (simulation instanceof SimulatorRejection) return rejectionResponse(context, simulation)
  // Known only now: a request the simulator refused above never uses up a fault inside its answer.
  const fault = context.answerFault(parsed)

  const id = context.nextId('msg_sim')
  const model = body.model
  const content = contentBlocks(answer, body)
  const stopReason = stopReasonOf(answer.stop)
  const usage = anthropicUsage(simulation.counts, simulation.counts.output)
  const headers = { 'request-id': context.nextId('req_sim') }
  // The Claude API's Message always has the field; an Anthropic-compatible provider's has none.
  const diagnostics =
    api === API ? { diagnostics: diagnose(context, id, body, request.headers, simulation, parsed.at) } : {}

  if (body.stream !== true) {
    if (fault?.kind === 'stream-cut' || fault?.kind === 'stream-error')
      return errorResponse(context, 500, 'api_error', 'Internal server error')
    const message = {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
      ...diagnostics,
    }
    return jsonAnswer(200, message, headers)
  }

  const frame = (event: string, data: Record<string, unknown>): SseFrame => ({
    event,
    data: JSON.stringify({ type: event, ...data }),
  })
  const frames: SseFrame[] = [
    frame('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: anthropicUsage(simulation.counts, 1),
        ...diagnostics,
      },
    }),
  ]
  for (const [index, block] of content.entries()) {
    switch (block.type) {
      case 'thinking': {
        frames.push(
          frame('content_block_start', {
            index,
            content_block: { type: 'thinking', thinking: '', signature: '' },
          }),
        )
        if (index === 0) frames.push(frame('ping', {}))
        for (const piece of textPieces(String(block.thinking)))
          frames.push(
            frame('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } }),
          )
        frames.push(
          frame('content_block_delta', {
            index,
            delta: { type: 'signature_delta', signature: block.signature },
          }),
        )
        break
      }
      case 'redacted_thinking':
        frames.push(frame('content_block_start', { index, content_block: block }))
        if (index === 0) frames.push(frame('ping', {}))
        break
      case 'text':
        frames.push(frame('content_block_start', { index, content_block: { type: 'text', text: '' } }))
        if (index === 0) frames.push(frame('ping', {}))
        for (const piece of textPieces(String(block.text)))
          frames.push(frame('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }))
        break
      default: {
        frames.push(frame('content_block_start', { index, content_block: { ...block, input: {} } }))
        if (index === 0) frames.push(frame('ping', {}))
        for (const piece of textPieces(streamedInput(block, answer)))
          frames.push(
            frame('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } }),
          )
      }
    }
    frames.push(frame('content_block_stop', { index }))
  }
  if (fault?.kind === 'stream-error') {
    frames.push(frame('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }))
  } else {
    frames.push(
      frame('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: {
          input_tokens: simulation.counts.uncached,
          cache_creation_input_tokens: simulation.counts.write,
          cache_read_input_tokens: simulation.counts.read,
          output_tokens: simulation.counts.output,
        },
      }),
      frame('message_stop', {}),
    )
  }
  return sseAnswer(
    sseStream(frames, fault?.kind === 'stream-cut' ? { cutAfter: fault.afterFrames } : {}),
    headers,
  )
}
