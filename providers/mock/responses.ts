// Mock OpenAI Responses: usage computed by the cache simulator over the request as received, returned in
// a Response object or, streamed, as typed events whose `response.completed` (or `response.incomplete`)
// carries the usage. Reasoning is a leading reasoning item, its text only as a summary when asked for and
// as `encrypted_content` when `include` asks for that. A request with
// `prompt_cache_options.comparison_response_id` gets `prompt_cache_diagnostics` (diagnostics.ts) on the
// completed response.

import { type SimCounts, type Simulation, SimulatorRejection } from '../sim/types.ts'
import type { Answer } from './answer.ts'
import { chatFaultResponse } from './chat.ts'
import { EPOCH_SECONDS, type MockContext } from './context.ts'
import {
  fingerprintOf,
  type ResponsesDiagnostics,
  responsesDiagnosis,
  responsesSettings,
} from './diagnostics.ts'
import { jsonAnswer, type MockAnswer, type MockHttpRequest, readMockRequest, sseAnswer } from './request.ts'
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
    output_tokens_details: { reasoning_tokens: counts.reasoning ?? 0 },
    total_tokens: counts.input + counts.output,
  }
}

function invalid(message: string, param: string | null): MockAnswer {
  return jsonAnswer(400, { error: { message, type: 'invalid_request_error', param, code: null } })
}

const SERVER_ERROR = 'The server had an error while processing your request.'

/** Why a response stops short, if it does: `incomplete_details.reason`. */
function incompleteReason(answer: Answer): string | undefined {
  switch (answer.stop) {
    case 'max-tokens':
      return 'max_output_tokens'
    case 'content-filter':
      return 'content_filter'
    case 'end':
    case 'tool-use':
    case 'refusal':
    case 'pause-turn':
      return undefined
  }
}

/** What the request asks of a reasoning item: a summary, its encrypted content. */
interface ReasoningAsks {
  summary: boolean
  encrypted: boolean
}

function reasoningAsks(body: Record<string, unknown>): ReasoningAsks {
  const summary = (body.reasoning as { summary?: unknown } | undefined)?.summary
  const include = Array.isArray(body.include) ? body.include : []
  return {
    summary: typeof summary === 'string' && summary !== 'none',
    encrypted: include.includes('reasoning.encrypted_content'),
  }
}

/**
 * The output items of an answer: its reasoning, a message with its text (or refusal), then each function
 * call. A response cut short leaves its message `incomplete`.
 */
function outputItems(answer: Answer, asks: ReasoningAsks, nextId: (prefix: string) => string): Item[] {
  const output = answer.message
  const items: Item[] = []
  const reasoning = answer.reasoning
  if (reasoning !== undefined) {
    items.push({
      id: nextId('rs_sim'),
      type: 'reasoning',
      summary:
        asks.summary && !reasoning.redacted && reasoning.text !== ''
          ? [{ type: 'summary_text', text: reasoning.text }]
          : [],
      ...(asks.encrypted
        ? {
            encrypted_content: Buffer.from(`cachelab-reasoning:${reasoning.text}`, 'utf8').toString('base64'),
          }
        : {}),
    })
  }
  const text = output.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
  if (text !== '') {
    items.push({
      id: nextId('msg_sim'),
      type: 'message',
      status: incompleteReason(answer) === undefined ? 'completed' : 'incomplete',
      content: [
        answer.stop === 'refusal'
          ? { type: 'refusal', refusal: text }
          : { type: 'output_text', annotations: [], logprobs: [], text },
      ],
      role: 'assistant',
    })
  }
  for (const block of output.content) {
    if (block.type !== 'tool-call') continue
    // A tool declared in a namespace is called by its namespace and its name (`ResponseFunctionToolCall`).
    const namespace = answer.callNamespaces?.[block.callId]
    items.push({
      id: nextId('fc_sim'),
      type: 'function_call',
      status: 'completed',
      arguments: block.arguments,
      call_id: block.callId,
      ...(namespace !== undefined ? { namespace } : {}),
      name: block.name,
    })
  }
  return items
}

