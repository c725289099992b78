// The loop's provider port over an adapter: build the wire body, send it through the SDK, and turn the
// reply or failure into an outcome. Simulated runs tell the mock what the model answers and when (two
// headers) and take latency from a model of the provider; live runs measure it.

import type { LlmOutcome, LlmPort } from '../harness/loop.ts'
import type { Usage } from '../harness/types.ts'
import { encodeScript, SCRIPT_HEADER, SESSION_HEADER, TIME_HEADER } from './mock/script.ts'
import { toProviderError } from './sdk-errors.ts'
import type { BuildOptions, ProviderAdapter } from './types.ts'

/**
 * Modeled latency of a simulated request, deterministic: a fixed overhead, prefill of uncached and
 * written tokens, a cheaper read of cached tokens, and decoding of the output.
 */
export function modeledLatencyMs(usage: Usage): number {
  const prefill = usage.uncached * 0.05 + (usage.cacheWrite ?? 0) * 0.06 + (usage.cacheRead ?? 0) * 0.004
  return Math.round(200 + prefill + usage.output * 15)
}

/** Latency of a simulated failure that returns before any output. */
export const MODELED_FAILURE_MS = 60

export interface PortOptions {
  adapter: ProviderAdapter
  build: BuildOptions
  mode: 'simulated' | 'live'
  /** Wall clock for live latency, milliseconds. */
  now?: () => number
}

export function adapterPort(options: PortOptions): LlmPort {
  const { adapter, build, mode } = options
  const now = options.now ?? (() => performance.now())
  return {
    async send(call): Promise<LlmOutcome> {
      const built = adapter.buildRequest(call.request, build)
      const wire = { body: built.body, sources: built.sources }
      const headers: Record<string, string> =
        mode === 'simulated'
          ? {
              [SCRIPT_HEADER]: encodeScript(call.scripted),
              [TIME_HEADER]: String(call.at),
              [SESSION_HEADER]: call.request.sessionId,
            }
          : {}
      const started = now()
      try {
        const reply = await adapter.send(built, { stream: build.stream, headers })
        const latencyMs = mode === 'simulated' ? modeledLatencyMs(reply.usage) : Math.round(now() - started)
        return { ok: true, message: reply.message, usage: reply.usage, latencyMs, wire }
      } catch (thrown) {
        const error = toProviderError(thrown)
        const latencyMs = mode === 'simulated' ? MODELED_FAILURE_MS : Math.round(now() - started)
        return {
          ok: false,
          error: {
            ...(error.status !== undefined ? { status: error.status } : {}),
            type: error.errorType,
            message: error.message,
            retryable: error.retryable,
          },
          ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
          latencyMs,
          wire,
        }
      }
    },
  }
}
