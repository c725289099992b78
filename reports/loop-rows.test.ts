import { describe, expect, it } from 'vitest'
import type { Usage } from '../harness/types.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { type LoopExchange, type LoopRequest, LoopRowBuilder } from './loop-rows.ts'

const usage: Usage = { input: 100, uncached: 100, cacheRead: 0, cacheWrite: 0, output: 5, raw: {} }
const prices = { input: 0.28, cacheRead: 0.028, cacheWrite5m: 0.28, cacheWrite1h: 0.28, output: 0.42 }

describe("an external loop's rows", () => {
  it('name the node where a request stops extending the previous one, and what changed there', () => {
    const simulators = new CacheSimulators()
    const builder = new LoopRowBuilder({
      runId: 'r',
      scenario: 's',
      variant: 'v',
      provider: 'deepseek',
      model: 'deepseek-v4-flash',
      prices,
      route: 'unsupported',
      loop: 'dsh',
      events: () => [],
    })
    const exchange = (turn: number, system: string): LoopExchange => {
      const body = {
        model: 'deepseek-v4-flash',
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: 'Summarize a.ts.' },
        ],
      }
      const request: LoopRequest = {
        purpose: 'step',
        turn,
        step: 1,
        attempt: 0,
        at: turn,
        headerReason: undefined,
        logLength: 0,
        sources: [],
      }
      const previous = builder.previousRequest()
      const observation = simulators.simulate('deepseek-chat', {
        body,
        at: turn,
        output: { role: 'assistant', content: [] },
        ...(previous !== undefined ? { previous } : {}),
      })
      return { request, body, usage, observation, latencyMs: 1 }
    }
    builder.add(exchange(1, 'You are terse. Today is 2026-12-07.'))
    const { row } = builder.add(exchange(2, 'You are terse. Today is 2026-12-08.'))
    expect(row).toMatchObject({ breakNode: 'messages[0]', breakCause: 'system-replace' })
    expect(row.breakChange).toEqual({
      node: 'messages[0]',
      kind: 'replaced',
      context: 'You are terse. Today is ',
      before: '2026-12-07',
      after: '2026-12-08',
    })
  })
})
