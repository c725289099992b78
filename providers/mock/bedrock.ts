// Mock Bedrock Converse and ConverseStream (`/model/{modelId}/converse`, `/converse-stream`): usage
// computed by the cache simulator over the request as received (the body with the path's `modelId`,
// the SDK's command input), answered as a Converse JSON body or as AWS event-stream messages ending in
// `metadata` with the usage. Errors are Bedrock's: a `{message}` body, the type in `x-amzn-ErrorType`.
// Any signature is accepted: SigV4 or a bearer key, the mock reads neither.

import { type SimCounts, SimulatorRejection } from '../sim/types.ts'
import type { Answer } from './answer.ts'
import type { MockContext } from './context.ts'
import { type EventMessage, eventMessage, eventStream, exceptionMessage } from './event-stream.ts'
import type { Fault } from './faults.ts'
import type { StopReason } from './reply.ts'
import { jsonAnswer, type MockAnswer, type MockHttpRequest, readMockRequest } from './request.ts'
import { textPieces } from './sse.ts'

/** The Converse usage object: `inputTokens` excludes cache reads and writes (notes/2026-11-30-bedrock-usage.md). */
export function bedrockUsage(counts: SimCounts): Record<string, unknown> {
  const details = [
    ...(counts.write1h > 0 ? [{ ttl: '1h', inputTokens: counts.write1h }] : []),
    ...(counts.write5m > 0 ? [{ ttl: '5m', inputTokens: counts.write5m }] : []),
  ]
  return {
    inputTokens: counts.uncached,
    outputTokens: counts.output,
    totalTokens: counts.uncached + counts.read + counts.write + counts.output,
    cacheReadInputTokens: counts.read,
    cacheWriteInputTokens: counts.write,
    ...(details.length > 0 ? { cacheDetails: details } : {}),
  }
}

/** A Bedrock error: the `{message}` body and the error type header the SDK reads it by. */
function errorResponse(context: MockContext, status: number, type: string, message: string): MockAnswer {
  return jsonAnswer(
    status,
    { message },
    {
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': context.nextId('req-sim-'),
    },
  )
}

/** The exception type of a refusal by its status (the simulator's refusals are all 400s). */
function rejectionResponse(context: MockContext, rejection: SimulatorRejection): MockAnswer {
  const message = String(rejection.body.message ?? rejection.message)
  return errorResponse(context, rejection.status, 'ValidationException', message)
}

/** The HTTP response of a fault that happens before any output. */
function faultResponse(fault: Fault, context: MockContext): MockAnswer | undefined {
  switch (fault.kind) {
    case 'rate-limit':
      return errorResponse(
        context,
        429,
        'ThrottlingException',
        'Too many requests, please wait before trying again.',
      )
    case 'overloaded':
      return errorResponse(
        context,
        503,
        'ServiceUnavailableException',
        'Bedrock is unable to process your request.',
      )
    case 'server-error':
      return errorResponse(
        context,
        500,
        'InternalServerException',
        'The server encountered an internal error.',
      )
    case 'stream-cut':
    case 'stream-error':
      return undefined
  }
}

/** Converse's `stopReason` of a stop. */
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
      return 'content_filtered'
    case 'pause-turn':
      return 'end_turn'
  }
}

function toolInput(argumentsText: string): unknown {
  try {
    const value: unknown = JSON.parse(argumentsText)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}
  } catch {
    return {}
  }
}

/** The Converse content blocks of an answer: its reasoning (signed), then its text and tool calls. */
function contentBlocks(answer: Answer): Array<Record<string, unknown>> {
  const blocks: Array<Record<string, unknown>> = []
  if (answer.reasoning !== undefined) {
    const text = answer.reasoning.text
    blocks.push({
      reasoningContent: answer.reasoning.redacted
        ? { redactedContent: Buffer.from(`cachelab-redacted:${text}`, 'utf8').toString('base64') }
        : { reasoningText: { text, signature: Buffer.from(`cachelab:${text}`).toString('base64') } },
    })
  }
  for (const part of answer.message.content) {
    blocks.push(
      part.type === 'text'
        ? { text: part.text }
        : { toolUse: { toolUseId: part.callId, name: part.name, input: toolInput(part.arguments) } },
    )
  }
  return blocks
}

