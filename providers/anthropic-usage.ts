// Anthropic's usage object in cachelab's disjoint buckets: apart from the adapter (anthropic.ts), so that a
// reader of recorded usage (Claude Code transcripts) loads no request building, SDK or endpoint code.

import { asRecord, optionalNumber } from '../harness/json-fields.ts'
import type { JsonValue, Usage } from '../harness/types.ts'

/**
 * Normalize an Anthropic usage object. `input_tokens` counts only the tokens after the last cache
 * breakpoint, so the request's input is it plus the cache reads and writes; the write split by TTL comes
 * from `cache_creation` when the API sends it.
 */
export function parseAnthropicUsage(raw: unknown): Usage {
  const usage = asRecord(raw)
  const uncached = optionalNumber(usage.input_tokens) ?? 0
  const cacheRead = optionalNumber(usage.cache_read_input_tokens)
  const creation =
    usage.cache_creation === undefined || usage.cache_creation === null
      ? undefined
      : asRecord(usage.cache_creation)
  const cacheWrite5m = optionalNumber(creation?.ephemeral_5m_input_tokens)
  const cacheWrite1h = optionalNumber(creation?.ephemeral_1h_input_tokens)
  const cacheWrite =
    optionalNumber(usage.cache_creation_input_tokens) ??
    (cacheWrite5m !== undefined || cacheWrite1h !== undefined
      ? (cacheWrite5m ?? 0) + (cacheWrite1h ?? 0)
      : undefined)
  const reasoning = optionalNumber(asRecord(usage.output_tokens_details).thinking_tokens)
  return usageOfBuckets(
    {
      uncached,
      cacheRead,
      cacheWrite,
      cacheWrite5m,
      cacheWrite1h,
      output: optionalNumber(usage.output_tokens) ?? 0,
      reasoning,
    },
    raw,
  )
}

/** The buckets a usage object reports, each undefined when it does not report it. */
export interface ReportedBuckets {
  uncached: number
  cacheRead: number | undefined
  cacheWrite: number | undefined
  cacheWrite5m: number | undefined
  cacheWrite1h: number | undefined
  output: number
  reasoning?: number | undefined
}

/**
 * Usage from buckets whose uncached count leaves the cache reads and writes out (Anthropic's
 * `input_tokens`, Converse's `inputTokens`): the request's input is the three added. A bucket not
 * reported stays absent.
 */
export function usageOfBuckets(buckets: ReportedBuckets, raw: unknown): Usage {
  const { uncached, cacheRead, cacheWrite, cacheWrite5m, cacheWrite1h, output, reasoning } = buckets
  return {
    input: uncached + (cacheRead ?? 0) + (cacheWrite ?? 0),
    uncached,
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    ...(cacheWrite5m !== undefined ? { cacheWrite5m } : {}),
    ...(cacheWrite1h !== undefined ? { cacheWrite1h } : {}),
    output,
    ...(reasoning !== undefined ? { reasoning } : {}),
    raw: (raw ?? null) as JsonValue,
  }
}
