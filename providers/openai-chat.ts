// OpenAI Chat Completions over the `openai` SDK: request building, usage normalization and sending,
// streamed (usage on the final chunk with `stream_options.include_usage`) or not.

import type OpenAI from 'openai'
import { asRecord, optionalNumber } from '../harness/json-fields.ts'
import type { DerivedRequest, JsonValue, Usage } from '../harness/types.ts'
import {
  assistantFrom,
  ChatStreamAccumulator,
  type ChatToolCall,
  chatMessages,
  chatTools,
  mapFinishReason,
} from './chat-wire.ts'
import { type Endpoint, lateBoundFetch } from './endpoints.ts'
import { toProviderError } from './sdk-errors.ts'
import { lazy, loadSdk } from './sdks.ts'
import type { BuildOptions, BuiltRequest, ProviderAdapter, ProviderReply, SendOptions } from './types.ts'

type Raw = Record<string, unknown>

/**
 * Normalize a Chat Completions (or Responses) usage object: `prompt_tokens` includes cached tokens and,
 * from GPT-5.6, cache writes, so both are subtracted to leave the uncached bucket.
 */
export function parseOpenAIUsage(raw: unknown): Usage {
  const usage = asRecord(raw)
  const input = optionalNumber(usage.prompt_tokens ?? usage.input_tokens) ?? 0
  const details = asRecord(usage.prompt_tokens_details ?? usage.input_tokens_details)
  const outputDetails = asRecord(usage.completion_tokens_details ?? usage.output_tokens_details)
  const cacheRead = optionalNumber(details.cached_tokens)
  const cacheWrite = optionalNumber(details.cache_write_tokens)
  const reasoning = optionalNumber(outputDetails.reasoning_tokens)
  return {
    input,
    uncached: input - (cacheRead ?? 0) - (cacheWrite ?? 0),
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    output: optionalNumber(usage.completion_tokens ?? usage.output_tokens) ?? 0,
    ...(reasoning !== undefined ? { reasoning } : {}),
    raw: (raw ?? null) as JsonValue,
  }
}

/** The Chat Completions body of a derived request. */
export function buildOpenAIChatRequest(request: DerivedRequest, options: BuildOptions): BuiltRequest {
  const { messages, sources } = chatMessages(request, 'developer')
  const tools = chatTools(request)
  const body: Raw = {
    model: request.config.model,
    messages,
    ...(tools.length > 0 ? { tools } : {}),
    ...(request.config.maxTokens !== undefined ? { max_completion_tokens: request.config.maxTokens } : {}),
    ...(request.config.temperature !== undefined ? { temperature: request.config.temperature } : {}),
    ...(options.promptCacheKey !== undefined ? { prompt_cache_key: options.promptCacheKey } : {}),
    ...(options.retention !== undefined ? { prompt_cache_retention: options.retention } : {}),
    ...(options.cacheTtl !== undefined ? { prompt_cache_options: { ttl: options.cacheTtl } } : {}),
    ...(options.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  }
  return {
    provider: 'openai-chat',
    api: 'openai-chat',
    body,
    sources: {
      system: [],
      tools: request.toolsSeq !== undefined ? [request.toolsSeq] : [],
      messages: sources,
    },
  }
}

/** Send a Chat Completions body through an SDK client; shared with DeepSeek, which differs only in usage. */
export async function sendChat(
  client: OpenAI,
  request: BuiltRequest,
  options: SendOptions,
  parseUsage: (raw: unknown) => Usage,
): Promise<ProviderReply> {
  const requestOptions = {
    // A provider's own headers (a routing key) first; cachelab's headers are the caller's.
    headers: { ...request.headers, ...options.headers },
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  }
  try {
    if (options.stream) {
      const body = { ...request.body, stream: true, stream_options: { include_usage: true } }
      const stream = await client.chat.completions.create(
        body as unknown as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
        requestOptions,
      )
      const accumulator = new ChatStreamAccumulator()
      for await (const chunk of stream) accumulator.add(chunk as never)
      if (accumulator.usage === undefined) throw new Error('the stream ended without a usage chunk')
      return {
        message: accumulator.message(),
        usage: parseUsage(accumulator.usage),
        stopReason: accumulator.stopReason(),
        responseId: accumulator.id,
      }
    }
    const body = { ...request.body }
    delete body.stream
    delete body.stream_options
    const completion = await client.chat.completions.create(
      body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
      requestOptions,
    )
    const choice = completion.choices[0]
    const calls = (choice?.message.tool_calls ?? []).flatMap((call) =>
      call.type === 'function' ? [call as ChatToolCall] : [],
    )
    return {
      message: assistantFrom(choice?.message.content ?? '', calls),
      usage: parseUsage(completion.usage),
      stopReason: mapFinishReason(choice?.finish_reason),
      responseId: completion.id,
    }
  } catch (error) {
    throw toProviderError(error)
  }
}

/**
 * An OpenAI SDK client for an endpoint, once the SDK has loaded; retries are the loop's job, so the SDK
 * makes none.
 */
export async function openAIClient(endpoint: Endpoint): Promise<OpenAI> {
  const { default: OpenAI } = await loadSdk('openai')
  return new OpenAI({
    apiKey: endpoint.apiKey,
    baseURL: endpoint.baseURL,
    maxRetries: 0,
    fetch: endpoint.fetch ?? lateBoundFetch,
  })
}

/** The openai-chat adapter. */
export function openAIChatAdapter(endpoint: Endpoint): ProviderAdapter {
  const client = lazy(() => openAIClient(endpoint))
  return {
    provider: 'openai-chat',
    api: 'openai-chat',
    buildRequest: buildOpenAIChatRequest,
    parseUsage: parseOpenAIUsage,
    send: async (request, options) => sendChat(await client(), request, options, parseOpenAIUsage),
  }
}
