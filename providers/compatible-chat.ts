// A compatible provider's Chat Completions over the `openai` SDK: OpenAI's Chat body and sending, with the
// routing key where the provider reads it and the usage fields its catalog entry names.

import type { CompatibleProviderId, DerivedRequest, JsonValue, Usage } from '../harness/types.ts'
import { chatMessages, chatTools } from './chat-wire.ts'
import { type CompatibleProvider, compatibleProvider, type UsageFields } from './compatible.ts'
import type { Endpoint } from './endpoints.ts'
import { openAIClient, sendChat } from './openai-chat.ts'
import { lazy } from './sdks.ts'
import type { SimCounts } from './sim/types.ts'
import { type BuildOptions, type BuiltRequest, compatibleApi, type ProviderAdapter } from './types.ts'

type Raw = Record<string, unknown>

const record = (value: unknown): Raw => (typeof value === 'object' && value !== null ? (value as Raw) : {})
const optionalNumber = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined)

/** The value at a dotted path (`prompt_tokens_details.cached_tokens`) of a usage object. */
function valueAt(usage: Raw, path: string): unknown {
  return path.split('.').reduce<unknown>((value, key) => record(value)[key], usage)
}

/** A copy of `usage` with `value` at a dotted path, creating the objects on the way. */
function withValueAt(usage: Raw, path: string, value: number): Raw {
  const [key, ...rest] = path.split('.')
  if (key === undefined) return usage
  return {
    ...usage,
    [key]: rest.length === 0 ? value : withValueAt(record(usage[key]), rest.join('.'), value),
  }
}

/**
 * Normalize a compatible provider's usage: `prompt_tokens` includes cached (and written) tokens; the read
 * is the named field, else the total less the named miss field; the write is reported only where named.
 */
export function parseCompatibleUsage(fields: UsageFields, raw: unknown): Usage {
  const usage = record(raw)
  const input = optionalNumber(usage.prompt_tokens) ?? 0
  const miss = fields.cacheMiss === undefined ? undefined : optionalNumber(valueAt(usage, fields.cacheMiss))
  const cacheRead =
    optionalNumber(valueAt(usage, fields.cacheRead)) ?? (miss !== undefined ? input - miss : undefined)
  const cacheWrite =
    fields.cacheWrite === undefined ? undefined : optionalNumber(valueAt(usage, fields.cacheWrite))
  const reasoning = optionalNumber(record(usage.completion_tokens_details).reasoning_tokens)
  return {
    input,
    uncached: input - (cacheRead ?? 0) - (cacheWrite ?? 0),
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    output: optionalNumber(usage.completion_tokens) ?? 0,
    ...(reasoning !== undefined ? { reasoning } : {}),
    raw: (raw ?? null) as JsonValue,
  }
}

/** The usage object a compatible provider returns for simulated counts, its cache fields where it names them. */
export function compatibleWireUsage(provider: CompatibleProvider, counts: SimCounts): Raw {
  let usage: Raw = {
    prompt_tokens: counts.input,
    completion_tokens: counts.output,
    total_tokens: counts.input + counts.output,
    ...(counts.reasoning !== undefined
      ? { completion_tokens_details: { reasoning_tokens: counts.reasoning } }
      : {}),
  }
  const fields = provider.cache.usage
  usage = withValueAt(usage, fields.cacheRead, counts.read)
  if (fields.cacheMiss !== undefined) usage = withValueAt(usage, fields.cacheMiss, counts.input - counts.read)
  if (fields.cacheWrite !== undefined) usage = withValueAt(usage, fields.cacheWrite, counts.write)
  return usage
}

/**
 * The Chat Completions body of a derived request for a compatible provider. Developer messages travel as
 * `system` and the cap as `max_tokens` (the forms every compatible API takes); the session's cache key goes
 * where the provider reads it (a body field or a header), and nowhere when it routes by the prompt alone.
 */
export function buildCompatibleRequest(
  provider: CompatibleProvider,
  request: DerivedRequest,
  options: BuildOptions,
): BuiltRequest {
  const { messages, sources } = chatMessages(request, 'system')
  const tools = chatTools(request)
  const routing = provider.cache.routing
  const key = options.promptCacheKey
  const body: Raw = {
    model: request.config.model,
    messages,
    ...(tools.length > 0 ? { tools } : {}),
    ...(request.config.maxTokens !== undefined ? { max_tokens: request.config.maxTokens } : {}),
    ...(request.config.temperature !== undefined ? { temperature: request.config.temperature } : {}),
    ...(routing.kind === 'body' && key !== undefined ? { [routing.field]: key } : {}),
    ...(options.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  }
  return {
    provider: provider.id,
    api: compatibleApi(provider.id),
    body,
    sources: {
      system: [],
      tools: request.toolsSeq !== undefined ? [request.toolsSeq] : [],
      messages: sources,
    },
    ...(routing.kind === 'header' && key !== undefined ? { headers: { [routing.name]: key } } : {}),
  }
}

/** The adapter of a compatible provider; the endpoint carries its base URL. */
export function compatibleAdapter(id: CompatibleProviderId, endpoint: Endpoint): ProviderAdapter {
  const provider = compatibleProvider(id)
  const client = lazy(() => openAIClient(endpoint))
  const parseUsage = (raw: unknown) => parseCompatibleUsage(provider.cache.usage, raw)
  return {
    provider: id,
    api: compatibleApi(id),
    buildRequest: (request, options) => buildCompatibleRequest(provider, request, options),
    parseUsage,
    send: async (request, options) => sendChat(await client(), request, options, parseUsage),
  }
}
