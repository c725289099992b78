// Tool-result pruning: long old tool results are cut in place. It breaks the cache once, from the first
// pruned result, and every later request is shorter; which part is kept does not change the break.

import { breaks, breaksText } from './claims.ts'
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
  claims: [
    {
      id: 'breaks-once',
      text: 'Each prune variant breaks exactly once, at a pruned tool result; without pruning nothing breaks.',
      variants: ['none', 'keep-head', 'keep-middle', 'keep-tail'],
      check(rows) {
        const pruned = ['keep-head', 'keep-middle', 'keep-tail'].map((variant) => breaks(rows(variant)))
        const once = pruned.every(
          (found) => found.length === 1 && found[0]?.breakCause === 'tool-result-prune',
        )
        return {
          holds: once && breaks(rows('none')).length === 0,
          observed: `breaks: none ${breaks(rows('none')).length}, keep-head ${breaksText(rows('keep-head'))}`,
        }
      },
    },
    {
      id: 'smaller-after',
      text: 'After the prune every request is smaller than the same request without pruning.',
      variants: ['none', 'keep-head'],
      check(rows) {
        const cut = breaks(rows('keep-head'))[0]
        const after = (variant: string) =>
          rows(variant).filter((row) => row.ok && cut !== undefined && row.turn >= cut.turn)
        const unpruned = new Map(after('none').map((row) => [`${row.turn}.${row.step}`, row.inputTokens]))
        const larger = after('keep-head').filter(
          (row) => row.inputTokens >= (unpruned.get(`${row.turn}.${row.step}`) ?? Number.POSITIVE_INFINITY),
        )
        return {
          holds: cut !== undefined && larger.length === 0,
          observed: `${larger.length} requests after the prune as large as without it`,
        }
      },
    },
  ],
}
