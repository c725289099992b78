// Tool-result pruning: long old tool results are cut in place. It breaks the cache once, from the first
// pruned result, and every later request is shorter; which part is kept does not change the break.

import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

export const toolResultPrune: Scenario = {
  name: 'tool-result-prune',
  demonstrates:
    'Pruning old tool results breaks the cache once at the first pruned result, then every request is smaller.',
  variants: [
    { name: 'none', skip: ['prune'] },
    { name: 'keep-head', policies: { pruneKeep: 'head' } },
    { name: 'keep-middle', policies: { pruneKeep: 'middle' } },
    { name: 'keep-tail', policies: { pruneKeep: 'tail' } },
  ],
  system: agentSystemPrompt(3000, 'prune'),
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: [
    ...codingTurns(6, { seed: 'prune', resultTokens: 2500 }),
    { kind: 'prune', thresholdChars: 8192, keepChars: 2048, skipLastNodes: 6 },
    ...codingTurns(6, { seed: 'prune', resultTokens: 300, from: 6 }),
  ],
}
