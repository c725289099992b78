// The adapter contract: how a provider-neutral derived request becomes a wire body, how the provider's
// usage becomes normalized buckets, and how a request is sent through the official SDK.

import { CachelabError } from '../harness/errors.ts'
import type {
  AssistantMessage,
  CompatibleProviderId,
  DerivedRequest,
  JsonValue,
  ProviderDiagnosis,
  ProviderId,
  Usage,
  WireSources,
} from '../harness/types.ts'

export type { WireSources }

/** The wire APIs cachelab speaks. DeepSeek shares the Chat Completions shape but not its usage fields. */
export type WireApi =
  | 'openai-chat'
  | 'openai-responses'
  | 'anthropic-messages'
  | 'deepseek-chat'
  /** Gemini `generateContent` (and its stream): the model and streaming come from the URL, see `sim/linearize-gemini.ts`. */
  | 'gemini-generate'
  | 'bedrock-converse'
  | CompatibleWireApi

/**
 * The API of a compatible provider: its Chat Completions (the OpenAI Chat shape, `compatible-chat:xai`) or
 * its Anthropic-compatible Messages API (`compatible-messages:deepseek-anthropic`), with the usage fields,
 * cache rules and routing key its catalog entry names.
 */
export type CompatibleWireApi = `compatible-chat:${string}` | `compatible-messages:${string}`

/** The wire shape of a compatible provider's API. */
export type CompatibleWire = 'chat' | 'messages'

/** The wire APIs with code of their own. */
export type BuiltInWireApi = Exclude<WireApi, CompatibleWireApi>

/** The model a wire body names: `model`, or `modelId` in Bedrock's Converse input; undefined when it names none. */
export function bodyModel(body: Record<string, unknown>): string | undefined {
  if (typeof body.model === 'string') return body.model
  return typeof body.modelId === 'string' ? body.modelId : undefined
}

/** Whether a wire API is built in (else a compatible provider's). */
export function isBuiltInApi(api: WireApi): api is BuiltInWireApi {
  return !api.startsWith('compatible-')
}

/** The wire API of a compatible provider (`wire`: its Chat Completions by default). */
export function compatibleApi(
  provider: CompatibleProviderId,
  wire: CompatibleWire = 'chat',
): CompatibleWireApi {
  return wire === 'chat' ? `compatible-chat:${provider}` : `compatible-messages:${provider}`
}

/** The compatible provider a compatible wire API belongs to. */
export function compatibleProviderOfApi(api: CompatibleWireApi): CompatibleProviderId {
  return api.slice(api.indexOf(':') + 1) as CompatibleProviderId
}

/**
 * The built-in API whose body shape an API has: a compatible provider's Chat Completions is OpenAI Chat,
 * its Anthropic-compatible API is Anthropic Messages. Readers of a body's shape (texts, tools, positions)
 * switch on this; readers of usage and cache rules on the API itself.
 */
export function bodyShape(api: WireApi): BuiltInWireApi {
  if (isBuiltInApi(api)) return api
  return api.startsWith('compatible-messages:') ? 'anthropic-messages' : 'openai-chat'
}

/** A wire body and its provenance. */
export interface BuiltRequest {
  provider: ProviderId
  api: WireApi
  body: Record<string, unknown>
  sources: WireSources
  /** Headers the request needs beyond the SDK's own (a compatible provider's routing header). */
  headers?: Record<string, string>
}

/** Anthropic breakpoint placement strategies. */
export type BreakpointStrategy = 'automatic' | 'last-message' | 'system-and-last' | 'rolling' | 'none'

/** Options of request building; each provider reads the ones that concern it. */
export interface BuildOptions {
  stream: boolean
  /** OpenAI / DeepSeek: `prompt_cache_key` (sessions are routed by it). */
  promptCacheKey?: string
  /** OpenAI before GPT-5.6: `prompt_cache_retention`. */
  retention?: 'in_memory' | '24h'
  /** OpenAI GPT-5.6+: `prompt_cache_options.ttl`. */
  cacheTtl?: '30m'
  /** Anthropic: where `cache_control` markers go. */
  breakpoints?: BreakpointStrategy
  /** Anthropic: the lifetime of the markers cachelab places. */
  anthropicTtl?: '5m' | '1h'
  /**
   * Gemini: hold the request head (system instruction and tools) in an explicit context cache of this
   * lifetime (seconds), created on first use and named by `cachedContent` (notes/2026-11-30-gemini-explicit-caches.md).
   */
  geminiCacheTtlSeconds?: number
}

/** Why the model stopped. */
export type StopReason = 'end' | 'tool-calls' | 'max-tokens' | 'error'

/** A successful provider reply, normalized. */
export interface ProviderReply {
  message: AssistantMessage
  usage: Usage
  stopReason: StopReason
  /** The provider's response id. */
  responseId: string
  /** The provider's cache diagnostics, when the response carries them (see diagnostics.ts). */
  diagnosis?: ProviderDiagnosis
}

/** Per-send options: headers cachelab adds (the simulator's script and clock) and streaming. */
export interface SendOptions {
  stream: boolean
  headers: Record<string, string>
  signal?: AbortSignal
}

/**
 * A provider call that failed: the HTTP status (when there was one), the provider's error type, whether
 * the SDK's rules retry it, and the delay the provider asked for.
 */
export class ProviderError extends CachelabError {
  readonly status: number | undefined
  readonly errorType: string
  readonly retryable: boolean
  readonly retryAfterMs: number | undefined
  readonly body: JsonValue | undefined

  constructor(details: {
    status?: number
    errorType: string
    message: string
    retryable: boolean
    retryAfterMs?: number
    body?: JsonValue
  }) {
    super('provider', details.message)
    this.name = 'ProviderError'
    this.status = details.status
    this.errorType = details.errorType
    this.retryable = details.retryable
    this.retryAfterMs = details.retryAfterMs
    this.body = details.body
  }
}

/** One wire API over one official SDK. */
export interface ProviderAdapter {
  readonly provider: ProviderId
  readonly api: WireApi
  /** The wire body for a derived request (pure). */
  buildRequest(request: DerivedRequest, options: BuildOptions): BuiltRequest
  /** Normalized usage from the provider's usage object (pure). */
  parseUsage(raw: unknown): Usage
  /** Send through the SDK; failures throw `ProviderError`. */
  send(request: BuiltRequest, options: SendOptions): Promise<ProviderReply>
}
