import { describe, expect, it } from 'vitest'
import type { Usage } from '../../../harness/types.ts'
import { CacheSimulators } from '../../../providers/sim/index.ts'
import type { CapturedExchange } from '../../../providers/wire/exchange.ts'
import { CaptureTracker } from './tracker.ts'

const usage: Usage = { input: 100, uncached: 100, cacheRead: 0, cacheWrite: 0, output: 5, raw: {} }

function tracker() {
  const simulators = new CacheSimulators()
  const exchanges: CapturedExchange[] = []
  const capture = new CaptureTracker({
    linearize: (api, body) => simulators.linearize(api, body),
    sink: (exchange) => exchanges.push(exchange),
  })
  /** Record one Anthropic request answered with `status`. */
  const send = (messages: unknown[], status = 200) => {
    const body = { model: 'claude-sonnet-4-6', max_tokens: 64, system: 'You are terse.', messages }
    const placement = capture.place('anthropic-messages', undefined, body)
    return capture.add({
      placement,
      api: 'anthropic-messages',
      body,
      at: 0,
      status,
      latencyMs: 1,
      stream: false,
      ...(status === 200 ? { usage } : {}),
      predicted: false,
    })
  }
  return { send, exchanges }
}

const user = (text: string) => ({ role: 'user', content: text })
const toolUse = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read', input: {} }] }
const toolResult = {
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: 't1', content: 'file text' }],
}

describe('placing captured requests in their session', () => {
  it('counts a tool round trip as the next step of the turn and a new user message as the next turn', () => {
    const { send } = tracker()
    const placed = [
      send([user('read the file')]),
      send([user('read the file'), toolUse, toolResult]),
      send([
        user('read the file'),
        toolUse,
        toolResult,
        { role: 'assistant', content: 'done' },
        user('thanks'),
      ]),
    ].map(({ turn, step, attempt }) => [turn, step, attempt])
    expect(placed).toEqual([
      [1, 1, 0],
      [1, 2, 0],
      [2, 1, 0],
    ])
  })

  it('counts a request identical to the previous one as its next attempt, after a failure or not', () => {
    const { send } = tracker()
    const failed = send([user('hello')], 529)
    const retried = send([user('hello')])
    const repeated = send([user('hello')])
    expect([failed, retried, repeated].map(({ turn, step, attempt }) => [turn, step, attempt])).toEqual([
      [1, 1, 0],
      [1, 1, 1],
      [1, 1, 2],
    ])
    expect(failed.usage).toBeUndefined()
  })

  it('digests a request it never simulated, and keeps no body unless asked', () => {
    const { send } = tracker()
    const exchange = send([user('a question')], 400)
    expect(exchange.digest.segments.length).toBeGreaterThan(0)
    expect(exchange.digest.items).toHaveLength(1)
    expect(exchange.request).toBeUndefined()
    expect(JSON.stringify(exchange)).not.toContain('a question')
  })

  it('keeps a body with no key-shaped value, its own key or another, in any field', () => {
    const exchanges: CapturedExchange[] = []
    const simulators = new CacheSimulators()
    const capture = new CaptureTracker({
      linearize: (api, body) => simulators.linearize(api, body),
      keepBodies: true,
      sink: (exchange) => exchanges.push(exchange),
    })
    const own = 'own-key-0123456789'
    // Key-shaped values, put together here so no key-shaped text sits in the repository.
    const shaped = (prefix: string, tail: string) => [prefix, tail].join('-')
    const body = {
      model: 'gpt-5.4',
      prompt_cache_key: shaped('sk-proj', 'abcdefghijklmnopqrstuvwx'),
      user: shaped('sk-ant-api03', 'abcdefghijklmnopqrstuvwx'),
      metadata: { user_id: shaped('sk-ant-api03', 'zyxwvutsrqponmlkjihgfedc'), team: 'frost' },
      messages: [user(`my key is ${own}, not AIzaSyA-abcdefghijklmnopqrstuvwxyz0123`)],
    }
    capture.add({
      placement: capture.place('openai-chat', undefined, body),
      api: 'openai-chat',
      body,
      at: 0,
      status: 200,
      latencyMs: 1,
      stream: false,
      usage,
      predicted: false,
      secrets: [own],
    })
    const kept = JSON.stringify(exchanges[0]?.request)
    for (const secret of [own, 'sk-proj-', 'sk-ant-', 'AIza']) expect(kept).not.toContain(secret)
    expect(exchanges[0]?.request).toMatchObject({ metadata: { team: 'frost' }, model: 'gpt-5.4' })
    // The body the client sent is its own: nothing is changed in place.
    expect(body.user).toBe(shaped('sk-ant-api03', 'abcdefghijklmnopqrstuvwx'))
  })
})

