// The keyed request-cache scenarios: small versions of append-only, prompt-change and
// series-start-unchanged, sized just above a model's cache minimum so a real run costs cents.

import type { ModelEntry } from '../providers/catalog.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

/** The smallest prompt a model caches (and at least Anthropic's disputed 2,048 for Sonnet 4.6). */
export function cacheMinimum(entry: ModelEntry): number {
  switch (entry.cache.kind) {
    case 'anthropic':
    case 'openai-prefix':
    case 'openai-breakpoint':
      return entry.cache.minTokens
    case 'deepseek':
      return entry.cache.legacyUnitTokens
  }
}

/** The keyed scenarios for one model; `salt` keeps one run's prompts apart from another's. */
export function keyedScenarios(entry: ModelEntry, salt: string): Scenario[] {
  const size = Math.max(2048, cacheMinimum(entry)) + 512
  const seed = `keyed:${entry.vendor}:${salt}`
  const base = { tools: CODING_TOOLS, maxTokens: 32, pace: { turnGapSeconds: 0, toolSeconds: 0 } }
  const turns = (count: number, from = 0) => codingTurns(count, { seed, resultTokens: 120, from })
  const system = (name: string) => agentSystemPrompt(size, `${seed}:${name}`)
  const promptChangeSystem = system('prompt-change')
  const seriesSystem = system('series-start')
  const routeVariants =
    entry.route === 'in-history'
      ? [
          { name: 'in-history', policies: { route: 'in-history' as const } },
          { name: 'unsupported', policies: { route: 'unsupported' as const } },
        ]
      : [{ name: 'unsupported', policies: { route: 'unsupported' as const } }]
  return [
    {
      ...base,
      name: 'append-only',
      demonstrates: 'Every request after the warm-up reads the cached prefix.',
      variants: [{ name: 'default' }],
      system: system('append-only'),
      script: turns(3),
    },
    {
      ...base,
      name: 'prompt-change',
      demonstrates: 'Appending a changed prompt reads more than rewriting message 0.',
      variants: routeVariants,
      system: promptChangeSystem,
      script: [
        ...turns(2),
        { kind: 'set-system', text: `${promptChangeSystem}\n\nBuild mode is on.` },
        ...turns(1, 2),
      ],
    },
    {
      ...base,
      name: 'series-start-unchanged',
      demonstrates: 'Keeping the live prompt node at a new series reads more than consolidating it.',
      variants: [
        { name: 'consolidate', policies: { route: entry.route, seriesStart: 'consolidate' } },
        { name: 'keep-live', policies: { route: entry.route, seriesStart: 'keep-live' } },
      ],
      system: seriesSystem,
      script: [
        ...turns(1),
        { kind: 'set-system', text: `${seriesSystem}\n\nBuild update: fixes only.` },
        {
          kind: 'turn',
          user: 'Read the long generated file.',
          steps: [
            {
              toolCalls: [
                {
                  name: 'read_file',
                  arguments: { path: 'src/generated.ts' },
                  result: { tokens: 2500, seed: `${seed}:long` },
                },
              ],
            },
            { text: 'Read it.' },
          ],
        },
        ...turns(1, 1),
        { kind: 'prune', thresholdChars: 4000, keepChars: 1000, skipLastNodes: 4 },
        ...turns(1, 2),
      ],
    },
  ]
}
