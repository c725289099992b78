// Anthropic Messages over `@anthropic-ai/sdk`: usage normalization (input_tokens excludes cache reads
// and writes), stop reasons, the streamed event accumulator and sending. Request building lives in
// anthropic-request.ts.

import type Anthropic from '@anthropic-ai/sdk'
import type { AssistantMessage, CompatibleProviderId, ProviderDiagnosis } from '../harness/types.ts'
import { buildAnthropicRequest } from './anthropic-request.ts'
import { parseAnthropicUsage } from './anthropic-usage.ts'
import { readAnthropicDiagnostics } from './diagnostics.ts'
import { type Endpoint, lateBoundFetch } from './endpoints.ts'
import { toProviderError } from './sdk-errors.ts'
import { lazy, loadSdk } from './sdks.ts'
import {
  type BuiltRequest,
  compatibleApi,
  type ProviderAdapter,
  ProviderError,
  type ProviderReply,
  type SendOptions,
  type StopReason,
} from './types.ts'

export { buildAnthropicRequest, parseAnthropicUsage }

type Raw = Record<string, unknown>

/** Map a stop reason; the ones cachelab's loop cannot continue from are errors naming the value. */
export function mapStopReason(reason: Anthropic.StopReason | null): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end'
    case 'tool_use':
      return 'tool-calls'
    case 'max_tokens':
      return 'max-tokens'
    case 'pause_turn':
    case 'refusal':
    case 'model_context_window_exceeded':
    case null:
      throw new ProviderError({
        errorType: 'stop_reason',
        message: `unsupported stop_reason ${JSON.stringify(reason)}`,
        retryable: false,
      })
    default: {
      const unknown: never = reason
      throw new ProviderError({
        errorType: 'stop_reason',
        message: `unknown stop_reason ${JSON.stringify(unknown)}`,
        retryable: false,
      })
    }
  }
}

/** The assistant message of a reply's content blocks (text and tool calls; thinking is not kept). */
export function assistantOf(content: readonly Anthropic.ContentBlock[]): AssistantMessage {
  const message: AssistantMessage = { role: 'assistant', content: [] }
  for (const block of content) {
    if (block.type === 'text') message.content.push({ type: 'text', text: block.text })
    else if (block.type === 'tool_use') {
      message.content.push({
        type: 'tool-call',
        callId: block.id,
        name: block.name,
        arguments: JSON.stringify(block.input),
      })
    }
  }
  return message
}

/** A content block as a stream builds it up: text so far, or a tool call's arguments JSON so far. */
export type StreamedBlock =
  | { type: 'text'; text: string }
  | { type: 'tool'; id: string; name: string; json: string }

/** The assistant message of a stream's accumulated blocks (Anthropic's and Bedrock's, index for index). */
export function streamedMessage(blocks: ReadonlyArray<StreamedBlock | undefined>): AssistantMessage {
  const message: AssistantMessage = { role: 'assistant', content: [] }
  for (const block of blocks) {
    if (block === undefined) continue
    if (block.type === 'text') message.content.push({ type: 'text', text: block.text })
    else
      message.content.push({
        type: 'tool-call',
        callId: block.id,
        name: block.name,
        arguments: block.json === '' ? '{}' : block.json,
      })
  }
  return message
}

/** A streamed reply, event by event. Usage counters are running totals: overwritten, never added. */
export class MessageEventAccumulator {
  private readonly blocks: StreamedBlock[] = []
  private stop: Anthropic.StopReason | null = null
  private started = false
  private finished = false
  /** The usage of `message_start`, with `message_delta`'s cumulative counters written over it. */
  usage: Raw = {}
  id = ''
  /** The cache diagnostics `message_start` carried, if it carried the field. */
  diagnosis: ProviderDiagnosis | undefined

