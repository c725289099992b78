// Seed 004: on an in-history route a prompt update is appended; later a pressure prune inside a turn (at
// step 2, as in the seed) starts a new request series with the rendering unchanged. Consolidating rewrites
// node 0 anyway (the 722k-token miss); keeping the live node reads every token before the pruned result.

import { stepLabel } from '../reports/labels.ts'
import { percentText } from '../reports/text-table.ts'
import type { StepRow } from '../reports/types.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

const system = agentSystemPrompt(4000, 'series-start')

/** The loop's context estimate at which it prunes: between the schema turn's last call and the paste's first. */
const PRESSURE_TOKENS = 26_500

/** The first request of the new series the prune started. */
const seriesStep = (rows: readonly StepRow[]) => rows.find((row) => row.ok && row.headerReason === 'series')

export const seriesStartUnchanged: Scenario = {
  name: 'series-start-unchanged',
  demonstrates:
    'After an appended prompt update, a mid-turn pressure prune that starts a new series must not rewrite node 0 when the rendering is unchanged.',
  variants: [
    { name: 'consolidate', policies: { route: 'in-history', seriesStart: 'consolidate' } },
    { name: 'keep-live', policies: { route: 'in-history', seriesStart: 'keep-live' } },
  ],
  system,
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: [
    // Pruning under pressure, as DSH's compaction runs it: the paste in turn 10 crosses the threshold on
    // that turn's first call, so the prune comes at the pre-step of step 2, as in seed 004.
    {
      kind: 'pressure-prune',
      contextTokens: PRESSURE_TOKENS,
      thresholdChars: 8192,
      keepChars: 5120,
      skipLastNodes: 3,
    },
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
    {
      kind: 'turn',
      user: { tokens: 1500, seed: 'series-start:ci-log' },
      steps: [
        {
          toolCalls: [
            {
              name: 'grep',
              arguments: { pattern: 'RecordKind', path: 'src' },
              result: { tokens: 240, seed: 'series-start:grep:ci' },
            },
          ],
        },
        { text: { tokens: 40, seed: 'series-start:answer:ci' } },
      ],
    },
    ...codingTurns(2, { seed: 'series-start', resultTokens: 400, from: 9 }),
  ],
  claims: [
    {
      id: 'cliff-at-step-2',
      text: 'The pressure prune comes inside a turn: the new series starts at step 2, as in seed 004.',
      variants: ['consolidate', 'keep-live'],
      check(rows) {
        const steps = [seriesStep(rows('consolidate')), seriesStep(rows('keep-live'))]
        return {
          holds: steps.every((step) => step?.step === 2),
          observed: steps.map((step) => (step === undefined ? 'no series step' : stepLabel(step))).join(', '),
        }
      },
    },
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
