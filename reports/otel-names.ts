// Every attribute name cachelab writes on an OpenTelemetry span, in one place: the GenAI semantic
// conventions, the OpenInference names (Arize Phoenix) as an option, and cachelab's own. The npm constants
// (`@opentelemetry/semantic-conventions/incubating`) are experimental and marked deprecated since the GenAI
// definitions moved to their own repository, so the names are spelled here instead.

import type { Vendor } from '../providers/catalog.ts'

/** Which vocabulary the usage attributes are written in; cachelab's own names are always written. */
export type OtelNameSet = 'genai' | 'openinference' | 'both'

export const OTEL_NAME_SETS: readonly OtelNameSet[] = ['genai', 'openinference', 'both']

/**
 * OpenTelemetry semantic conventions for generative AI, as of semantic-conventions v1.41.0 (status
 * Development; docs/gen-ai/gen-ai-spans.md and anthropic.md), the last release that carries them before
 * they moved to open-telemetry/semantic-conventions-genai. `input_tokens` SHOULD include cached tokens,
 * read and written alike: for Anthropic that is input + cache_read + cache_creation, which is cachelab's
 * `input_tokens` (the sum of its disjoint buckets).
 */
export const GEN_AI = {
  /** The operation: `chat` for every request cachelab reports. */
  operationName: 'gen_ai.operation.name',
  /** `anthropic`, `openai`, `deepseek`: the provider as the client knows it. */
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  /** The session: the same value on every request of it. */
  conversationId: 'gen_ai.conversation.id',
  /** All input tokens, cached (read or written) included. */
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  /** Input tokens served from the provider's cache (part of `input_tokens`). */
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  /** Input tokens written to the provider's cache (part of `input_tokens`). */
  usageCacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  /** Conditionally required when the operation ended in an error (a general attribute, stable). */
  errorType: 'error.type',
} as const

/** `gen_ai.operation.name` of a request: every port's request is a chat completion. */
export const GEN_AI_OPERATION_CHAT = 'chat'

/** `error.type` when the error's class is not known (the row keeps only that the attempt failed). */
export const ERROR_TYPE_OTHER = '_OTHER'

/** The `gen_ai.provider.name` (and OpenInference `llm.provider`) value of a vendor: the spec's own values. */
export function providerNameOf(vendor: Vendor): string {
  switch (vendor) {
    case 'anthropic':
      return 'anthropic'
    case 'openai':
      return 'openai'
    case 'deepseek':
      return 'deepseek'
    case 'gemini':
      // The semantic conventions' value for the Gemini API (AI Studio), as opposed to Vertex AI.
      return 'gcp.gemini'
    case 'bedrock':
      return 'aws.bedrock'
    default:
      // A compatible provider: the spec has no value for it, so its own id (the spec allows custom values).
      return vendor
  }
}

/**
 * OpenInference semantic conventions (Arize-ai/openinference spec/semantic_conventions.md), read by
 * Phoenix. `llm.token_count.prompt` includes cached tokens, as GenAI's `input_tokens` does.
 */
export const OPEN_INFERENCE = {
  /** `LLM` on a request, `AGENT` on a session's root span. */
  spanKind: 'openinference.span.kind',
  modelName: 'llm.model_name',
  provider: 'llm.provider',
  system: 'llm.system',
  /** The session: Phoenix groups traces by it. */
  sessionId: 'session.id',
  tokenCountPrompt: 'llm.token_count.prompt',
  tokenCountCompletion: 'llm.token_count.completion',
  tokenCountTotal: 'llm.token_count.total',
  tokenCountCacheRead: 'llm.token_count.prompt_details.cache_read',
  tokenCountCacheWrite: 'llm.token_count.prompt_details.cache_write',
  /** Dollars of the request. */
  costTotal: 'llm.cost.total',
} as const

/** `openinference.span.kind` values cachelab writes. */
export const OPEN_INFERENCE_KIND = { llm: 'LLM', agent: 'AGENT' } as const

/** cachelab's own attributes: what no convention names (the row's columns of steps.csv and summary.csv). */
export const CACHELAB = {
  runId: 'cachelab.run.id',
  scenario: 'cachelab.scenario',
  variant: 'cachelab.variant',
  /** cachelab's provider id (`openai-chat`, `openai-responses`, …): the wire API, finer than the vendor. */
  provider: 'cachelab.provider',
  route: 'cachelab.route',
  turn: 'cachelab.turn',
  step: 'cachelab.step',
  attempt: 'cachelab.attempt',
  headerReason: 'cachelab.header_reason',
  startsSeries: 'cachelab.starts_series',
  /** The session's first successful request: outside the warm hit ratio. */
  cold: 'cachelab.cold',
  /** The disjoint bucket: input tokens neither read from nor written to the cache. */
  uncachedTokens: 'cachelab.uncached_tokens',
  /** cache_read / input. */
  hitRatio: 'cachelab.hit_ratio',
  idealCacheReadTokens: 'cachelab.ideal_cache_read_tokens',
  /** ideal − read. */
  lostTokens: 'cachelab.lost_tokens',
  breakCause: 'cachelab.break.cause',
  breakNode: 'cachelab.break.node',
  breakEventSeq: 'cachelab.break.event_seq',
  /** Why the provider side cost tokens on top of `lost_tokens` (`ttl-expired`, `lookback-miss`, …). */
  providerBreakCause: 'cachelab.provider_break.cause',
  providerBreakLostTokens: 'cachelab.provider_break.lost_tokens',
  providerBreakLostUsd: 'cachelab.provider_break.lost_usd',
  costUsd: 'cachelab.cost_usd',
  idealCostUsd: 'cachelab.ideal_cost_usd',
  /** Seconds of the session's virtual clock at which the request was sent. */
  virtualTimeS: 'cachelab.virtual_time_s',
  predictedCacheReadTokens: 'cachelab.predicted.cache_read_tokens',
  predictedCacheWriteTokens: 'cachelab.predicted.cache_write_tokens',
  /** True on a request the provider answered without reporting its usage: no usage attribute is written. */
  usageNotReported: 'cachelab.usage_not_reported',
  /** Session root span: successful requests, failed attempts, breaks, warm hit ratio. */
  sessionRequests: 'cachelab.session.requests',
  sessionFailedAttempts: 'cachelab.session.failed_attempts',
  sessionBreaks: 'cachelab.session.breaks',
  sessionHitRatioWarm: 'cachelab.session.hit_ratio_warm',
  sessionLostTokens: 'cachelab.session.lost_tokens',
  sessionCostUsd: 'cachelab.session.cost_usd',
  /** Requests of the session answered without usage (left out of its tokens and cost). */
  sessionUsageNotReported: 'cachelab.session.usage_not_reported',
} as const

/** Resource and instrumentation-scope names (general semantic conventions, stable). */
export const RESOURCE = { serviceName: 'service.name' } as const

/** `service.name` and the instrumentation scope of every span cachelab exports. */
export const CACHELAB_SERVICE = 'cachelab'
