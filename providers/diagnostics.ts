// Asking a provider for its own cache diagnostics and reading its answer: Anthropic's `diagnostics`
// (Claude API only) and OpenAI Responses' `prompt_cache_diagnostics` (GPT-5.6 and later), each against
// the session's previous request. The shapes are the providers' documented ones (notes/2026-12-07-provider-diagnostics.md).

import type { ProviderDiagnosis } from '../harness/types.ts'
import type { ModelEntry } from './catalog.ts'
import type { WireApi } from './types.ts'

/**
 * Whether a request of `api` on `model` can ask for the provider's cache diagnostics: Anthropic's Messages
 * on the Claude API (not an Anthropic-compatible provider's, not Bedrock), and OpenAI Responses on a model
 * with breakpoint caching (GPT-5.6 and later; an older model refuses `prompt_cache_options`).
 */
export function diagnosable(api: WireApi, model: ModelEntry): boolean {
  if (api === 'anthropic-messages') return model.vendor === 'anthropic'
  return api === 'openai-responses' && model.cache.kind === 'openai-breakpoint'
}

/**
 * A body that asks for the diagnostics against the response `previous` (undefined on a session's first
 * request). Anthropic: `diagnostics: {previous_message_id}` on every request, null on the first (the
 * object is the opt-in: the API keeps a fingerprint only of a request that carries it). OpenAI:
 * `prompt_cache_options.comparison_response_id` from the second request on, the options it had kept.
 */
export function askDiagnostics(
  api: WireApi,
  body: Record<string, unknown>,
  previous: string | undefined,
): Record<string, unknown> {
  if (api === 'anthropic-messages') return { ...body, diagnostics: { previous_message_id: previous ?? null } }
  if (previous === undefined) return body
  const options = body.prompt_cache_options
  const kept = typeof options === 'object' && options !== null ? options : {}
  return { ...body, prompt_cache_options: { ...kept, comparison_response_id: previous } }
}

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined

/**
 * Anthropic's answer, from a Message's (or `message_start`'s) `diagnostics`: null is `none` (nothing
 * diverged), `{cache_miss_reason: null}` is `pending`, else the reason's `type` and its
 * `cache_missed_input_tokens`. Undefined when the field is absent.
 */
export function readAnthropicDiagnostics(diagnostics: unknown): ProviderDiagnosis | undefined {
  if (diagnostics === undefined) return undefined
  if (diagnostics === null) return { reason: 'none' }
  const reason = asRecord(asRecord(diagnostics)?.cache_miss_reason)
  if (reason === undefined) return { reason: 'pending' }
  const missed = count(reason.cache_missed_input_tokens)
  return {
    reason: typeof reason.type === 'string' ? reason.type : 'unknown',
    ...(missed !== undefined ? { missedTokens: missed } : {}),
  }
}

/**
 * OpenAI's answer, from a Response's `prompt_cache_diagnostics`: a `cache_miss` by its `reason` and
 * `cache_missed_tokens`, any other outcome by its `type` (`cache_hit`, `comparison_response_not_found`,
 * `unavailable`). Undefined when the field is absent or null.
 */
export function readResponsesDiagnostics(diagnostics: unknown): ProviderDiagnosis | undefined {
  const record = asRecord(diagnostics)
  if (record === undefined) return undefined
  const type = typeof record.type === 'string' ? record.type : 'unknown'
  if (type !== 'cache_miss') return { reason: type }
  const missed = count(record.cache_missed_tokens)
  return {
    reason: typeof record.reason === 'string' ? record.reason : 'unknown',
    ...(missed !== undefined ? { missedTokens: missed } : {}),
  }
}
