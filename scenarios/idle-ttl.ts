// Idle gaps past five minutes: a 5-minute cache lifetime loses the prefix, a 1-hour one keeps it at
// twice the write price (Anthropic), and OpenAI's 24h retention keeps it at no extra cost.

import { dollarText } from '../reports/text-table.ts'
import { breaksText, breaksWith, tokensText } from './claims.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

export const idleTtl: Scenario = {
  name: 'idle-ttl',
  demonstrates: 'A 6-minute pause expires a 5-minute cache; a 1-hour TTL keeps it for twice the write price.',
  variants: [
    { name: 'ttl-5m', build: { anthropicTtl: '5m', retention: 'in_memory' } },
    { name: 'ttl-1h', build: { anthropicTtl: '1h', retention: '24h' } },
  ],
  system: agentSystemPrompt(5000, 'idle'),
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: [
    ...codingTurns(3, { seed: 'idle', resultTokens: 400 }),
    { kind: 'idle', seconds: 360 },
    ...codingTurns(3, { seed: 'idle', resultTokens: 400, from: 3 }),
    { kind: 'idle', seconds: 1800 },
    ...codingTurns(2, { seed: 'idle', resultTokens: 400, from: 6 }),
  ],
  claims: [
    {
      id: 'five-minutes-expire',
      text: 'With a 5-minute lifetime the 6-minute pause expires the cache: the next request names ttl-expired and what the gap cost.',
      variants: ['ttl-5m'],
      providers: ['anthropic', 'openai-chat', 'openai-responses', 'gemini'],
      check(rows) {
        const expired = breaksWith(rows('ttl-5m'), 'ttl-expired').filter((row) => row.turn === 4)
        const cost = expired.reduce((sum, row) => sum + row.providerLostTokens, 0)
        return {
          holds: expired.length > 0 && cost > 0,
          observed:
            expired.length === 0
              ? 'no ttl-expired break after the gap'
              : `ttl-expired at turn 4, ${tokensText(cost)} the gap cost`,
        }
      },
    },
    {
      id: 'one-hour-keeps',
      text: 'With a 1-hour lifetime (24h retention on OpenAI) no pause expires the cache.',
      variants: ['ttl-1h'],
      check(rows) {
        const expired = breaksWith(rows('ttl-1h'), 'ttl-expired')
        return { holds: expired.length === 0, observed: breaksText(rows('ttl-1h')) }
      },
    },
    {
      id: 'longer-lifetime-pays',
      text: 'Over the session the longer lifetime costs less than re-writing after each pause.',
      variants: ['ttl-5m', 'ttl-1h'],
      providers: ['anthropic', 'openai-chat', 'openai-responses'],
      check(rows) {
        const cost = (variant: string) => rows(variant).reduce((sum, row) => sum + row.costUsd, 0)
        return {
          holds: cost('ttl-1h') < cost('ttl-5m'),
          observed: `ttl-1h ${dollarText(cost('ttl-1h'))}, ttl-5m ${dollarText(cost('ttl-5m'))}`,
        }
      },
    },
  ],
}
