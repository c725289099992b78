// OpenAI Responses over the `openai` SDK: request building (instructions, typed input items), reading a
// reply's output items back into an assistant message, and sending, streamed (usage only on
// `response.completed`) or not.

import type OpenAI from 'openai'
import type {
  AssistantMessage,
  DerivedRequest,
  ImageBlock,
  Message,
  Seq,
  TextBlock,
  ToolCallBlock,
} from '../harness/types.ts'
import { readResponsesDiagnostics } from './diagnostics.ts'
import type { Endpoint } from './endpoints.ts'
import { openAIClient, parseOpenAIUsage } from './openai-chat.ts'
import { toProviderError } from './sdk-errors.ts'
import { lazy } from './sdks.ts'
import {
  type BuildOptions,
  type BuiltRequest,
  type ProviderAdapter,
  ProviderError,
  type ProviderReply,
  type SendOptions,
  type StopReason,
} from './types.ts'

/** A content part of an input message. */
export type ResponsesInputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' }

/** An input item as cachelab sends it. */
export type ResponsesInputItem =
  | { type: 'message'; role: 'user' | 'system' | 'developer'; content: ResponsesInputPart[] }
  | {
      type: 'message'
      role: 'assistant'
      content: Array<{ type: 'output_text'; text: string; annotations: [] }>
    }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string }

/** The part of a reply cachelab reads: status, why it stopped early, and its output items. */
export interface ResponsesReply {
  /** `completed`, `incomplete`, `failed`, … (absent on a partial snapshot). */
  status?: string | undefined
  /** Why an `incomplete` response stopped (`max_output_tokens`, `content_filter`). */
  incomplete_details?: { reason?: string | undefined } | null | undefined
  /** The output items, in order. */
  output: readonly OpenAI.Responses.ResponseOutputItem[]
}

/** Text between instructions taken from more than one leading system prompt. */
const INSTRUCTIONS_SEPARATOR = '\n\n'

const textPart = (text: string): ResponsesInputPart => ({ type: 'input_text', text })

function inputPart(block: TextBlock | ImageBlock): ResponsesInputPart {
  return block.type === 'text'
    ? textPart(block.text)
    : { type: 'input_image', image_url: `data:${block.mediaType};base64,${block.data}`, detail: 'auto' }
}

/** The input items one derived message becomes (an assistant turn: its text, then each call). */
function inputItems(message: Message): ResponsesInputItem[] {
  switch (message.role) {
    case 'system':
    case 'developer':
      return [{ type: 'message', role: message.role, content: [textPart(message.text)] }]
    case 'user':
      return [{ type: 'message', role: 'user', content: message.content.map(inputPart) }]
    case 'assistant': {
      const items: ResponsesInputItem[] = []
      const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
      if (text !== '')
        items.push({
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text, annotations: [] }],
        })
      for (const block of message.content) {
        if (block.type !== 'tool-call') continue
        items.push({
          type: 'function_call',
          call_id: block.callId,
          name: block.name,
          arguments: block.arguments,
        })
      }
      return items
    }
    case 'tool':
      return [{ type: 'function_call_output', call_id: message.callId, output: message.text }]
  }
}

/**
 * The previous request's input items: its derived messages, their items and sources, and where each
 * begins. The lists are this module's own: a call cuts them back to what it shares and extends them in place.
 */
let lastInput: {
  derived: DerivedRequest['messages'][number][]
  input: ResponsesInputItem[]
  sources: Seq[][]
  starts: number[]
} = emptyInput()

function emptyInput(): typeof lastInput {
  return { derived: [], input: [], sources: [], starts: [0] }
}

/**
 * The instructions and input items of a derived request. The header system prompt and the leading
 * system messages become `instructions`; every other message becomes one or more input items.
 */
export function responsesInput(request: DerivedRequest): {
  instructions: string | undefined
  systemSources: Seq[]
  input: ResponsesInputItem[]
  sources: Seq[][]
} {
  const instructionTexts: string[] = []
  const systemSources: Seq[] = []
  if (request.system !== undefined) {
    instructionTexts.push(request.system.text)
    systemSources.push(request.system.sourceSeq)
  }
  let start = 0
  for (const { message, sourceSeqs } of request.messages) {
    if (message.role !== 'system') break
    instructionTexts.push(message.text)
    systemSources.push(...sourceSeqs)
    start += 1
  }
  // Items of derived messages the previous request shared (the same frozen objects) are reused.
  const all = request.messages
  const count = all.length - start
  const last = lastInput
  // Reset first: a throw below leaves no half-updated lists behind.
  lastInput = emptyInput()
  const { derived, input, sources, starts } = last
  let shared = 0
  const bound = Math.min(count, derived.length)
  while (shared < bound && all[start + shared] === derived[shared]) shared += 1
  const end = starts[shared] ?? 0
  derived.length = shared
  for (let index = shared; index < count; index += 1)
    derived.push(all[start + index] as (typeof derived)[number])
  input.length = end
  sources.length = end
  starts.length = shared
  for (let index = shared; index < derived.length; index += 1) {
    const { message, sourceSeqs } = derived[index] as DerivedRequest['messages'][number]
    starts[index] = input.length
    for (const item of inputItems(message)) {
      input.push(item)
      sources.push(sourceSeqs)
    }
  }
  starts[derived.length] = input.length
  lastInput = last
  return {
    instructions: instructionTexts.length > 0 ? instructionTexts.join(INSTRUCTIONS_SEPARATOR) : undefined,
    systemSources,
    input: input.slice(),
    sources: sources.slice(),
  }
}