describe("a tracker's memory", () => {
  /**
   * Record a simulated request of session `name` (declared by header) with a long message of its own:
   * answered with its usage unless `answer` says it came without or failed after its 200.
   */
  const simulated = (
    capture: CaptureTracker,
    simulators: CacheSimulators,
    name: string,
    answer: 'usage' | 'no usage' | 'cut' = 'usage',
  ) => {
    const body = {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [user(`${name}: ${'a long message that fills the prompt. '.repeat(50)}`)],
    }
    const simulation = simulators.simulate('anthropic-messages', {
      body,
      at: 0,
      output: { role: 'assistant', content: [] },
    })
    capture.add({
      placement: capture.place('anthropic-messages', name, body),
      api: 'anthropic-messages',
      body,
      at: 0,
      status: 200,
      latencyMs: 1,
      stream: false,
      ...(answer === 'usage' ? { usage } : {}),
      ...(answer === 'cut' ? { error: 'stream cut' } : {}),
      simulation,
      predicted: false,
    })
  }

  it('keeps a request answered without usage as its conversation’s previous, not one that failed after its 200', () => {
    const simulators = new CacheSimulators()
    const capture = new CaptureTracker({ linearize: (api, body) => simulators.linearize(api, body) })
    simulated(capture, simulators, 'unreported', 'no usage')
    simulated(capture, simulators, 'cut', 'cut')
    expect(capture.previous('unreported')).toBeDefined()
    expect(capture.previous('cut')).toBeUndefined()
  })

  it('forgets the previous requests of the least recently active sessions past its byte budget', () => {
    const simulators = new CacheSimulators()
    const capture = new CaptureTracker({
      linearize: (api, body) => simulators.linearize(api, body),
      memoryBytes: 40_000,
    })
    for (let index = 0; index < 50; index += 1) simulated(capture, simulators, `s${index}`)
    expect(capture.memory.bytes).toBeLessThanOrEqual(40_000)
    expect(capture.memory.sessions).toBe(50)
    expect(capture.previous('s49')).toBeDefined()
    expect(capture.previous('s0')).toBeUndefined()
  })

  it('keeps items for reuse only in the room the previous requests leave in its budget', () => {
    const simulators = new CacheSimulators()
    const capture = new CaptureTracker({
      linearize: (api, body) => simulators.linearize(api, body),
      memoryBytes: 40_000,
    })
    const body = (seed: number) =>
      JSON.parse(
        JSON.stringify({ messages: [{ role: 'user', content: `${seed} ${'text '.repeat(2_000)}` }] }),
      ) as Record<string, unknown>
    capture.reuseItems(body(0))
    expect(capture.reuseStats.items).toBe(1)
    for (let index = 0; index < 50; index += 1) {
      simulated(capture, simulators, `s${index}`)
      capture.reuseItems(body(index))
      expect(capture.reuseStats.bytes + capture.memory.bytes).toBeLessThanOrEqual(40_000)
    }
    // The previous requests are forgotten as before: the reuse never takes their room.
    expect(capture.previous('s49')).toBeDefined()
    expect(capture.previous('s0')).toBeUndefined()
  })

  it('forgets the least recently active sessions past its session limit', () => {
    const simulators = new CacheSimulators()
    const capture = new CaptureTracker({
      linearize: (api, body) => simulators.linearize(api, body),
      sessionLimit: 10,
    })
    for (let index = 0; index < 30; index += 1) simulated(capture, simulators, `s${index}`)
    expect(capture.memory.sessions).toBe(10)
    expect(capture.previous('s29')).toBeDefined()
    expect(capture.previous('s5')).toBeUndefined()
  })
})

