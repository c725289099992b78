// Idle gaps past five minutes: a 5-minute cache lifetime loses the prefix, a 1-hour one keeps it at
// twice the write price (Anthropic), and OpenAI's 24h retention keeps it at no extra cost.

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
}
