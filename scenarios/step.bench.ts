// Benchmark (a): one simulated step end to end (loop → adapter → SDK → MSW → simulator → report row)
// beside a bare MSW round trip through the same SDK that answers a fixed body for the same request,
// so the ratio is cachelab's own cost on top of the transport.

import { HttpResponse, http } from 'msw'
import { setupServer } from 'msw/node'
import OpenAI from 'openai'
import { Bench } from 'tinybench'
import { VirtualClock } from '../harness/clock.ts'
import { AgentLoop } from '../harness/loop.ts'
import { DEFAULT_POLICIES } from '../harness/policies.ts'
import type { RequestRecord, World } from '../harness/ports.ts'
import { seededRandom } from '../harness/random.ts'
import { DEFAULT_PACE, resolveText, type TurnScript } from '../harness/script.ts'
import { lateBoundFetch, SIMULATED_KEY } from '../providers/endpoints.ts'
import { adapterPort, createAdapter, resolveModel, simulatedEndpoint } from '../providers/index.ts'
import { MockContext } from '../providers/mock/context.ts'
import { mockHandlers } from '../providers/mock/handlers.ts'
import { SessionRowBuilder } from '../reports/session-row-builder.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import { defaultBuild } from './run.ts'

const BARE_URL = 'https://bare.invalid/v1'

export interface StepFigures {
  /** Median milliseconds of one full simulated step. */
  stepMs: number
  /** Median milliseconds of the bare SDK → MSW round trip with the same request body. */
  bareMs: number
  ratio: number
  /** Input tokens of the measured requests. */
  promptTokens: number
}

/** Run the benchmark: a session warmed with `warmTurns` turns, then one-step turns measured. */
export async function benchStep(warmTurns = 30, iterations = 200): Promise<StepFigures> {
  const context = new MockContext()
  let lastBody: Record<string, unknown> = {}
  const fixed = {
    id: 'x',
    object: 'chat.completion',
    created: 0,
    model: 'gpt-5.4',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'ok', refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  }
  const server = setupServer(
    ...mockHandlers(context),
    http.post(`${BARE_URL}/chat/completions`, async ({ request }) => {
      await request.json()
      return HttpResponse.json(fixed)
    }),
  )
  server.listen({ onUnhandledRequest: 'error' })
  try {
    const entry = resolveModel('openai-chat')
    const adapter = createAdapter('openai-chat', simulatedEndpoint('openai-chat'))
    const port = adapterPort({
      adapter,
      build: defaultBuild('openai-chat', 'bench', false),
      mode: 'simulated',
    })
    const clock = new VirtualClock()
    let loop: AgentLoop | undefined
    const rows = new SessionRowBuilder({
      runId: 'bench',
      scenario: 'bench',
      variant: 'default',
      provider: 'openai-chat',
      model: entry.model,
      prices: entry.prices,
      get log() {
        return loop?.session.log ?? []
      },
    })
    let tokens = 0
    context.observer = (call) => {
      lastBody = call.body
      tokens = call.simulation?.counts.input ?? tokens
    }
    const onRequest = (record: RequestRecord) => {
      const simulation = context.simulators.linearize('openai-chat', record.outcome.wire?.body ?? {})
      rows.add(record, {
        prompt: simulation,
        trace: { carry: { tokens: 0, liveUntil: 0 }, matched: 0 },
        counts: { input: 0, read: 0, write: 0, write5m: 0, write1h: 0, uncached: 0, output: 0 },
      })
    }
    loop = AgentLoop.start(
      { sessionId: 'bench', clock, random: seededRandom(1), llm: port, onRequest },
      {
        policies: DEFAULT_POLICIES,
        route: entry.route,
        toolUpdate: entry.toolUpdate,
        pace: DEFAULT_PACE,
        maxRetries: 2,
      },
    )
    const world: World = {
      system: resolveText(agentSystemPrompt(4000, 'bench'), 'bench'),
      tools: CODING_TOOLS,
      config: { provider: 'openai-chat', model: entry.model },
      prefixSource: '',
    }
    for (const turn of codingTurns(warmTurns, { seed: 'bench', resultTokens: 300 }))
      await loop.turn(turn, world)
    const client = new OpenAI({
      apiKey: SIMULATED_KEY,
      baseURL: BARE_URL,
      maxRetries: 0,
      fetch: lateBoundFetch,
    })
    let turn = 0
    const step: TurnScript = { kind: 'turn', user: 'And the next one?', steps: [{ text: 'Done.' }] }
    const bench = new Bench({ name: 'one step', iterations, time: 0, warmupIterations: 10, warmupTime: 0 })
    bench
      .add('simulated step (loop → SDK → MSW → simulator → row)', async () => {
        turn += 1
        await loop.turn({ ...step, user: `${step.user as string} ${turn}` }, world)
      })
      .add('bare SDK → MSW round trip, same body', async () => {
        await client.chat.completions.create(
          lastBody as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
        )
      })
    await bench.run()
    const median = (index: number) => {
      const result = bench.tasks[index]?.result
      return result !== undefined && 'latency' in result ? result.latency.p50 : Number.NaN
    }
    return { stepMs: median(0), bareMs: median(1), ratio: median(0) / median(1), promptTokens: tokens }
  } finally {
    server.close()
  }
}
