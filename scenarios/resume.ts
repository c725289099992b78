// The process restarts mid-session and a new loop instance resumes the log. Unchanged, the first request
// after the restart extends the last one before it, and so it does after a temperature change (sampling
// settings are not part of the cache key); a prompt that drifted rewrites the head on routes that replace
// the system prompt, and is appended on routes that take updates in history.

import type { ScriptAction } from '../harness/script.ts'
import { breaks, breaksText, breaksWith } from './claims.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

const system = agentSystemPrompt(4000, 'resume')
const before = codingTurns(4, { seed: 'resume', resultTokens: 400 })
const after = codingTurns(3, { seed: 'resume', resultTokens: 400, from: 4 })
const across = (...changes: ScriptAction[]): ScriptAction[] => [
  ...before,
  { kind: 'restart' },
  ...changes,
  ...after,
]

export const resume: Scenario = {
  name: 'resume',
  demonstrates:
    'A resume with an unchanged header keeps the cache; a prompt that drifted across the restart rewrites the head.',
  variants: [
    { name: 'unchanged', script: across() },
    {
      name: 'prompt-drift',
      script: across({ kind: 'set-system', text: `${system}\n\nToday is a release day.` }),
    },
    { name: 'temperature-change', script: across({ kind: 'set-config', config: { temperature: 0.2 } }) },
  ],
  system,
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: across(),
  claims: [
    {
      id: 'unchanged-keeps',
      text: 'A resume with an unchanged header, or with only a changed temperature, reads the cache on with no break.',
      variants: ['unchanged', 'temperature-change'],
      check(rows) {
        const found = [...breaks(rows('unchanged')), ...breaks(rows('temperature-change'))]
        return { holds: found.length === 0, observed: `${found.length} breaks across both` }
      },
    },
    {
      id: 'drift-rewrites-head',
      text: 'A prompt that drifted across the restart breaks at the system prompt where the route rewrites the head.',
      variants: ['prompt-drift'],
      providers: ['anthropic'],
      check(rows) {
        const replaced = breaksWith(rows('prompt-drift'), 'system-replace')
        return { holds: replaced.length === 1, observed: breaksText(rows('prompt-drift')) }
      },
    },
  ],
}
