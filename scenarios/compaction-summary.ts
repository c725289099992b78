// Summary compaction: the history is replaced by a summary. The summarizer call either replays the
// conversation prefix (and reads it from cache) or sends its own prompt (and pays for all of it).

import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

export const compactionSummary: Scenario = {
  name: 'compaction-summary',
  demonstrates:
    'A summarizer call that replays the cached conversation prefix costs a fraction of one with its own prompt.',
  variants: [
    { name: 'replay-prefix', policies: { summaryReplayPrefix: true } },
    { name: 'own-prompt', policies: { summaryReplayPrefix: false } },
  ],
  system: agentSystemPrompt(3000, 'compaction'),
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: [
    ...codingTurns(8, { seed: 'compaction', resultTokens: 800 }),
    { kind: 'compact', retainNodes: 6, summaryTokens: 600 },
    ...codingTurns(4, { seed: 'compaction', resultTokens: 400, from: 8 }),
  ],
}