/** The typed events that stream one output item, from `output_item.added` to `output_item.done`. */
function itemEvents(item: Item, outputIndex: number): Item[] {
  const id = item.id
  const events: Item[] = []
  if (item.type === 'reasoning') {
    events.push({
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { ...item, summary: [] },
    })
    for (const [summaryIndex, part] of (item.summary as Item[]).entries()) {
      const text = String(part.text ?? '')
      const at = { item_id: id, output_index: outputIndex, summary_index: summaryIndex }
      events.push({ type: 'response.reasoning_summary_part.added', ...at, part: { ...part, text: '' } })
      for (const delta of textPieces(text))
        events.push({ type: 'response.reasoning_summary_text.delta', ...at, delta })
      events.push({ type: 'response.reasoning_summary_text.done', ...at, text })
      events.push({ type: 'response.reasoning_summary_part.done', ...at, part })
    }
  } else if (item.type === 'message') {
    const part = (item.content as Item[])[0] ?? {}
    const refusal = part.type === 'refusal'
    const text = String((refusal ? part.refusal : part.text) ?? '')
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
      part: refusal ? { ...part, refusal: '' } : { ...part, text: '' },
    })
    for (const delta of textPieces(text)) {
      events.push({
        type: refusal ? 'response.refusal.delta' : 'response.output_text.delta',
        item_id: id,
        output_index: outputIndex,
        content_index: 0,
        delta,
        ...(refusal ? {} : { logprobs: [] }),
      })
    }
    events.push(
      refusal
        ? {
            type: 'response.refusal.done',
            item_id: id,
            output_index: outputIndex,
            content_index: 0,
            refusal: text,
          }
        : {
            type: 'response.output_text.done',
            item_id: id,
            output_index: outputIndex,
            content_index: 0,
            text,
            logprobs: [],
          },
    )
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

/** The wire whose fingerprints Responses requests name. */
const API = 'openai-responses'

/**
 * The `prompt_cache_diagnostics` of a request that names a `comparison_response_id`, undefined for one
 * that names none. Every response of a model with diagnostics (GPT-5.6 and later: the breakpoint cache)
 * leaves a fingerprint under its id, stored or not (`store` keeps the content, not the diagnostic record);
 * an older model refuses `prompt_cache_options` before this is reached, and would answer `unavailable`.
 */
function diagnose(
  context: MockContext,
  id: string,
  model: string,
  body: Record<string, unknown>,
  simulation: Simulation,
  at: number,
): ResponsesDiagnostics | undefined {
  const options = body.prompt_cache_options
  const compared =
    typeof options === 'object' && options !== null
      ? (options as { comparison_response_id?: unknown }).comparison_response_id
      : undefined
  if (!context.simulators.openai.reportsWrites(model))
    return typeof compared === 'string' ? { type: 'unavailable' } : undefined
  const fingerprint = fingerprintOf(
    model,
    responsesSettings(body),
    simulation.prompt,
    simulation.trace.carry.tokens,
    at,
  )
  const input = Array.isArray(body.input) ? body.input : []
  const diagnostics =
    typeof compared === 'string'
      ? responsesDiagnosis(
          context.fingerprints.find(API, compared, at),
          fingerprint,
          (index) => (input[index] as { type?: unknown } | undefined)?.type === 'compaction',
        )
      : undefined
  context.fingerprints.remember(API, id, fingerprint)
  return diagnostics
}

