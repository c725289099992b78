// Seed 004: on an in-history route a prompt update is appended; later a tool-result prune starts a new
// request series with the rendering unchanged. Consolidating rewrites node 0 anyway (the 722k-token miss);
// keeping the live node reads every token before the pruned result.

import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

const system = agentSystemPrompt(4000, 'series-start')

export const seriesStartUnchanged: Scenario = {
  name: 'series-start-unchanged',
  demonstrates:
    'After an appended prompt update, a prune that starts a new series must not rewrite node 0 when the rendering is unchanged.',
  variants: [
    { name: 'consolidate', policies: { route: 'in-history', seriesStart: 'consolidate' } },
    { name: 'keep-live', policies: { route: 'in-history', seriesStart: 'keep-live' } },
  ],
  system,
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: [
    ...codingTurns(4, { seed: 'series-start', resultTokens: 400 }),
    {
      kind: 'set-system',
      text: `${system}\n\nBuild update: the release branch is frozen; only fixes may land.`,
    },
    ...codingTurns(4, { seed: 'series-start', resultTokens: 400, from: 4 }),
    {
      kind: 'turn',
      user: 'Read the generated schema file; it is long.',
      steps: [
        {
          toolCalls: [
            {
              name: 'read_file',
              arguments: { path: 'src/generated/schema.ts' },
              result: { tokens: 6000, seed: 'schema' },
            },
          ],
        },
        { text: 'The schema defines 214 record types; the one you asked about is RecordKind.' },
      ],
    },
    ...codingTurns(1, { seed: 'series-start', resultTokens: 400, from: 8 }),
    { kind: 'prune', thresholdChars: 8192, keepChars: 5120, skipLastNodes: 4 },
    ...codingTurns(2, { seed: 'series-start', resultTokens: 400, from: 9 }),
  ],
}
