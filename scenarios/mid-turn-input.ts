// Seed 003: input that arrives while a turn runs. A steer enters the next step, a followup opens its own
// turn when the running one ends, an injection joins the next request silently, and a cancelled request
// is discarded. Each only appends to history, so the cache holds across all of them.

import { stepLabel } from '../reports/labels.ts'
import { breaks, breaksText, warmRatio, warmText } from './claims.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns, result } from './fixtures.ts'
import type { Scenario } from './types.ts'

export const midTurnInput: Scenario = {
  name: 'mid-turn-input',
  demonstrates:
    'Steering, a queued followup, injected context and a cancelled request all append to history: the cache holds across each.',
  variants: [{ name: 'default' }],
  system: agentSystemPrompt(3000, 'mid-turn'),
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: [
    ...codingTurns(2, { seed: 'mid-turn', resultTokens: 300 }),
    {
      kind: 'turn',
      user: 'The date parser rejects ISO weeks. Find where and fix it.',
      steps: [
        {
          toolCalls: [
            { name: 'grep', arguments: { pattern: 'parseDate', path: 'src' }, result: result(180) },
          ],
          arrivals: [
            { delivery: 'steer', text: 'Only touch src/dates.ts; the vendored copy stays as it is.' },
          ],
        },
        {
          toolCalls: [{ name: 'read_file', arguments: { path: 'src/dates.ts' }, result: result(300) }],
          arrivals: [
            {
              delivery: 'inject',
              text: 'Workspace: branch fix/iso-weeks, 2 files changed.',
              plugin: 'workspace',
            },
            {
              delivery: 'followup',
              text: 'When that is done, add a changelog line.',
              steps: [{ text: 'Added: "Dates: ISO week strings parse."' }],
            },
          ],
        },
        { text: 'parseDate now accepts ISO week strings such as 2026-W48-1.' },
      ],
    },
    {
      kind: 'turn',
      user: 'Now run the whole suite.',
      steps: [
        {
          toolCalls: [{ name: 'run_tests', arguments: {}, result: result(300) }],
          cancel: true,
        },
      ],
    },
    { kind: 'idle', seconds: 10 },
    ...codingTurns(2, { seed: 'mid-turn', resultTokens: 300, from: 2 }),
  ],
  claims: [
    {
      id: 'appends-hold-cache',
      text: 'No request breaks the cache and the warm hit ratio is at least 90%: steer, followup and injection only append.',
      variants: ['default'],
      check(rows) {
        const session = rows('default')
        return {
          holds: breaks(session).length === 0 && warmRatio(session) >= 0.9,
          observed: `${warmText(session)}, ${breaksText(session)}`,
        }
      },
    },
    {
      id: 'cancel-discarded',
      text: 'The cancelled request is one failed row without tokens, and the request after it reads cache.',
      variants: ['default'],
      check(rows) {
        const session = rows('default')
        const index = session.findIndex((row) => !row.ok)
        const cancelled = session[index]
        const next = session[index + 1]
        return {
          holds:
            session.filter((row) => !row.ok).length === 1 &&
            cancelled?.inputTokens === 0 &&
            (next?.cacheReadTokens ?? 0) > 0,
          observed:
            cancelled === undefined
              ? 'no failed row'
              : `cancelled ${stepLabel(cancelled)}; next ${next === undefined ? 'none' : `${stepLabel(next)} read ${next.cacheReadTokens}`}`,
        }
      },
    },
  ],
}
