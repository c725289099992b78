// Test helpers for the loop: a provider port that answers with the script and records every request,
// and a loop factory over it. Used by the harness's own tests and the scenario tests.

import { VirtualClock } from './clock.ts'
import { AgentLoop } from './loop.ts'
import { DEFAULT_POLICIES, type Policies, type ToolUpdatePolicy } from './policies.ts'
import type { LlmCall, LlmOutcome, LlmPort, LoopSetup, RequestRecord, World } from './ports.ts'
import { seededRandom } from './random.ts'
import { DEFAULT_PACE } from './script.ts'
import type { AdapterConfigDefaults, AttemptError, Route, SessionEvent, ToolSchema } from './types.ts'

/** A port that answers every call with its script, or fails the calls listed in `failures`. */
export class RecordingPort implements LlmPort {
  readonly calls: LlmCall[] = []
  private readonly failures: Array<{ error: AttemptError; retryAfterMs?: number }> = []

  failNext(error: AttemptError, retryAfterMs?: number): void {
    this.failures.push({ error, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) })
  }

  async send(call: LlmCall): Promise<LlmOutcome> {
    this.calls.push(call)
    const failure = this.failures.shift()
    const wire = {
      body: { request: call.request } as Record<string, unknown>,
      sources: { system: [], tools: [], messages: [] },
    }
    if (failure !== undefined) return { ok: false, ...failure, latencyMs: 50, wire }
    // Usage is not what these tests measure: a size that grows with the history is enough.
    const input = 100 + call.request.messages.length * 10
    return {
      ok: true,
      message: call.scripted,
      usage: { input, uncached: input, output: 5, raw: null },
      latencyMs: 100,
      wire,
    }
  }
}

export interface TestLoop {
  loop: AgentLoop
  port: RecordingPort
  world: World
  records: RequestRecord[]
  events: SessionEvent[]
  clock: VirtualClock
  /** The setup the loop started with; a resumed loop takes it over. */
  setup: LoopSetup
}

export const TEST_TOOLS: ToolSchema[] = [
  {
    name: 'read_file',
    description: 'Read a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
]

/** A loop over a recording port with the given policies and route. */
export function testLoop(
  options: {
    policies?: Partial<Policies>
    route?: Route
    toolUpdate?: ToolUpdatePolicy
    adapterDefaults?: AdapterConfigDefaults
    world?: Partial<World>
  } = {},
): TestLoop {
  const port = new RecordingPort()
  const records: RequestRecord[] = []
  const events: SessionEvent[] = []
  const clock = new VirtualClock()
  const setup: LoopSetup = {
    policies: { ...DEFAULT_POLICIES, ...options.policies },
    route: options.route ?? 'in-history',
    toolUpdate: options.toolUpdate ?? 'unsupported',
    ...(options.adapterDefaults !== undefined ? { adapterDefaults: options.adapterDefaults } : {}),
    pace: DEFAULT_PACE,
    maxRetries: 2,
  }
  const loop = AgentLoop.start(
    {
      sessionId: 'test',
      clock,
      random: seededRandom(1),
      llm: port,
      sink: (event) => events.push(event),
      onRequest: (record) => records.push(record),
    },
    setup,
  )
  const world: World = {
    system: 'You are a test agent.',
    tools: TEST_TOOLS,
    config: { provider: 'deepseek', model: 'deepseek-flash' },
    prefixSource: 'skills: a, b',
    ...options.world,
  }
  return { loop, port, world, records, events, clock, setup }
}

/**
 * A new loop instance over the log `first` has written so far, as after a process restart: same port,
 * clock and setup, a fresh random stream; its events go on to `first.events`.
 */
export function resumeTestLoop(first: TestLoop): AgentLoop {
  return AgentLoop.resume(
    {
      sessionId: 'test',
      clock: first.clock,
      random: seededRandom(2),
      llm: first.port,
      sink: (event) => first.events.push(event),
    },
    first.setup,
    [...first.events],
  )
}

/** A one-step turn with text only. */
export const say = (text: string) => ({ kind: 'turn' as const, user: text, steps: [{ text: 'ok' }] })

/** A two-step turn: a tool call, then text. */
export const withTool = (text: string, result = 'file contents') => ({
  kind: 'turn' as const,
  user: text,
  steps: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' }, result }] }, { text: 'done' }],
})
