// The in-process capture: a MockContext's requests (the MSW handlers in a user's own tests) told into
// sessions and recorded as exchanges, exactly as `serve --record` records HTTP traffic — the usage is the
// one the handler answered with, the simulation is the one that served it.

import type { Usage } from '../../../harness/types.ts'
import { parseAnthropicUsage } from '../../../providers/anthropic.ts'
import { parseBedrockUsage } from '../../../providers/bedrock.ts'
import { compatibleProvider } from '../../../providers/compatible.ts'
import { parseCompatibleUsage } from '../../../providers/compatible-chat.ts'
import { parseDeepSeekUsage } from '../../../providers/deepseek.ts'
import { parseGeminiUsage } from '../../../providers/gemini.ts'
import type { MockContext } from '../../../providers/mock/context.ts'
import type { MockRequest } from '../../../providers/mock/request.ts'
import { wireUsage } from '../../../providers/mock/usage.ts'
import { parseOpenAIUsage } from '../../../providers/openai-chat.ts'
import { MODELED_FAILURE_MS, modeledLatencyMs } from '../../../providers/port.ts'
import { CacheSimulators } from '../../../providers/sim/index.ts'
import type { SimCounts } from '../../../providers/sim/types.ts'
import { bodyShape, compatibleProviderOfApi, type WireApi } from '../../../providers/types.ts'
import type { CapturedExchange } from '../../../providers/wire/exchange.ts'
import { CaptureTracker } from './tracker.ts'

/** The normalized usage a client of `api` receives for simulated `counts` (`simulators` tell who reports writes). */
export function servedUsage(
  simulators: CacheSimulators,
  api: WireApi,
  model: unknown,
  counts: SimCounts,
): Usage {
  const reportsWrites = typeof model === 'string' && simulators.openai.reportsWrites(model)
  const raw = wireUsage(api, counts, reportsWrites)
  switch (api) {
    case 'anthropic-messages':
      return parseAnthropicUsage(raw)
    case 'deepseek-chat':
      return parseDeepSeekUsage(raw)
    case 'gemini-generate':
      return parseGeminiUsage(raw)
    case 'openai-chat':
    case 'openai-responses':
      return parseOpenAIUsage(raw)
    case 'bedrock-converse':
      return parseBedrockUsage(raw)
    default:
      return bodyShape(api) === 'anthropic-messages'
        ? parseAnthropicUsage(raw)
        : parseCompatibleUsage(compatibleProvider(compatibleProviderOfApi(api)).cache.usage, raw)
  }
}

/**
 * Record every request `context` serves into a new tracker: each request is told into its session before
 * it is simulated (so its simulation has the session's previous request), and recorded once answered.
 */
export function recordContext(
  context: MockContext,
  sink: (exchange: CapturedExchange) => void,
): CaptureTracker {
  const tracker = new CaptureTracker({
    linearize: (api, body) => context.simulators.linearize(api, body),
    sink,
    shadow: new CacheSimulators(),
  })
  const place = (api: WireApi, request: MockRequest) =>
    tracker.place(api, request.session, request.body, request.headers)
  context.previousFor = (api, request) => tracker.previous(place(api, request).conversation)
  context.sessionFor = (api, request) => place(api, request).session
  context.placementFor = place
  context.observer = (call) => {
    const placement = tracker.place(call.api, call.session, call.body, call.headers)
    // A failed answer (a fault inside it) gave the client no usage, though the prompt was simulated.
    const usage =
      call.simulation === undefined || call.status >= 400 || call.failure !== undefined
        ? undefined
        : servedUsage(context.simulators, call.api, call.body.model, call.simulation.counts)
    tracker.add({
      placement,
      api: call.api,
      body: call.body,
      at: call.at,
      status: call.status,
      latencyMs: usage === undefined ? MODELED_FAILURE_MS : modeledLatencyMs(usage),
      stream: call.body.stream === true,
      ...(usage !== undefined ? { usage } : {}),
      ...(call.simulation !== undefined ? { simulation: call.simulation } : {}),
      predicted: false,
      ...(call.status >= 400
        ? { error: `HTTP ${call.status}` }
        : call.failure !== undefined
          ? { error: call.failure }
          : {}),
    })
  }
  return tracker
}
