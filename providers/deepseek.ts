// DeepSeek's OpenAI-compatible Chat Completions over the `openai` SDK: the Chat body without OpenAI's
// cache parameters, and DeepSeek's usage (hit and miss counts; cache writes are not reported).

import { asRecord, optionalNumber } from '../harness/json-fields.ts'
import type { DerivedRequest, JsonValue, Usage } from '../harness/types.ts'
import { chatMessages, chatTools } from './chat-wire.ts'
import type { Endpoint } from './endpoints.ts'
import { openAIClient, sendChat } from './openai-chat.ts'
import { lazy } from './sdks.ts'
import type { BuildOptions, BuiltRequest, ProviderAdapter } from './types.ts'

/**
 * Normalize a DeepSeek usage object. `prompt_tokens` is hits plus misses; the hit count comes from
 * `prompt_cache_hit_tokens` (or the OpenAI-style `prompt_tokens_details.cached_tokens`, or the total
 * less `prompt_cache_miss_tokens`). DeepSeek bills no writes, so `cacheWrite` stays unreported.
 */
export function parseDeepSeekUsage(raw: unknown): Usage {
  const usage = asRecord(raw)
  const hit = optionalNumber(usage.prompt_cache_hit_tokens)
  const miss = optionalNumber(usage.prompt_cache_miss_tokens)
  const input = optionalNumber(usage.prompt_tokens) ?? (hit ?? 0) + (miss ?? 0)
  const cacheRead =
    hit ??
    optionalNumber(asRecord(usage.prompt_tokens_details).cached_tokens) ??
    (miss !== undefined ? input - miss : undefined)
  const reasoning = optionalNumber(asRecord(usage.completion_tokens_details).reasoning_tokens)
  return {
    input,
    uncached: input - (cacheRead ?? 0),
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    output: optionalNumber(usage.completion_tokens) ?? 0,
    ...(reasoning !== undefined ? { reasoning } : {}),
    raw: (raw ?? null) as JsonValue,
  }
}

/**
 * The DeepSeek Chat Completions body of a derived request. Developer messages travel as `system`;
 * the output cap is `max_tokens`; DeepSeek has no cache key or retention parameter, so those options
 * are ignored. Thinking mode, on by default on V4, is turned off: the loop keeps no reasoning, and in
 * thinking mode an assistant message with tool calls sent back without its `reasoning_content` is a 400.
 */
export function buildDeepSeekRequest(request: DerivedRequest, options: BuildOptions): BuiltRequest {
  const { messages, sources } = chatMessages(request, 'system')
  const tools = chatTools(request, { deferLoading: true })
  const body: Record<string, unknown> = {
    model: request.config.model,
    messages,
    ...(tools.length > 0 ? { tools } : {}),
    thinking: { type: 'disabled' },
    ...(request.config.maxTokens !== undefined ? { max_tokens: request.config.maxTokens } : {}),
    ...(request.config.temperature !== undefined ? { temperature: request.config.temperature } : {}),
    ...(options.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  }
  return {
    provider: 'deepseek',
    api: 'deepseek-chat',
    body,
    sources: {
      system: [],
      tools: request.toolsSeq !== undefined ? [request.toolsSeq] : [],
      messages: sources,
    },
  }
}

/** The deepseek adapter; the endpoint carries DeepSeek's base URL. */
export function deepSeekAdapter(endpoint: Endpoint): ProviderAdapter {
  const client = lazy(() => openAIClient(endpoint))
  return {
    provider: 'deepseek',
    api: 'deepseek-chat',
    buildRequest: buildDeepSeekRequest,
    parseUsage: parseDeepSeekUsage,
    send: async (request, options) => sendChat(await client(), request, options, parseDeepSeekUsage),
  }
}
