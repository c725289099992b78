// Seed 000: session-stable opener content (a skill catalog). Frozen per loop instance and sent after the
// system slot, recomputed after the history on every step, injected as durable history, or absent; the
// catalog changes mid-session and the process restarts.

import { fillerText } from '../harness/filler.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

const catalog = `Skills available in this workspace:${fillerText(1500, 'skills')}`

export const sessionPrefix: Scenario = {
  name: 'session-prefix',
  demonstrates:
    'A frozen session prefix costs one write per loop instance; recomputing it after the history re-pays it every step.',
  variants: [
    { name: 'off', policies: { sessionPrefix: 'off' } },
    { name: 'frozen', policies: { sessionPrefix: 'frozen' } },
    { name: 'after-slot', policies: { sessionPrefix: 'after-slot' } },
    { name: 'opener', policies: { sessionPrefix: 'opener' } },
  ],
  system: agentSystemPrompt(3000, 'session-prefix'),
  tools: CODING_TOOLS,
  prefixSource: catalog,
  maxTokens: 1024,
  script: [
    ...codingTurns(3, { seed: 'session-prefix', resultTokens: 300 }),
    {
      kind: 'set-prefix-source',
      text: `${catalog}\n- release-notes: drafts release notes from merged changes.`,
    },
    ...codingTurns(3, { seed: 'session-prefix', resultTokens: 300, from: 3 }),
    { kind: 'restart' },
    ...codingTurns(3, { seed: 'session-prefix', resultTokens: 300, from: 6 }),
  ],
}
