// The cache simulator alone over a sequence of wire request bodies: per request the normalized usage and
// the provider-shaped usage object, or the error the provider would answer. `cachelab simulate` and the
// library's `simulate` are thin shells over this.

import { CachelabError } from '../harness/errors.ts'
import type { AssistantMessage, ProviderId, Usage } from '../harness/types.ts'
import { findCompatible } from './compatible.ts'
import { simulatedEndpoint } from './endpoints.ts'
import { createAdapter } from './index.ts'
import { DEFAULT_REPLY } from './mock/script.ts'
import { wireUsage } from './mock/usage.ts'
import { CacheSimulators } from './sim/index.ts'
import { SimulatorRejection } from './sim/types.ts'

/** One request to simulate. */
export interface SimulationInput {
  /** The provider's wire request body, as the SDK would send it; `model` may come from the options. */
  body: Record<string, unknown>
  /** Request start in seconds of virtual time, not before the previous request's; the previous one's when absent. */
  at?: number
  /** The answer's text (it becomes output and the history a next request may extend); `OK.` when absent. */
  output?: string
  /** Request headers the provider reads (a compatible provider's routing header, such as `x-grok-conv-id`). */
  headers?: Record<string, string>
}

/** What one request gets: its usage, or the refusal the real API would answer. */
export type SimulationOutput =
  | {
      /** Normalized usage in disjoint buckets (`input = uncached + cacheRead + cacheWrite`). */
      usage: Omit<Usage, 'raw'>
      /** The usage object as the provider's API reports it. */
      raw: Record<string, unknown>
    }
  | {
      /** The HTTP status and error body the provider would answer with. */
      error: { status: number; body: Record<string, unknown> }
    }

/** Options of `simulate`. */
export interface SimulateOptions {
  /** The model of bodies that name none. */
  model?: string
  /** How an error names a request (`file:line` in the CLI); `request N`, counted from 1, when absent. */
  label?: (index: number) => string
}

/**
 * One provider's simulator as one account's requests, fed one at a time: what `simulate` runs over an
 * array, and what `cachelab simulate` runs over a file line by line, so that no input is held once its
 * output is written. `step` throws a `CachelabError` (kind `input`) naming the request when an input is
 * malformed.
 */
export function simulationStepper(
  provider: ProviderId,
  options: SimulateOptions = {},
): (input: SimulationInput, index: number) => SimulationOutput {
  const label = options.label ?? ((index: number) => `request ${index + 1}`)
  const adapter = createAdapter(provider, simulatedEndpoint(provider))
  const simulators = new CacheSimulators()
  const routing = findCompatible(provider)?.cache.routing
  let at = 0
  return (input, index) => {
    if (input.at !== undefined) {
      if (typeof input.at !== 'number' || !Number.isFinite(input.at) || input.at < at) {
        throw new CachelabError(
          'input',
          `${label(index)}: "at" must be a number of seconds, not before the previous request's`,
        )
      }
      at = input.at
    }
    const body = { ...input.body }
    // Bedrock's body is the Converse command input, whose model is `modelId`.
    const modelKey = adapter.api === 'bedrock-converse' ? 'modelId' : 'model'
    if (body[modelKey] === undefined && options.model !== undefined) body[modelKey] = options.model
    const model = body[modelKey]
    if (typeof model !== 'string')
      throw new CachelabError(
        'input',
        `${label(index)}: the body has no model (give one: --model, or the model option)`,
      )
    const output: AssistantMessage =
      input.output === undefined
        ? DEFAULT_REPLY
        : { role: 'assistant', content: [{ type: 'text', text: input.output }] }
    try {
      const routingKey =
        routing?.kind === 'header'
          ? Object.entries(input.headers ?? {}).find(([name]) => name.toLowerCase() === routing.name)?.[1]
          : undefined
      const simulation = simulators.simulate(adapter.api, {
        body,
        at,
        output,
        ...(routingKey !== undefined ? { routingKey } : {}),
      })
      const raw = wireUsage(adapter.api, simulation.counts, simulators.openai.reportsWrites(model))
      const { raw: _kept, ...usage } = adapter.parseUsage(raw)
      return { usage, raw }
    } catch (error) {
      if (!(error instanceof SimulatorRejection)) throw error
      return { error: { status: error.status, body: error.body } }
    }
  }
}

/**
 * Run one provider's simulator over `inputs` in order, on one cache and one clock, as one account's
 * requests. Throws a `CachelabError` (kind `input`) naming the request when an input is malformed.
 */
export function simulate(
  provider: ProviderId,
  inputs: readonly SimulationInput[],
  options: SimulateOptions = {},
): SimulationOutput[] {
  const step = simulationStepper(provider, options)
  return inputs.map((input, index) => step(input, index))
}
