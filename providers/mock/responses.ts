// Mock OpenAI Responses: usage computed by the cache simulator over the request as received, returned in
// a Response object or, streamed, as typed events whose `response.completed` carries the usage.

import type { AssistantMessage } from '../../harness/types.ts'
import { type SimCounts, SimulatorRejection } from '../sim/types.ts'
import { chatFaultResponse } from './chat.ts'
import { EPOCH_SECONDS, type MockContext } from './context.ts'
import { jsonResponse, readMockRequest, sseResponse } from './request.ts'
import { type SseFrame, sseStream, textPieces } from './sse.ts'

type Item = Record<string, unknown>

/** The Responses usage object; `cache_write_tokens` only for models that report writes (GPT-5.6+). */
export function responsesUsage(counts: SimCounts, reportsWrites: boolean): Record<string, unknown> {
  return {
    input_tokens: counts.input,
    input_tokens_details: {
      cached_tokens: counts.read,
      ...(reportsWrites ? { cache_write_tokens: counts.write } : {}),
    },
    output_tokens: counts.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: counts.input + counts.output,
  }
}

function invalid(message: string, param: string | null): Response {
  return jsonResponse(400, { error: { message, type: 'invalid_request_error', param, code: null } })
}

const SERVER_ERROR = 'The server had an error while processing your request.'

/** The completed output items of a scripted answer: a message with its text, then each function call. */
function outputItems(output: AssistantMessage, nextId: (prefix: string) => string): Item[] {
  const items: Item[] = []
  const text = output.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
  if (text !== '') {
    items.push({
      id: nextId('msg_sim'),
      type: 'message',
      status: 'completed',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text }],
      role: 'assistant',
    })
  }
  for (const block of output.content) {
    if (block.type !== 'tool-call') continue
    items.push({
      id: nextId('fc_sim'),
      type: 'function_call',
      status: 'completed',
      arguments: block.arguments,
      call_id: block.callId,
      name: block.name,
    })
  }
  return items
}

/** The typed events that stream one output item, from `output_item.added` to `output_item.done`. */
function itemEvents(item: Item, outputIndex: number): Item[] {
  const id = item.id
  const events: Item[] = []
  if (item.type === 'message') {
    const part = (item.content as Item[])[0] ?? {}
    const text = String(part.text ?? '')
    events.push({
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { ...item, status: 'in_progress', content: [] },
    })
    events.push({
      type: 'response.content_part.added',
      item_id: id,
      output_index: outputIndex,
      content_index: 0,
      part: { ...part, text: '' },
    })
    for (const delta of textPieces(text)) {
      events.push({
        type: 'response.output_text.delta',
        item_id: id,
        output_index: outputIndex,
        content_index: 0,
        delta,
        logprobs: [],
      })
    }
    events.push({
      type: 'response.output_text.done',
      item_id: id,
      output_index: outputIndex,
      content_index: 0,
      text,
      logprobs: [],
    })
    events.push({
      type: 'response.content_part.done',
      item_id: id,
      output_index: outputIndex,
      content_index: 0,
      part,
    })
  } else {
    const argumentsText = String(item.arguments ?? '')
    events.push({
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { ...item, status: 'in_progress', arguments: '' },
    })
    for (const delta of textPieces(argumentsText)) {
      events.push({
        type: 'response.function_call_arguments.delta',
        item_id: id,
        output_index: outputIndex,
        delta,
      })
    }
    events.push({
      type: 'response.function_call_arguments.done',
      item_id: id,
      output_index: outputIndex,
      name: item.name,
      arguments: argumentsText,
    })
  }
  events.push({ type: 'response.output_item.done', output_index: outputIndex, item })
  return events
}

/** Handle one `POST /responses`. */
export async function handleResponses(request: Request, context: MockContext): Promise<Response> {
  const parsed = await readMockRequest(request, context)
  if ('problem' in parsed) return invalid(parsed.problem, null)
  const { body, output, at } = parsed
  if (typeof body.model !== 'string' || body.model === '')
    return invalid("Missing required parameter: 'model'.", 'model')
  if (typeof body.input !== 'string' && !Array.isArray(body.input))
    return invalid("Missing required parameter: 'input'.", 'input')
  const refused = context.refuse('openai-responses', parsed, request.headers)
  if (refused !== undefined) return jsonResponse(refused.status, refused.body)
  // The stored chain and referenced items: the input the model sees and the API bills.
  const chained = context.chainResponses(parsed)
  if (chained instanceof SimulatorRejection) return jsonResponse(chained.status, chained.body)
  const early = context.failEarly('openai-responses', parsed, chatFaultResponse)
  if (early !== undefined) return early
  const simulation = context.simulate('openai-responses', { ...parsed, body: chained.body })
  if (simulation instanceof SimulatorRejection) return jsonResponse(simulation.status, simulation.body)
  // Known only now: a request the simulator refused above never uses up a fault inside its answer.
  const fault = context.answerFault(parsed)
  const model = body.model
  const usage = responsesUsage(simulation.counts, context.simulators.openai.reportsWrites(model))
  const id = context.nextId('resp_sim')
  const createdAt = Math.floor(EPOCH_SECONDS + at)
  const items = outputItems(output, (prefix) => context.nextId(prefix))
  context.responses.remember(id, chained, items)
  const headers = { 'x-request-id': `req_${id}` }
  // The request's own settings, echoed the way the API echoes them.
  const base = {
    id,
    object: 'response',
    created_at: createdAt,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: null,
    model,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    ...(body.prompt_cache_options !== undefined ? { prompt_cache_options: body.prompt_cache_options } : {}),
    prompt_cache_retention: body.prompt_cache_retention ?? null,
    reasoning: { effort: null, summary: null },
    safety_identifier: null,
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_logprobs: 0,
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    user: null,
    metadata: body.metadata ?? {},
  }
  const completed = { ...base, status: 'completed', completed_at: createdAt, output: items, usage }

  if (body.stream !== true) {
    if (fault?.kind === 'stream-cut' || fault?.kind === 'stream-error') {
      return jsonResponse(500, {
        error: { message: SERVER_ERROR, type: 'server_error', param: null, code: null },
      })
    }
    return jsonResponse(200, completed, headers)
  }

  const pending = { ...base, status: 'in_progress', completed_at: null, output: [], usage: null }
  const events: Item[] = [
    { type: 'response.created', response: pending },
    { type: 'response.in_progress', response: pending },
  ]
  for (const [index, item] of items.entries()) events.push(...itemEvents(item, index))
  if (fault?.kind === 'stream-error') {
    events.push({
      type: 'response.failed',
      response: {
        ...base,
        status: 'failed',
        completed_at: null,
        error: { code: 'server_error', message: SERVER_ERROR },
        output: items,
        usage: null,
      },
    })
  } else {
    events.push({ type: 'response.completed', response: completed })
  }
  const frames: SseFrame[] = events.map((event, sequence) => ({
    event: String(event.type),
    data: JSON.stringify({ ...event, sequence_number: sequence }),
  }))
  return sseResponse(
    sseStream(frames, fault?.kind === 'stream-cut' ? { cutAfter: fault.afterFrames } : {}),
    headers,
  )
}
