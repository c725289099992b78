// One step fans out into 24 parallel tool calls, so the next request adds about 50 content blocks at
// once. Anthropic checks at most 20 positions back from each breakpoint: where the breakpoints sit decides
// whether the previous request's cache entry is found.

import type { ToolCallScript } from '../harness/script.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

const fanOut: ToolCallScript[] = Array.from({ length: 24 }, (_, index) => ({
  name: 'read_file',
  arguments: { path: `src/module-${index}.ts` },
  result: { tokens: 150, seed: `fan-out:${index}` },
}))

/** Lookback as documented until 2026: every block is one position, parallel tool results included. */
const blockLookback = { collapseToolRuns: false }

export const parallelToolResults: Scenario = {
  name: 'parallel-tool-results',
  demonstrates:
    'A step that appends more than 20 blocks misses the cache behind one automatic breakpoint; more breakpoints find it.',
  providers: ['anthropic'],
  variants: [
    { name: 'automatic', build: { breakpoints: 'automatic' }, rules: blockLookback },
    { name: 'last-message', build: { breakpoints: 'last-message' }, rules: blockLookback },
    { name: 'system-and-last', build: { breakpoints: 'system-and-last' }, rules: blockLookback },
    { name: 'rolling', build: { breakpoints: 'rolling' }, rules: blockLookback },
    { name: 'automatic-run-rule', build: { breakpoints: 'automatic' } },
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
}
