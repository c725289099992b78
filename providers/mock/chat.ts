// Mock Chat Completions for OpenAI and DeepSeek: usage computed by the cache simulator over the request
// as received, returned in the response body or, streamed, in a final chunk with empty `choices` when
// `stream_options.include_usage` is set. DeepSeek adds its own hit and miss fields and sends reasoning as
// `reasoning_content`; OpenAI sends none, only its tokens in usage. A compatible provider answers in the
// OpenAI shape with the usage fields its catalog entry names, routed by the key it reads.

import type { AssistantMessage, CompatibleProviderId } from '../../harness/types.ts'
import { compatibleProvider } from '../compatible.ts'
import { compatibleWireUsage } from '../compatible-chat.ts'
import { type SimCounts, SimulatorRejection } from '../sim/types.ts'
import { compatibleApi, type WireApi } from '../types.ts'
import type { Answer } from './answer.ts'
import { EPOCH_SECONDS, type MockContext } from './context.ts'
import { type Fault, retryHeaders } from './faults.ts'
import type { StopReason } from './reply.ts'
import { jsonAnswer, type MockAnswer, type MockHttpRequest, readMockRequest, sseAnswer } from './request.ts'
import { type SseFrame, sseStream, textPieces } from './sse.ts'

/** The vendors that answer Chat Completions. */
type Vendor = 'openai' | 'deepseek' | CompatibleProviderId

