import { describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { type DeepSeekCacheRules, findModel, type ModelEntry, withCacheRules } from '../catalog.ts'
import { AnthropicCacheSimulator } from './anthropic.ts'
import { BedrockCacheSimulator } from './bedrock.ts'
import { cacheableTokens } from './counterfactual.ts'
import { DeepSeekCacheSimulator } from './deepseek.ts'
import { GeminiCacheSimulator } from './gemini.ts'
import { OpenAICacheSimulator } from './openai.ts'
import type { PreviousRequest, Simulation, SimulationRequest } from './types.ts'

type Body = Record<string, unknown>
const reply: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'OK.' }] }
/** Above every minimum of the models below (Claude Haiku 4.5 and Bedrock's Haiku: 4,096). */
const SYSTEM = fillerText(5000, 'model-switch-system')
const question = (turn: number) => `Question ${turn}: ${fillerText(300, `model-switch-${turn}`)}`

/** A simulator family: two models of one vendor, a conversation body of `turns` user turns, one simulator. */
interface Family {
  name: string
  a: string
  b: string
  body: (model: string, turns: number) => Body
  simulator: () => (request: SimulationRequest) => Simulation
}

/** Alternating user and assistant turns, ending on the user's: `user(turn)` and `assistant()` render them. */
function conversation<T>(turns: number, user: (turn: number, last: boolean) => T, assistant: () => T): T[] {
  const messages: T[] = []
  for (let turn = 1; turn <= turns; turn += 1) {
    if (turn > 1) messages.push(assistant())
    messages.push(user(turn, turn === turns))
  }
  return messages
}

const anthropicBody = (model: string, turns: number): Body => ({
  model,
  max_tokens: 256,
  cache_control: { type: 'ephemeral' },
  system: [{ type: 'text', text: SYSTEM }],
  messages: conversation(
    turns,
    (turn) => ({ role: 'user', content: [{ type: 'text', text: question(turn) }] }),
    () => ({ role: 'assistant', content: [{ type: 'text', text: 'OK.' }] }),
  ),
})

const bedrockBody = (model: string, turns: number): Body => ({
  modelId: model,
  system: [{ text: SYSTEM }, { cachePoint: { type: 'default' } }],
  messages: conversation(
    turns,
    (turn, last): Body => ({
      role: 'user',
      // The latest question carries a cache point, as the automatic breakpoint marks Anthropic's.
      content: last
        ? [{ text: question(turn) }, { cachePoint: { type: 'default' } }]
        : [{ text: question(turn) }],
    }),
    (): Body => ({ role: 'assistant', content: [{ text: 'OK.' }] }),
  ),
  inferenceConfig: { maxTokens: 256 },
})

const chatBody = (model: string, turns: number): Body => ({
  model,
  messages: [
    { role: 'system', content: SYSTEM },
    ...conversation(
      turns,
      (turn) => ({ role: 'user', content: question(turn) }),
      () => ({ role: 'assistant', content: 'OK.' }),
    ),
  ],
})

const responsesBody = (model: string, turns: number): Body => ({
  model,
  instructions: SYSTEM,
  prompt_cache_key: 'model-switch',
  input: conversation(
    turns,
    (turn) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text: question(turn) }] }),
    () => ({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'OK.', annotations: [] }],
    }),
  ),
})

const geminiBody = (model: string, turns: number): Body => ({
  model,
  systemInstruction: { parts: [{ text: SYSTEM }] },
  contents: conversation(
    turns,
    (turn) => ({ role: 'user', parts: [{ text: question(turn) }] }),
    () => ({ role: 'model', parts: [{ text: 'OK.' }] }),
  ),
})

/** DeepSeek Flash on the legacy rules (64-token units of the longest common prefix), V4 Pro on the current ones. */
const legacyFlash = withCacheRules<DeepSeekCacheRules>(
  findModel('deepseek', 'deepseek-flash') as ModelEntry,
  {
    mode: 'legacy',
  },
)

const FAMILIES: readonly Family[] = [
  {
    name: 'Anthropic',
    a: 'claude-sonnet-4-6',
    b: 'claude-haiku-4-5',
    body: anthropicBody,
    simulator: () => {
      const simulator = new AnthropicCacheSimulator()
      return (request) => simulator.simulate(request)
    },
  },
  {
    name: 'Bedrock',
    a: 'anthropic.claude-sonnet-4-6',
    b: 'anthropic.claude-haiku-4-5-20251001-v1:0',
    body: bedrockBody,
    simulator: () => {
      const simulator = new BedrockCacheSimulator()
      return (request) => simulator.simulate(request)
    },
  },
  {
    name: 'DeepSeek',
    a: 'deepseek-flash',
    b: 'deepseek-v4-pro',
    body: chatBody,
    simulator: () => {
      const simulator = new DeepSeekCacheSimulator()
      return (request) => simulator.simulate('chat', request)
    },
  },
  {
    name: 'DeepSeek, legacy rules on the first model',
    a: 'deepseek-flash',
    b: 'deepseek-v4-pro',
    body: chatBody,
    simulator: () => {
      const simulator = new DeepSeekCacheSimulator({ models: [legacyFlash] })
      return (request) => simulator.simulate('chat', request)
    },
  },
  {
    name: 'Gemini',
    a: 'gemini-2.5-flash',
    b: 'gemini-2.5-pro',
    body: geminiBody,
    simulator: () => {
      const simulator = new GeminiCacheSimulator()
      return (request) => simulator.simulate(request)
    },
  },
  {
    name: 'OpenAI before GPT-5.6 (prefixes)',
    a: 'gpt-5.4',
    b: 'gpt-5.4-mini',
    body: responsesBody,
    simulator: () => {
      const simulator = new OpenAICacheSimulator()
      return (request) => simulator.simulate('responses', request)
    },
  },
  {
    name: 'OpenAI from GPT-5.6 (breakpoints)',
    a: 'gpt-5.6-sol',
    b: 'gpt-5.6-terra',
    body: responsesBody,
    simulator: () => {
      const simulator = new OpenAICacheSimulator()
      return (request) => simulator.simulate('responses', request)
    },
  },
  {
    name: 'OpenAI from a prefix model to a breakpoint model',
    a: 'gpt-5.4',
    b: 'gpt-5.6-sol',
    body: responsesBody,
    simulator: () => {
      const simulator = new OpenAICacheSimulator()
      return (request) => simulator.simulate('responses', request)
    },
  },
]