describe('what a tracker keeps of a break', () => {
  const KEY = `sk-${'Zq8wXv4Tb2'.repeat(4)}`

  /** A tracker and a sender of Anthropic requests with their own system prompt, keyed with `secret`. */
  function keyed(options: { keepChanges?: boolean } = {}) {
    const simulators = new CacheSimulators()
    const capture = new CaptureTracker({
      linearize: (api, body) => simulators.linearize(api, body),
      ...options,
    })
    const secret = 'secret-from-the-header-1234'
    const send = (system: string, messages: unknown[]) => {
      const body = { model: 'claude-sonnet-4-6', max_tokens: 64, system, messages }
      return capture.add({
        placement: capture.place('anthropic-messages', 'one', body),
        api: 'anthropic-messages',
        body,
        at: 0,
        status: 200,
        latencyMs: 1,
        stream: false,
        usage,
        simulation: simulators.simulate('anthropic-messages', {
          body,
          at: 0,
          output: { role: 'assistant', content: [] },
        }),
        predicted: false,
        secrets: [secret],
      })
    }
    return { send, secret }
  }

  it('keeps the words around the change, keys masked, on the request that broke and no other', () => {
    const { send, secret } = keyed()
    const system = (day: string) => `Key ${KEY}, token ${secret}. Today is ${day}. Be terse.`
    const first = send(system('2026-12-07'), [user('a question')])
    const second = send(system('2026-12-07'), [
      user('a question'),
      { role: 'assistant', content: 'ok' },
      user('more'),
    ])
    const third = send(system('2026-12-08'), [
      user('a question'),
      { role: 'assistant', content: 'ok' },
      user('more'),
    ])
    expect(first.change).toBeUndefined()
    expect(second.change).toBeUndefined()
    expect(third.change).toEqual({
      node: 'system[0]',
      kind: 'replaced',
      context: 'Key [redacted], token [redacted]. Today is ',
      before: '2026-12-07',
      after: '2026-12-08',
    })
    const kept = JSON.stringify([first, second, third])
    expect(kept).not.toContain('Zq8wXv4Tb2')
    expect(kept).not.toContain(secret)
    expect(kept).not.toContain('a question')
  })

  it('keeps the model it switched from and to, found as the report finds the break', () => {
    const simulators = new CacheSimulators()
    const capture = new CaptureTracker({ linearize: (api, body) => simulators.linearize(api, body) })
    const send = (model: string) => {
      const body = { model, max_tokens: 64, messages: [user('hi')] }
      return capture.add({
        placement: capture.place('anthropic-messages', 'one', body),
        api: 'anthropic-messages',
        body,
        at: 0,
        status: 200,
        latencyMs: 1,
        stream: false,
        usage,
        predicted: false,
      })
    }
    send('claude-sonnet-4-6')
    expect(send('claude-opus-4-8').change).toMatchObject({ node: 'model', before: 'claude-sonnet-4-6' })
  })

  it('keeps nothing of it when told to keep no text', () => {
    const { send } = keyed({ keepChanges: false })
    send('Mode: terse.', [user('a question')])
    const broken = send('Mode: careful.', [user('a question')])
    expect(broken.change).toBeUndefined()
    expect(JSON.stringify(broken)).not.toMatch(/Mode|terse|careful/)
  })
})
