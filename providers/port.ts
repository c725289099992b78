// The loop's provider port over an adapter: build the wire body, send it through the SDK, and turn the
// reply or failure into an outcome. Simulated runs tell the mock what the model answers and when (two
// headers) and take latency from a model of the provider; live runs measure it.

import { CachelabError } from '../harness/errors.ts'
import type { LlmOutcome, LlmPort } from '../harness/ports.ts'
import type { Usage } from '../harness/types.ts'
import { askDiagnostics } from './diagnostics.ts'
import { encodeScript, SCRIPT_HEADER, SESSION_HEADER, TIME_HEADER } from './mock/script.ts'
import { wireUsage } from './mock/usage.ts'
import { toProviderError } from './sdk-errors.ts'
import type { CacheSimulators } from './sim/index.ts'
import { type PreviousRequest, type Simulation, SimulatorRejection } from './sim/types.ts'
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
  /** Strings (API keys) never to let through into an error message the loop logs. */
  secrets?: readonly string[]
  /**
   * Ask the provider for its cache diagnostics against the session's previous successful step (see
   * diagnostics.ts; only for an API and model `diagnosable` says can): the port is the session's, so it
   * remembers that step's response id.
   */
  diagnostics?: boolean
}

/** Replace every occurrence of a secret with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let clean = text
  for (const secret of secrets) if (secret.length >= 8) clean = clean.split(secret).join('[redacted]')
  return clean
}

export function adapterPort(options: PortOptions): LlmPort {
  const { adapter, build, mode } = options
  const now = options.now ?? (() => performance.now())
  /** The response id of the session's latest successful step: what the next request is compared with. */
  let compared: string | undefined
  return {
    async send(call): Promise<LlmOutcome> {
      const plain = adapter.buildRequest(call.request, build)
      const asking = options.diagnostics === true
      const built = asking ? { ...plain, body: askDiagnostics(adapter.api, plain.body, compared) } : plain
      // A summarizer call is compared with the step before it too, as attribution compares it.
      const comparing = asking ? compared : undefined
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
        if (asking && call.purpose === 'step') compared = reply.responseId
        const diagnosis = comparing !== undefined ? reply.diagnosis : undefined
        return {
          ok: true,
          message: reply.message,
          usage: reply.usage,
          latencyMs,
          wire,
          ...(diagnosis !== undefined ? { diagnosis } : {}),
        }
      } catch (thrown) {
        // A missing SDK is the user's to install, not a provider failure to retry.
        if (thrown instanceof CachelabError && thrown.kind === 'usage') throw thrown
        const error = toProviderError(thrown)
        const latencyMs = mode === 'simulated' ? MODELED_FAILURE_MS : Math.round(now() - started)
        return {
          ok: false,
          error: {
            ...(error.status !== undefined ? { status: error.status } : {}),
            type: error.errorType,
            message: redact(error.message, options.secrets ?? []),
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

/**
 * A port that simulates in process: the adapter's wire body goes straight into the simulator, with no
 * SDK or HTTP in between. For long replays and benchmarks; `cachelab run` goes through the SDKs.
 */
export function simulatorPort(options: {
  adapter: ProviderAdapter
  build: BuildOptions
  simulators: CacheSimulators
  /** The session's previous request, for each simulation's counterfactual (the report rows know it). */
  previous?: () => PreviousRequest | undefined
}): LlmPort & {
  /** The simulation of the last request sent (the report rows read it). */
  last: Simulation | undefined
} {
  const { adapter, build, simulators } = options
  const port = {
    last: undefined as Simulation | undefined,
    async send(call: Parameters<LlmPort['send']>[0]): Promise<LlmOutcome> {
      const built = adapter.buildRequest(call.request, build)
      const wire = { body: built.body, sources: built.sources }
      try {
        const previous = options.previous?.()
        const simulation = simulators.simulate(adapter.api, {
          body: built.body,
          at: call.at,
          output: call.scripted,
          ...(previous !== undefined ? { previous } : {}),
        })
        port.last = simulation
        const reportsWrites = simulators.openai.reportsWrites(call.request.config.model)
        const usage = adapter.parseUsage(wireUsage(adapter.api, simulation.counts, reportsWrites))
        return { ok: true, message: call.scripted, usage, latencyMs: modeledLatencyMs(usage), wire }
      } catch (error) {
        if (!(error instanceof SimulatorRejection)) throw error
        port.last = undefined
        const message = typeof error.message === 'string' ? error.message : 'rejected'
        return {
          ok: false,
          error: { status: error.status, type: 'invalid_request_error', message, retryable: false },
          latencyMs: MODELED_FAILURE_MS,
          wire,
        }
      }
    },
  }
  return port
}