  add(event: Anthropic.RawMessageStreamEvent): void {
    switch (event.type) {
      case 'message_start':
        this.started = true
        this.id = event.message.id
        this.usage = { ...event.message.usage }
        this.diagnosis = readAnthropicDiagnostics((event.message as { diagnostics?: unknown }).diagnostics)
        return
      case 'content_block_start': {
        const block = event.content_block
        if (block.type === 'text') this.blocks[event.index] = { type: 'text', text: block.text }
        else if (block.type === 'tool_use')
          this.blocks[event.index] = { type: 'tool', id: block.id, name: block.name, json: '' }
        return
      }
      case 'content_block_delta': {
        const block = this.blocks[event.index]
        if (event.delta.type === 'text_delta' && block?.type === 'text') block.text += event.delta.text
        else if (event.delta.type === 'input_json_delta' && block?.type === 'tool')
          block.json += event.delta.partial_json
        return
      }
      case 'content_block_stop':
        return
      case 'message_delta': {
        this.stop = event.delta.stop_reason
        const counters = event.usage
        this.usage.output_tokens = counters.output_tokens
        if (counters.input_tokens !== null) this.usage.input_tokens = counters.input_tokens
        if (counters.cache_read_input_tokens !== null)
          this.usage.cache_read_input_tokens = counters.cache_read_input_tokens
        if (counters.cache_creation_input_tokens !== null)
          this.usage.cache_creation_input_tokens = counters.cache_creation_input_tokens
        return
      }
      case 'message_stop':
        this.finished = true
        return
      default: {
        // Unknown event types are tolerated, as the API asks.
        const ignored: never = event
        void ignored
        return
      }
    }
  }

  /** The reply; a stream that ended before `message_stop` is an error. */
  reply(): ProviderReply {
    if (!this.started || !this.finished) throw new Error('the stream ended before message_stop')
    const message = streamedMessage(this.blocks)
    return {
      message,
      usage: parseAnthropicUsage(this.usage),
      stopReason: mapStopReason(this.stop),
      responseId: this.id,
      ...(this.diagnosis !== undefined ? { diagnosis: this.diagnosis } : {}),
    }
  }
}

/** Send a Messages body, streamed (events accumulated) or not; failures become ProviderError. */
export async function sendAnthropic(
  client: Anthropic,
  request: BuiltRequest,
  options: SendOptions,
): Promise<ProviderReply> {
  const requestOptions = {
    headers: options.headers,
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  }
  const { stream: _stream, ...body } = request.body
  try {
    if (options.stream) {
      const events = await client.messages.create(
        { ...body, stream: true } as unknown as Anthropic.MessageCreateParamsStreaming,
        requestOptions,
      )
      const accumulator = new MessageEventAccumulator()
      for await (const event of events) accumulator.add(event)
      return accumulator.reply()
    }
    const message = await client.messages.create(
      body as unknown as Anthropic.MessageCreateParamsNonStreaming,
      requestOptions,
    )
    const diagnosis = readAnthropicDiagnostics((message as { diagnostics?: unknown }).diagnostics)
    return {
      message: assistantOf(message.content),
      usage: parseAnthropicUsage(message.usage),
      stopReason: mapStopReason(message.stop_reason),
      responseId: message.id,
      ...(diagnosis !== undefined ? { diagnosis } : {}),
    }
  } catch (error) {
    throw toProviderError(error)
  }
}

/**
 * An Anthropic SDK client for an endpoint, once the SDK has loaded; retries are the loop's job, so the
 * SDK makes none.
 */
export async function anthropicClient(endpoint: Endpoint): Promise<Anthropic> {
  const { default: Anthropic } = await loadSdk('@anthropic-ai/sdk')
  return new Anthropic({
    apiKey: endpoint.apiKey,
    baseURL: endpoint.baseURL,
    maxRetries: 0,
    fetch: endpoint.fetch ?? lateBoundFetch,
  })
}

/** The anthropic adapter. */
export function anthropicAdapter(endpoint: Endpoint): ProviderAdapter {
  const client = lazy(() => anthropicClient(endpoint))
  return {
    provider: 'anthropic',
    api: 'anthropic-messages',
    buildRequest: buildAnthropicRequest,
    parseUsage: parseAnthropicUsage,
    send: async (request, options) => sendAnthropic(await client(), request, options),
  }
}

/**
 * The adapter of a vendor's Anthropic-compatible Messages API (`deepseek-anthropic`): Anthropic's request
 * and usage, sent by Anthropic's SDK to the vendor's base URL, named by the provider and its API.
 */
export function anthropicCompatibleAdapter(
  provider: CompatibleProviderId,
  endpoint: Endpoint,
): ProviderAdapter {
  const client = lazy(() => anthropicClient(endpoint))
  const api = compatibleApi(provider, 'messages')
  return {
    provider,
    api,
    buildRequest: (request, options) => ({ ...buildAnthropicRequest(request, options), provider, api }),
    parseUsage: parseAnthropicUsage,
    send: async (request, options) => sendAnthropic(await client(), request, options),
  }
}