/** The stream's events for the answer's content blocks. */
function blockEvents(blocks: ReadonlyArray<Record<string, unknown>>, answer: Answer): EventMessage[] {
  const events: EventMessage[] = []
  for (const [contentBlockIndex, block] of blocks.entries()) {
    const delta = (value: Record<string, unknown>) =>
      events.push(eventMessage('contentBlockDelta', { contentBlockIndex, delta: value }))
    if (typeof block.text === 'string') {
      for (const piece of textPieces(block.text)) delta({ text: piece })
    } else if (block.toolUse !== undefined) {
      const use = block.toolUse as { toolUseId: string; name: string }
      events.push(
        eventMessage('contentBlockStart', {
          contentBlockIndex,
          start: { toolUse: { toolUseId: use.toolUseId, name: use.name } },
        }),
      )
      const call = answer.message.content.find(
        (part) => part.type === 'tool-call' && part.callId === use.toolUseId,
      )
      for (const piece of textPieces(call?.type === 'tool-call' ? call.arguments : ''))
        delta({ toolUse: { input: piece } })
    } else {
      const reasoning = block.reasoningContent as Record<string, Record<string, string> | string>
      const text = reasoning.reasoningText
      if (typeof text === 'object') {
        for (const piece of textPieces(text.text ?? '')) delta({ reasoningContent: { text: piece } })
        delta({ reasoningContent: { signature: text.signature } })
      } else delta({ reasoningContent: { redactedContent: reasoning.redactedContent } })
    }
    events.push(eventMessage('contentBlockStop', { contentBlockIndex }))
  }
  return events
}

/** Handle one Converse (`stream` false) or ConverseStream request for the path's model id. */
export async function handleConverse(
  request: MockHttpRequest,
  context: MockContext,
  modelId: string,
  stream: boolean,
): Promise<MockAnswer> {
  const parsed = await readMockRequest(request, context)
  if ('problem' in parsed) return errorResponse(context, 400, 'ValidationException', parsed.problem)
  // The command input the SDK was given: the model id travels in the path, the rest in the body.
  parsed.body = { modelId, ...parsed.body }
  const { body } = parsed
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return errorResponse(
      context,
      400,
      'ValidationException',
      'The messages field is required and must contain at least one message.',
    )

  const refused = context.refuse('bedrock-converse', parsed, request.headers)
  if (refused !== undefined) return rejectionResponse(context, refused)
  const early = context.failEarly('bedrock-converse', parsed, (fault) => faultResponse(fault, context))
  if (early !== undefined) return early
  const answer = context.answer('bedrock-converse', parsed)
  const simulation = context.simulate('bedrock-converse', parsed, answer)
  if (simulation instanceof SimulatorRejection) return rejectionResponse(context, simulation)
  const fault = context.answerFault(parsed)

  const content = contentBlocks(answer)
  const stopReason = stopReasonOf(answer.stop)
  const usage = bedrockUsage(simulation.counts)
  const requestId = context.nextId('req-sim-')
  const metrics = { latencyMs: 100 }

  if (!stream) {
    if (fault?.kind === 'stream-cut' || fault?.kind === 'stream-error')
      return errorResponse(
        context,
        500,
        'InternalServerException',
        'The server encountered an internal error.',
      )
    return jsonAnswer(
      200,
      { output: { message: { role: 'assistant', content } }, stopReason, usage, metrics },
      { 'x-amzn-requestid': requestId },
    )
  }

  const events: EventMessage[] = [
    eventMessage('messageStart', { role: 'assistant' }),
    ...blockEvents(content, answer),
  ]
  if (fault?.kind === 'stream-error') {
    events.push(exceptionMessage('serviceUnavailableException', 'Bedrock is unable to process your request.'))
  } else {
    events.push(eventMessage('messageStop', { stopReason }), eventMessage('metadata', { usage, metrics }))
  }
  return {
    status: 200,
    headers: { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': requestId },
    body: eventStream(events, fault?.kind === 'stream-cut' ? { cutAfter: fault.afterFrames } : {}),
  }
}
