// The tool set changes mid-session: a tool is added, later one removed. Declaring the active set rewrites
// the tools prefix (the very start of the prompt); announcing changes in history keeps it.

import type { ToolSchema } from '../harness/types.ts'
import { breaksText, breaksWith, lostTokens, tokensText } from './claims.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

const webSearch: ToolSchema = {
  name: 'web_search',
  description: 'Search the web and return the top results with snippets.',
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
}

export const toolSchemaChange: Scenario = {
  name: 'tool-schema-change',
  demonstrates:
    'Adding or removing a tool rewrites the tools prefix unless the route announces tool updates in history.',
  variants: [
    { name: 'unsupported', policies: { toolUpdates: 'unsupported' } },
    { name: 'addition-only', policies: { toolUpdates: 'addition-only' } },
    { name: 'in-history', policies: { toolUpdates: 'in-history' } },
  ],
  system: agentSystemPrompt(3000, 'tools'),
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: [
    ...codingTurns(3, { seed: 'tools', resultTokens: 400 }),
    { kind: 'set-tools', tools: [...CODING_TOOLS, webSearch] },
    ...codingTurns(3, { seed: 'tools', resultTokens: 400, from: 3 }),
    { kind: 'set-tools', tools: CODING_TOOLS.filter((tool) => tool.name !== 'grep').concat(webSearch) },
    ...codingTurns(3, { seed: 'tools', resultTokens: 400, from: 6 }),
  ],
  claims: [
    {
      id: 'rewrite-unless-in-history',
      text: 'Without tool updates in history the tool change breaks at the tools; announced in history, the tools prefix holds.',
      variants: ['unsupported', 'in-history'],
      check(rows) {
        const rewritten = breaksWith(rows('unsupported'), 'tools-changed')
        const announced = lostTokens(rows('in-history'))
        return {
          holds: rewritten.length > 0 && announced < lostTokens(rows('unsupported')),
          observed: `unsupported ${breaksText(rows('unsupported'))}; in-history ${tokensText(announced)} lost`,
        }
      },
    },
  ],
}
