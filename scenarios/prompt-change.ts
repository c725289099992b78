// A system prompt changes once mid-session. On an in-history route the new version is appended after
// the cached history; on an unsupported route message 0 is rewritten and everything after it re-sent.

import { breaksText, breaksWith, lostTokens, tokensText } from './claims.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

const system = agentSystemPrompt(4000, 'prompt-change')

export const promptChange: Scenario = {
  name: 'prompt-change',
  demonstrates:
    'Appending a changed system prompt in history keeps the cache; rewriting message 0 re-sends the conversation uncached.',
  variants: [
    { name: 'in-history', policies: { route: 'in-history' } },
    { name: 'unsupported', policies: { route: 'unsupported' } },
  ],
  system,
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: [
    ...codingTurns(4, { seed: 'prompt-change', resultTokens: 400 }),
    {
      kind: 'set-system',
      text: `${system}\n\nBuild mode is on: you may edit files outside src/ and run the release script.`,
    },
    ...codingTurns(3, { seed: 'prompt-change', resultTokens: 400, from: 4 }),
  ],
  claims: [
    {
      id: 'in-history-loses-less',
      text: 'Appending the changed prompt in history loses fewer tokens than rewriting message 0, which breaks at the system prompt.',
      variants: ['in-history', 'unsupported'],
      check(rows) {
        const appended = lostTokens(rows('in-history'))
        const rewritten = lostTokens(rows('unsupported'))
        const replaced = breaksWith(rows('unsupported'), 'system-replace')
        return {
          holds: appended < rewritten && replaced.length > 0,
          observed: `in-history ${tokensText(appended)} lost, unsupported ${tokensText(rewritten)} (${breaksText(rows('unsupported'))})`,
        }
      },
    },
  ],
}