/** The usage object the vendor's Chat Completions API returns. */
export function chatUsage(
  vendor: Vendor,
  counts: SimCounts,
  reportsWrites: boolean,
): Record<string, unknown> {
  const base = {
    prompt_tokens: counts.input,
    completion_tokens: counts.output,
    total_tokens: counts.input + counts.output,
  }
  if (vendor !== 'openai' && vendor !== 'deepseek')
    return compatibleWireUsage(compatibleProvider(vendor), counts)
  if (vendor === 'deepseek') {
    return {
      ...base,
      prompt_tokens_details: { cached_tokens: counts.read },
      ...(counts.reasoning !== undefined
        ? { completion_tokens_details: { reasoning_tokens: counts.reasoning } }
        : {}),
      prompt_cache_hit_tokens: counts.read,
      prompt_cache_miss_tokens: counts.input - counts.read,
    }
  }
  return {
    ...base,
    prompt_tokens_details: {
      cached_tokens: counts.read,
      audio_tokens: 0,
      ...(reportsWrites ? { cache_write_tokens: counts.write } : {}),
    },
    completion_tokens_details: {
      reasoning_tokens: counts.reasoning ?? 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
}

function errorBody(message: string, type: string, code: string | null) {
  return { error: { message, type, param: null, code } }
}

/** The HTTP response of a fault that happens before any output. */
export function chatFaultResponse(fault: Fault): MockAnswer | undefined {
  switch (fault.kind) {
    case 'rate-limit':
      return jsonAnswer(
        429,
        errorBody('Rate limit reached for requests.', 'requests', 'rate_limit_exceeded'),
        retryHeaders(fault),
      )
    case 'overloaded':
      return jsonAnswer(503, errorBody('The server is overloaded or not ready yet.', 'server_error', null))
    case 'server-error':
      return jsonAnswer(
        500,
        errorBody('The server had an error while processing your request.', 'server_error', null),
      )
    case 'stream-cut':
    case 'stream-error':
      return undefined
  }
}

function invalid(message: string, param: string | null = null): MockAnswer {
  return jsonAnswer(400, { error: { message, type: 'invalid_request_error', param, code: null } })
}

/** The `finish_reason` of a stop: Chat has no refusal or pause reason (a refusal is the message's `refusal`). */
function finishReason(stop: StopReason): string {
  switch (stop) {
    case 'end':
    case 'refusal':
    case 'pause-turn':
      return 'stop'
    case 'tool-use':
      return 'tool_calls'
    case 'max-tokens':
      return 'length'
    case 'content-filter':
      return 'content_filter'
  }
}

function replyParts(vendor: Vendor, answer: Answer) {
  const output: AssistantMessage = answer.message
  const text = output.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
  const calls = output.content.flatMap((block) =>
    block.type === 'tool-call'
      ? [
          {
            id: block.callId,
            type: 'function' as const,
            function: { name: block.name, arguments: block.arguments },
          },
        ]
      : [],
  )
  // OpenAI puts a refusal in its own field; DeepSeek (and a compatible provider) has none: it is the content.
  const refusal = vendor === 'openai' && answer.stop === 'refusal' ? text : undefined
  return {
    text: refusal === undefined ? text : '',
    refusal,
    calls,
    reasoning: vendor === 'deepseek' ? answer.reasoning?.text : undefined,
    finish: finishReason(answer.stop),
  }
}

/** Handle one Chat Completions request for `vendor`. */
export async function handleChat(
  vendor: Vendor,
  request: MockHttpRequest,
  context: MockContext,
): Promise<MockAnswer> {
  const parsed = await readMockRequest(request, context)
  if ('problem' in parsed) return invalid(parsed.problem)
  const { body, at } = parsed
  if (typeof body.model !== 'string' || body.model === '')
    return invalid('you must provide a model parameter', 'model')
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return invalid("Invalid 'messages': empty array. Expected an array with minimum length 1.", 'messages')
  }
  const api: WireApi =
    vendor === 'openai' ? 'openai-chat' : vendor === 'deepseek' ? 'deepseek-chat' : compatibleApi(vendor)
  const routing =
    vendor === 'openai' || vendor === 'deepseek' ? undefined : compatibleProvider(vendor).cache.routing
  if (routing?.kind === 'header') {
    // The routing header is not in the body the simulator sees; it travels beside it.
    const key = request.headers.get(routing.name)
    if (key !== null && key !== '') parsed.routingKey = key
  }
  const refused = context.refuse(api, parsed, request.headers)
  if (refused !== undefined) return jsonAnswer(refused.status, refused.body)
  const early = context.failEarly(api, parsed, chatFaultResponse)
  if (early !== undefined) return early
  const answer = context.answer(api, parsed)
  const simulation = context.simulate(api, parsed, answer)
  if (simulation instanceof SimulatorRejection) return jsonAnswer(simulation.status, simulation.body)
  // Known only now: a request the simulator refused above never uses up a fault inside its answer.
  const fault = context.answerFault(parsed)
  const usage = chatUsage(
    vendor,
    simulation.counts,
    vendor === 'openai' && context.simulators.openai.reportsWrites(body.model),
  )
  const id = context.nextId(
    vendor === 'openai' ? 'chatcmpl-sim' : vendor === 'deepseek' ? 'ds-sim-' : 'cmpl-sim',
  )
  const created = Math.floor(EPOCH_SECONDS + at)
  const model = body.model
  const { text, refusal, calls, reasoning, finish } = replyParts(vendor, answer)
  const headers = { 'x-request-id': id }

  if (body.stream !== true) {
    if (fault?.kind === 'stream-cut' || fault?.kind === 'stream-error') {
      return jsonAnswer(
        500,
        errorBody('The server had an error while processing your request.', 'server_error', null),
      )
    }
    return jsonAnswer(
      200,
      {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: text === '' ? null : text,
              ...(reasoning !== undefined ? { reasoning_content: reasoning } : {}),
              ...(calls.length > 0 ? { tool_calls: calls } : {}),
              refusal: refusal ?? null,
              annotations: [],
            },
            logprobs: null,
            finish_reason: finish,
          },
        ],
        usage,
        service_tier: 'default',
        system_fingerprint: 'fp_cachelab',
      },
      headers,
    )
  }

  const includeUsage =
    (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): SseFrame => ({
    data: JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: 'fp_cachelab',
      choices,
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    }),
  })
  const delta = (value: Record<string, unknown>, finishReason: string | null = null) => [
    { index: 0, delta: value, logprobs: null, finish_reason: finishReason },
  ]
  const frames: SseFrame[] = [chunk(delta({ role: 'assistant', content: '', refusal: null }))]
  for (const piece of textPieces(reasoning ?? '')) frames.push(chunk(delta({ reasoning_content: piece })))
  for (const piece of textPieces(refusal ?? '')) frames.push(chunk(delta({ refusal: piece })))
  for (const piece of textPieces(text)) frames.push(chunk(delta({ content: piece })))
  for (const [index, call] of calls.entries()) {
    frames.push(
      chunk(
        delta({
          tool_calls: [
            { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
          ],
        }),
      ),
    )
    for (const piece of textPieces(call.function.arguments)) {
      frames.push(chunk(delta({ tool_calls: [{ index, function: { arguments: piece } }] })))
    }
  }
  if (fault?.kind === 'stream-error') {
    frames.push({
      data: JSON.stringify(
        errorBody('The server had an error while processing your request.', 'server_error', null),
      ),
    })
  }
  frames.push(chunk(delta({}, finish)))
  if (includeUsage) frames.push(chunk([], { usage }))
  frames.push({ data: '[DONE]' })
  return sseAnswer(
    sseStream(frames, fault?.kind === 'stream-cut' ? { cutAfter: fault.afterFrames } : {}),
    headers,
  )
}
