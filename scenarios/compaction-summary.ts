// Summary compaction: the history is replaced by a summary. The summarizer call either replays the
// conversation prefix (and reads it from cache) or sends its own prompt (and pays for all of it).

import { dollarText } from '../reports/text-table.ts'
import { tokensText } from './claims.ts'
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
  claims: [
    {
      id: 'replay-reads-more',
      text: 'The summarizer call that replays the cached prefix reads more and costs less than the one with its own prompt.',
      variants: ['replay-prefix', 'own-prompt'],
      check(rows) {
        const summary = (variant: string) => rows(variant).filter((row) => row.ok && row.step === 0)
        const read = (variant: string) => summary(variant).reduce((sum, row) => sum + row.cacheReadTokens, 0)
        const cost = (variant: string) => summary(variant).reduce((sum, row) => sum + row.costUsd, 0)
        return {
          holds:
            summary('replay-prefix').length > 0 &&
            read('replay-prefix') > read('own-prompt') &&
            cost('replay-prefix') < cost('own-prompt'),
          observed: `summarizer reads ${tokensText(read('replay-prefix'))} (${dollarText(cost('replay-prefix'))}) vs ${tokensText(read('own-prompt'))} (${dollarText(cost('own-prompt'))})`,
        }
      },
    },
  ],
}