/** One step of a session: the model, the conversation's turns so far, the virtual time. */
type Step = [model: string, turns: number, at: number]

/** A session on a fresh simulator, each request given the previous one with the model it ran on. */
function session(family: Family, steps: readonly Step[], name: (model: string) => string = (model) => model) {
  const simulate = family.simulator()
  let previous: PreviousRequest | undefined
  return steps.map(([model, turns, at]) => {
    const simulation = simulate({
      body: family.body(model, turns),
      at,
      output: reply,
      ...(previous !== undefined ? { previous } : {}),
    })
    const machine = simulation.trace.machine
    previous = {
      prompt: simulation.prompt,
      ...(machine !== undefined ? { machine } : {}),
      model: name(model),
    }
    return simulation
  })
}

const idealOf = (simulation: Simulation | undefined) => simulation?.trace.counterfactual?.ideal

describe.each(FAMILIES)('a model switch on $name is measured against staying', (family) => {
  const { a, b } = family

  it('a warm conversation moved to a cold model reads nothing; its ideal is what staying would have read, the whole previous prefix', () => {
    const [, previous, switched] = session(family, [
      [a, 1, 0],
      [a, 2, 10],
      [b, 3, 20],
    ])
    const [, , stayed] = session(family, [
      [a, 1, 0],
      [a, 2, 10],
      [a, 3, 20],
    ])
    expect(switched?.counts.read).toBe(0)
    expect(idealOf(switched)).toBe(stayed?.counts.read)
    // Within one cache step (OpenAI's 128 tokens, DeepSeek's grid) of all the previous request held.
    expect(stayed?.counts.read).toBeGreaterThan(cacheableTokens((previous as Simulation).prompt) - 128)
    expect(switched?.trace.counterfactual?.warm).toBe(idealOf(switched))
  })

  it("switching back reads the first model's cache, and its ideal is what staying on the second would have read", () => {
    const [, , , back] = session(family, [
      [a, 1, 0],
      [a, 2, 10],
      [b, 3, 20],
      [a, 4, 30],
    ])
    const [, , neverLeft] = session(family, [
      [a, 1, 0],
      [a, 2, 10],
      [a, 4, 30],
    ])
    const [, , , stayedOnB] = session(family, [
      [a, 1, 0],
      [a, 2, 10],
      [b, 3, 20],
      [b, 4, 30],
    ])
    expect(back?.counts.read).toBeGreaterThan(0)
    expect(back?.counts.read).toBe(neverLeft?.counts.read)
    expect(stayedOnB?.counts.read).toBeGreaterThan(back?.counts.read ?? 0)
    expect(idealOf(back)).toBe(stayedOnB?.counts.read)
  })

  it('a previous request without a model counts as the same model: the ideal is the cold read', () => {
    const simulate = family.simulator()
    const first = simulate({ body: family.body(a, 2), at: 0, output: reply })
    const switched = simulate({
      body: family.body(b, 3),
      at: 10,
      output: reply,
      previous: {
        prompt: first.prompt,
        ...(first.trace.machine !== undefined ? { machine: first.trace.machine } : {}),
      },
    })
    expect(idealOf(switched)).toBe(0)
  })
})

describe('which models count as another model', () => {
  it("two names of one model are no switch: Gemini's models/ resource name and its bare id", () => {
    const family = FAMILIES.find((candidate) => candidate.name === 'Gemini') as Family
    const steps: Step[] = [
      ['gemini-2.5-flash', 1, 0],
      ['gemini-2.5-flash', 2, 10],
    ]
    const bare = session(family, steps)
    const named = session(family, steps, (model) => `models/${model}`)
    expect(named[1]?.trace.counterfactual).toEqual(bare[1]?.trace.counterfactual)
    expect(idealOf(named[1])).toBe(named[1]?.counts.read)
  })

  it('a model the catalog does not list has the default rules but a cache of its own: leaving the default for it is a switch', () => {
    const family = FAMILIES.find((candidate) => candidate.name === 'Anthropic') as Family
    const [, , unlisted] = session(family, [
      ['claude-sonnet-4-6', 1, 0],
      ['claude-sonnet-4-6', 2, 10],
      ['claude-sonnet-4-6-experimental', 3, 20],
    ])
    const [, , stayed] = session(family, [
      ['claude-sonnet-4-6', 1, 0],
      ['claude-sonnet-4-6', 2, 10],
      ['claude-sonnet-4-6', 3, 20],
    ])
    expect(unlisted?.counts.read).toBe(0)
    expect(idealOf(unlisted)).toBe(stayed?.counts.read)
  })
})