/** The Responses body of a derived request. Nothing is stored server-side: every request carries its history. */
export function buildOpenAIResponsesRequest(request: DerivedRequest, options: BuildOptions): BuiltRequest {
  const { instructions, systemSources, input, sources } = responsesInput(request)
  const tools = request.tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: false,
  }))
  const body: Record<string, unknown> = {
    model: request.config.model,
    ...(instructions !== undefined ? { instructions } : {}),
    input,
    ...(tools.length > 0 ? { tools } : {}),
    ...(request.config.maxTokens !== undefined ? { max_output_tokens: request.config.maxTokens } : {}),
    ...(request.config.temperature !== undefined ? { temperature: request.config.temperature } : {}),
    store: false,
    ...(options.promptCacheKey !== undefined ? { prompt_cache_key: options.promptCacheKey } : {}),
    ...(options.retention !== undefined ? { prompt_cache_retention: options.retention } : {}),
    ...(options.cacheTtl !== undefined ? { prompt_cache_options: { ttl: options.cacheTtl } } : {}),
    ...(options.stream ? { stream: true } : {}),
  }
  return {
    provider: 'openai-responses',
    api: 'openai-responses',
    body,
    sources: {
      system: systemSources,
      tools: request.toolsSeq !== undefined ? [request.toolsSeq] : [],
      messages: sources,
    },
  }
}

/** The assistant message of a reply's output items: message text and function calls, in output order. */
export function assistantFromOutput(output: ResponsesReply['output']): AssistantMessage {
  const content: AssistantMessage['content'] = []
  for (const item of output) {
    if (item.type === 'message') {
      const text = item.content.flatMap((part) => (part.type === 'output_text' ? [part.text] : [])).join('')
      if (text !== '') content.push({ type: 'text', text })
    } else if (item.type === 'function_call') {
      const block: ToolCallBlock = {
        type: 'tool-call',
        callId: item.call_id,
        name: item.name,
        arguments: item.arguments,
      }
      content.push(block)
    }
  }
  return { role: 'assistant', content }
}

/** Why a reply stopped: function calls first, then the response status. Unknown statuses are an error. */
export function mapResponseStop(reply: ResponsesReply): StopReason {
  if (reply.output.some((item) => item.type === 'function_call')) return 'tool-calls'
  switch (reply.status) {
    case 'completed':
      return 'end'
    case 'incomplete':
      return reply.incomplete_details?.reason === 'max_output_tokens' ? 'max-tokens' : 'error'
    case 'failed':
    case 'cancelled':
    case 'in_progress':
    case 'queued':
    case undefined:
      return 'error'
    default:
      throw new Error(`unknown response status ${JSON.stringify(reply.status)}`)
  }
}

function replyOf(response: OpenAI.Responses.Response, output?: ResponsesReply['output']): ProviderReply {
  const items = output !== undefined && output.length > 0 ? output : response.output
  const reply: ResponsesReply = {
    status: response.status,
    incomplete_details: response.incomplete_details,
    output: items,
  }
  // Not yet declared by the installed SDK (openai 6.49): read as the guide documents it.
  const diagnosis = readResponsesDiagnostics(
    (response as { prompt_cache_diagnostics?: unknown }).prompt_cache_diagnostics,
  )
  return {
    message: assistantFromOutput(items),
    usage: parseOpenAIUsage(response.usage),
    stopReason: mapResponseStop(reply),
    responseId: response.id,
    ...(diagnosis !== undefined ? { diagnosis } : {}),
  }
}

/** A failure the stream reported in-band (an `error` event or `response.failed`): retryable, like a 5xx. */
function streamFailure(code: string | null | undefined, message: string): ProviderError {
  return new ProviderError({ errorType: code ?? 'server_error', message, retryable: true })
}

/** Send a Responses body through an SDK client. */
export async function sendResponses(
  client: OpenAI,
  request: BuiltRequest,
  options: SendOptions,
): Promise<ProviderReply> {
  const requestOptions = {
    headers: options.headers,
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  }
  try {
    if (!options.stream) {
      const body = { ...request.body }
      delete body.stream
      const response = await client.responses.create(
        body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming,
        requestOptions,
      )
      return replyOf(response)
    }
    const body = { ...request.body, stream: true }
    const stream = await client.responses.create(
      body as unknown as OpenAI.Responses.ResponseCreateParamsStreaming,
      requestOptions,
    )
    const done: Array<OpenAI.Responses.ResponseOutputItem> = []
    let final: OpenAI.Responses.Response | undefined
    for await (const event of stream) {
      switch (event.type) {
        case 'response.output_item.done':
          done[event.output_index] = event.item
          break
        case 'response.completed':
        case 'response.incomplete':
          final = event.response
          break
        case 'response.failed':
          throw streamFailure(
            event.response.error?.code,
            event.response.error?.message ?? 'the response failed',
          )
        case 'error':
          throw streamFailure(event.code, event.message)
        default:
          break
      }
    }
    if (final === undefined) throw new Error('the stream ended without response.completed')
    return replyOf(
      final,
      done.filter((item) => item !== undefined),
    )
  } catch (error) {
    throw toProviderError(error)
  }
}

/** The openai-responses adapter. */
export function openAIResponsesAdapter(endpoint: Endpoint): ProviderAdapter {
  const client = lazy(() => openAIClient(endpoint))
  return {
    provider: 'openai-responses',
    api: 'openai-responses',
    buildRequest: buildOpenAIResponsesRequest,
    parseUsage: parseOpenAIUsage,
    send: async (request, options) => sendResponses(await client(), request, options),
  }
}
