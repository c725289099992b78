// The provider fails and the loop retries per the SDKs' rules: a 429 with a retry delay, an overload and
// a cut stream. Each failed attempt is its own report row; the retry still reads the cache.

import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

export const flakyProvider: Scenario = {
  name: 'flaky-provider',
  demonstrates:
    'Retried attempts appear as their own rows and the retry reads the prefix the session had cached.',
  variants: [{ name: 'default' }],
  system: agentSystemPrompt(3000, 'flaky'),
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: [
    ...codingTurns(2, { seed: 'flaky', resultTokens: 300 }),
    { kind: 'fault', fault: { kind: 'rate-limit', retryAfterMs: 1500 } },
    ...codingTurns(1, { seed: 'flaky', resultTokens: 300, from: 2 }),
    { kind: 'fault', fault: { kind: 'overloaded' } },
    { kind: 'fault', fault: { kind: 'stream-cut', afterFrames: 2 } },
    ...codingTurns(2, { seed: 'flaky', resultTokens: 300, from: 3 }),
  ],
  claims: [
    {
      id: 'retries-read-cache',
      text: 'The three failed attempts are rows of their own with no tokens, and every successful retry reads cache.',
      variants: ['default'],
      check(rows) {
        const session = rows('default')
        const failed = session.filter((row) => !row.ok)
        const retries = session.filter((row) => row.ok && row.attempt > 0)
        const unread = retries.filter((row) => row.cacheReadTokens === 0)
        return {
          holds:
            failed.length === 3 &&
            failed.every((row) => row.inputTokens === 0) &&
            retries.length > 0 &&
            unread.length === 0,
          observed: `${failed.length} failed attempts, ${retries.length} retries, ${unread.length} retries without a read`,
        }
      },
    },
  ],
}
