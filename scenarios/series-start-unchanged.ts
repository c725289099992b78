// Seed 004: on an in-history route a prompt update is appended; later a tool-result prune starts a new
// request series with the rendering unchanged. Consolidating rewrites node 0 anyway (the 722k-token miss);
// keeping the live node reads every token before the pruned result.

import { stepLabel } from '../reports/labels.ts'
import { percentText } from '../reports/text-table.ts'
import type { StepRow } from '../reports/types.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

const system = agentSystemPrompt(4000, 'series-start')

/** The first request of the new series the prune started. */
const seriesStep = (rows: readonly StepRow[]) => rows.find((row) => row.ok && row.headerReason === 'series')

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
  claims: [
    {
      id: 'consolidate-rereads-all',
      text: 'Consolidating rewrites node 0 at the new series: where a changed block loses everything after it, that step reads under 1% of its input.',
      variants: ['consolidate'],
      // OpenAI matches tokens, so the old prompt text before the appended update still reads.
      providers: ['anthropic', 'deepseek'],
      check(rows) {
        const step = seriesStep(rows('consolidate'))
        const ratio = step?.hitRatio ?? 1
        return {
          holds: step !== undefined && ratio < 0.01 && step.breakCause === 'system-replace',
          observed:
            step === undefined
              ? 'no series step'
              : `series step ${stepLabel(step)} read ${percentText(ratio)} (${step.breakCause ?? 'no break'})`,
        }
      },
    },
    {
      id: 'keep-live-keeps-prefix',
      text: 'Keeping the live node reads the prefix before the pruned result at the new series: more than half its input, and more than consolidating.',
      variants: ['keep-live', 'consolidate'],
      check(rows) {
        const kept = seriesStep(rows('keep-live'))
        const rewritten = seriesStep(rows('consolidate'))
        return {
          holds:
            kept !== undefined &&
            rewritten !== undefined &&
            (kept.hitRatio ?? 0) > 0.5 &&
            kept.cacheReadTokens > rewritten.cacheReadTokens &&
            kept.breakCause !== 'system-replace',
          observed:
            kept === undefined
              ? 'no series step'
              : `keep-live series step read ${percentText(kept.hitRatio)} (${kept.breakCause ?? 'no break'})`,
        }
      },
    },
  ],
}
