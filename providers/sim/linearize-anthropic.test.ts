// Thinking blocks in the Anthropic prompt: kept while a tool-use turn goes on; once a user turn follows,
// stripped on models that leave earlier turns' thinking out (the cache then misses from the first
// stripped block), kept on models that preserve it.

import { describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import {
  type AnthropicCacheRules,
  simulationModel,
  type ThinkingHistory,
  withCacheRules,
} from '../catalog.ts'
import { AnthropicCacheSimulator } from './anthropic.ts'
import { latestUserTurn, linearizeAnthropic } from './linearize-anthropic.ts'
import { describeNode, tokensThrough } from './prompt.ts'
import { TokenCounter } from './tokens.ts'

const MODEL = 'claude-sonnet-4-6'
const answer: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] }
const system = fillerText(3000, 'thinking-history-system')
const thinking = { type: 'thinking', thinking: fillerText(400, 'thinking-turn-1'), signature: 'sig-1' }
const toolUse = { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'README.md' } }
const toolResult = { type: 'tool_result', tool_use_id: 'toolu_1', content: fillerText(300, 'readme') }

/** The three requests of a tool-use turn and the next user turn, with thinking on. */
function bodies() {
  const base = { model: MODEL, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } }
  const user1 = { role: 'user', content: 'Summarize README.md.' }
  const called = { role: 'assistant', content: [thinking, toolUse] }
  const results = { role: 'user', content: [toolResult] }
  const answered = { role: 'assistant', content: [{ type: 'text', text: 'It is a cache harness.' }] }
  const user2 = { role: 'user', content: 'And its license?' }
  return {
    first: { ...base, cache_control: { type: 'ephemeral' }, system, messages: [user1] },
    toolTurn: { ...base, cache_control: { type: 'ephemeral' }, system, messages: [user1, called, results] },
    nextTurn: {
      ...base,
      cache_control: { type: 'ephemeral' },
      system,
      messages: [user1, called, results, answered, user2],
    },
  }
}

function simulator(thinkingHistory: ThinkingHistory) {
  const entry = withCacheRules<AnthropicCacheRules>(simulationModel('anthropic', MODEL), { thinkingHistory })
  return new AnthropicCacheSimulator({ models: [entry] })
}

const nodes = (body: Record<string, unknown>, history: ThinkingHistory) =>
  linearizeAnthropic(body, new TokenCounter(), 1, undefined, undefined, history).prompt.segments.map(
    (segment) => describeNode(segment.node),
  )

describe('the latest user turn of a Messages body', () => {
  it('is the last user message that is not only tool results', () => {
    const { toolTurn, nextTurn } = bodies()
    expect(latestUserTurn(toolTurn.messages)).toBe(0)
    expect(latestUserTurn(nextTurn.messages)).toBe(4)
    expect(latestUserTurn([])).toBe(-1)
  })
})

describe('thinking blocks in the prompt', () => {
  it('stay in the prompt within a tool-use turn, whatever the model', () => {
    const { toolTurn } = bodies()
    expect(nodes(toolTurn, 'stripped')).toContain('messages[1].0')
    expect(nodes(toolTurn, 'kept')).toContain('messages[1].0')
  })

  it('leave the prompt once a user turn follows on a model that strips them, and stay on one that keeps them', () => {
    const { nextTurn } = bodies()
    expect(nodes(nextTurn, 'stripped')).not.toContain('messages[1].0')
    expect(nodes(nextTurn, 'stripped')).toContain('messages[1].1')
    expect(nodes(nextTurn, 'kept')).toContain('messages[1].0')
  })

  it('are linearized alike whether the body is new or the previous one extended', () => {
    const { toolTurn, nextTurn } = bodies()
    const counter = new TokenCounter()
    linearizeAnthropic(toolTurn, counter, 1, undefined, undefined, 'stripped')
    const extended = linearizeAnthropic(nextTurn, counter, 1, undefined, undefined, 'stripped').prompt
    linearizeAnthropic({ model: MODEL, messages: [] }, counter, 1)
    const fresh = linearizeAnthropic(nextTurn, new TokenCounter(), 1, undefined, undefined, 'stripped').prompt
    expect(extended.segments.map((segment) => segment.text)).toEqual(
      fresh.segments.map((segment) => segment.text),
    )
    expect(extended.total).toBe(fresh.total)
  })
})

describe('thinking history and the cache', () => {
  it.each([
    ['stripped', 'reads only up to the stripped thinking block on the next user turn'],
    ['kept', 'reads the whole tool-use turn on the next user turn'],
  ] as const)('%s: %s', (history, _behaviour) => {
    const sim = simulator(history)
    const { first, toolTurn, nextTurn } = bodies()
    sim.simulate({ body: first, at: 0, output: answer })
    const during = sim.simulate({ body: toolTurn, at: 10, output: answer })
    const after = sim.simulate({ body: nextTurn, at: 20, output: answer })
    // Within the tool-use turn the thinking block is read back from the first request's entry onward.
    expect(during.counts.read).toBeGreaterThan(3000)
    const throughUser1 = tokensThrough(after.prompt, nodes(nextTurn, history).indexOf('messages[0]') + 1)
    if (history === 'stripped') expect(after.counts.read).toBe(throughUser1)
    else expect(after.counts.read).toBe(during.prompt.total - during.prompt.trailing)
  })
})

describe('The system-role check of a session body', () => {
  const user = { role: 'user', content: 'Run the tests.' }
  const reply = { role: 'assistant', content: 'They pass.' }
  const inHistory = { role: 'system', content: 'Answer tersely.' }
  const body = (messages: unknown[]) => ({ model: MODEL, max_tokens: 1024, messages })

  it('refuses a system message added after messages an earlier body passed with', () => {
    const counter = new TokenCounter()
    linearizeAnthropic(body([user, reply]), counter, 1, undefined, 'unsupported')
    expect(() =>
      linearizeAnthropic(body([user, reply, inHistory]), counter, 1, undefined, 'unsupported'),
    ).toThrow("role 'system' is not supported on this model")
  })

  it('checks again the messages a body passed with under another route', () => {
    const counter = new TokenCounter()
    const messages = [user, inHistory, reply]
    linearizeAnthropic(body(messages), counter, 1, undefined, 'in-history')
    expect(() => linearizeAnthropic(body(messages), counter, 1, undefined, 'unsupported')).toThrow(
      "role 'system' is not supported on this model",
    )
  })
})
