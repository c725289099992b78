// One step fans out into 24 parallel tool calls, so the next request adds about 50 content blocks at
// once. Anthropic checks at most 20 positions back from each breakpoint; under the current rule a run of
// consecutive tool_use (or tool_result) blocks is one position, so the fan-out costs three. The
// superseded per-block rule, where it cost about 50, is kept as named variants to show what it broke.

import type { ToolCallScript } from '../harness/script.ts'
import { breaksText, breaksWith, lostTokens, providerLostTokens, tokensText } from './claims.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

const fanOut: ToolCallScript[] = Array.from({ length: 24 }, (_, index) => ({
  name: 'read_file',
  arguments: { path: `src/module-${index}.ts` },
  result: { tokens: 150, seed: `fan-out:${index}` },
}))

/** The superseded lookback rule (documented until 2026): every block is one position, parallel tool results included. */
const blockLookback = { collapseToolRuns: false }

export const parallelToolResults: Scenario = {
  name: 'parallel-tool-results',
  demonstrates:
    'A 24-call fan-out stays within the 20-position lookback of one automatic breakpoint, as a run of parallel tool blocks counts once; under the superseded per-block rule that breakpoint missed it and rolling breakpoints still read nearly all of it.',
  providers: ['anthropic'],
  variants: [
    { name: 'automatic', build: { breakpoints: 'automatic' } },
    { name: 'last-message', build: { breakpoints: 'last-message' } },
    { name: 'system-and-last', build: { breakpoints: 'system-and-last' } },
    { name: 'rolling', build: { breakpoints: 'rolling' } },
    { name: 'automatic-block-rule', build: { breakpoints: 'automatic' }, rules: blockLookback },
    { name: 'rolling-block-rule', build: { breakpoints: 'rolling' }, rules: blockLookback },
  ],
  system: agentSystemPrompt(3000, 'fan-out'),
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: [
    ...codingTurns(3, { seed: 'fan-out', resultTokens: 300 }),
    {
      kind: 'turn',
      user: 'Read every module under src/ and list the ones without tests.',
      steps: [
        { text: 'Reading all 24 modules at once.', toolCalls: fanOut },
        { text: { tokens: 120, seed: 'fan-out:answer' } },
      ],
    },
    ...codingTurns(2, { seed: 'fan-out', resultTokens: 300, from: 3 }),
  ],
  claims: [
    {
      id: 'run-rule-reaches',
      text: 'Under the current rule a run of parallel tool blocks counts as one lookback position: every strategy reads the previous entry after the fan-out.',
      variants: ['automatic', 'last-message', 'system-and-last', 'rolling'],
      check(rows) {
        const missed = ['automatic', 'last-message', 'system-and-last', 'rolling'].flatMap((variant) =>
          breaksWith(rows(variant), 'lookback-miss'),
        )
        return { holds: missed.length === 0, observed: `${missed.length} lookback misses` }
      },
    },
    {
      id: 'block-rule-misses',
      text: 'Under the superseded per-block rule one automatic breakpoint misses after the fan-out, and what it missed is counted on the provider side.',
      variants: ['automatic-block-rule'],
      check(rows) {
        const missed = breaksWith(rows('automatic-block-rule'), 'lookback-miss')
        const cost = providerLostTokens(rows('automatic-block-rule'))
        return {
          holds: missed.length > 0 && cost > 0 && lostTokens(rows('automatic-block-rule')) === 0,
          observed: `${breaksText(rows('automatic-block-rule'))}, ${tokensText(cost)} out of reach`,
        }
      },
    },
  ],
}
