// Seed 000: session-stable opener content (a skill catalog). Frozen per loop instance and sent after the
// system slot, recomputed after the history on every step, injected as durable history, or absent; the
// catalog changes mid-session and the process restarts.

import { fillerText } from '../harness/filler.ts'
import { breaks, breaksText, breaksWith, lostTokens, tokensText } from './claims.ts'
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
  claims: [
    {
      id: 'frozen-once-per-instance',
      text: 'A frozen prefix breaks once, at the restart that recomposes it (prefix-drift), and never in between.',
      variants: ['frozen'],
      check(rows) {
        const found = breaks(rows('frozen'))
        return {
          holds: found.length === 1 && found[0]?.breakCause === 'prefix-drift',
          observed: breaksText(rows('frozen')),
        }
      },
    },
    {
      id: 'after-slot-every-step',
      text: 'A prefix recomputed after the history breaks on at least three in four warm requests and loses more than a frozen one.',
      variants: ['after-slot', 'frozen'],
      check(rows) {
        const session = rows('after-slot')
        const warm = session.filter((row) => row.ok && !row.cold)
        const broken = breaksWith(session, 'after-slot').length
        const lost = lostTokens(session)
        return {
          holds: broken * 4 >= warm.length * 3 && lost > lostTokens(rows('frozen')),
          observed: `after-slot breaks on ${broken} of ${warm.length} warm requests, ${tokensText(lost)} lost; frozen ${tokensText(lostTokens(rows('frozen')))}`,
        }
      },
    },
  ],
}