/** Handle one `POST /responses`. */
export async function handleResponses(request: MockHttpRequest, context: MockContext): Promise<MockAnswer> {
  const parsed = await readMockRequest(request, context)
  if ('problem' in parsed) return invalid(parsed.problem, null)
  const { body, at } = parsed
  if (typeof body.model !== 'string' || body.model === '')
    return invalid("Missing required parameter: 'model'.", 'model')
  // Its type is the validation's (validation/openai-responses.ts), which lenient mocks skip.
  if (body.input === undefined || body.input === null)
    return invalid("Missing required parameter: 'input'.", 'input')
  const refused = context.refuse('openai-responses', parsed, request.headers)
  if (refused !== undefined) return jsonAnswer(refused.status, refused.body)
  // The stored chain and referenced items: the input the model sees and the API bills.
  const chained = context.chainResponses(parsed)
  if (chained instanceof SimulatorRejection) return jsonAnswer(chained.status, chained.body)
  const early = context.failEarly('openai-responses', parsed, chatFaultResponse)
  if (early !== undefined) return early
  // From here the request is its chained input: the answer is decided over the whole conversation, the
  // simulation bills it, and the fault chosen for this request (kept by request) is still found.
  parsed.body = chained.body
  const answer = context.answer('openai-responses', parsed)
  const simulation = context.simulate('openai-responses', parsed, answer)
  if (simulation instanceof SimulatorRejection) return jsonAnswer(simulation.status, simulation.body)
  // Known only now: a request the simulator refused above never uses up a fault inside its answer.
  const fault = context.answerFault(parsed)
  const model = body.model
  const usage = responsesUsage(simulation.counts, context.simulators.openai.reportsWrites(model))
  const id = context.nextId('resp_sim')
  const createdAt = Math.floor(EPOCH_SECONDS + at)
  const items = outputItems(answer, reasoningAsks(body), (prefix) => context.nextId(prefix))
  context.responses.remember(id, chained, items)
  // Over the chained request: the input the prompt (and its diagnosis) is made of.
  const diagnostics = diagnose(context, id, model, parsed.body, simulation, at)
  const incomplete = incompleteReason(answer)
  const headers = { 'x-request-id': `req_${id}` }
  // The request's own settings, echoed the way the API echoes them.
  const base = {
    id,
    object: 'response',
    created_at: createdAt,
    background: false,
    error: null,
    incomplete_details: incomplete === undefined ? null : { reason: incomplete },
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: null,
    model,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    ...(body.prompt_cache_options !== undefined ? { prompt_cache_options: body.prompt_cache_options } : {}),
    prompt_cache_retention: body.prompt_cache_retention ?? null,
    reasoning: {
      effort: (body.reasoning as { effort?: unknown } | undefined)?.effort ?? null,
      summary: (body.reasoning as { summary?: unknown } | undefined)?.summary ?? null,
    },
    safety_identifier: null,
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: {
      format: (body.text as { format?: unknown } | undefined)?.format ?? { type: 'text' },
      verbosity: (body.text as { verbosity?: unknown } | undefined)?.verbosity ?? 'medium',
    },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_logprobs: 0,
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    user: null,
    metadata: body.metadata ?? {},
  }
  const completed = {
    ...base,
    status: incomplete === undefined ? 'completed' : 'incomplete',
    completed_at: incomplete === undefined ? createdAt : null,
    output: items,
    usage,
    ...(diagnostics !== undefined ? { prompt_cache_diagnostics: diagnostics } : {}),
  }

  if (body.stream !== true) {
    if (fault?.kind === 'stream-cut' || fault?.kind === 'stream-error') {
      return jsonAnswer(500, {
        error: { message: SERVER_ERROR, type: 'server_error', param: null, code: null },
      })
    }
    return jsonAnswer(200, completed, headers)
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
    events.push({
      type: incomplete === undefined ? 'response.completed' : 'response.incomplete',
      response: completed,
    })
  }
  const frames: SseFrame[] = events.map((event, sequence) => ({
    event: String(event.type),
    data: JSON.stringify({ ...event, sequence_number: sequence }),
  }))
  return sseAnswer(
    sseStream(frames, fault?.kind === 'stream-cut' ? { cutAfter: fault.afterFrames } : {}),
    headers,
  )
}
