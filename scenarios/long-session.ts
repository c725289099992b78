// A 720-turn append-only session: the scale case for the simulators and the loop (a cache break at this
// length costs hundreds of thousands of tokens).

import { breaks, breaksText, warmRatio, warmText } from './claims.ts'
import { agentSystemPrompt, CODING_TOOLS } from './fixtures.ts'
import type { Scenario } from './types.ts'

/** Turns of the long session; benchmarks replay other lengths with `longSessionScript`. */
export const LONG_SESSION_TURNS = 720

/** A long session's script of `turns` short turns, one tool call each. */
export function longSessionScript(turns: number): Scenario['script'] {
  return Array.from({ length: turns }, (_, index) => ({
    kind: 'turn' as const,
    user: `Step ${index + 1}: continue with the next item on the list.`,
    steps: [
      {
        toolCalls: [
          {
            name: 'read_file',
            arguments: { path: `src/items/${index}.ts` },
            result: { tokens: 60, seed: `long:${index}` },
          },
        ],
      },
      { text: { tokens: 20, seed: `long:answer:${index}` } },
    ],
  }))
}

export const longSession: Scenario = {
  name: 'long-session',
  demonstrates: 'An append-only session of 720 turns keeps a warm hit ratio above 99% on every provider.',
  variants: [{ name: 'default' }],
  system: agentSystemPrompt(4000, 'long'),
  tools: CODING_TOOLS,
  maxTokens: 1024,
  pace: { turnGapSeconds: 5, toolSeconds: 0.5 },
  script: longSessionScript(LONG_SESSION_TURNS),
  claims: [
    {
      id: 'warm-above-99',
      text: 'Over 720 append-only turns the warm hit ratio stays above 99%, with no break.',
      variants: ['default'],
      check(rows) {
        const session = rows('default')
        return {
          holds: warmRatio(session) > 0.99 && breaks(session).length === 0,
          observed: `${warmText(session)}, ${breaksText(session)}`,
        }
      },
    },
  ],
}
