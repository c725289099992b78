// Gemini's explicit context cache against its implicit one: pauses longer than the implicit lifetime lose
// the large head each time, while a cache created with a TTL keeps it readable for a storage fee.

import { findModel } from '../providers/catalog.ts'
import { explicitCacheUsd } from '../reports/cost.ts'
import { dollarText } from '../reports/text-table.ts'
import { breaksText, breaksWith } from './claims.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import type { Scenario } from './types.ts'

/** The explicit cache's lifetime: the whole session fits in it. */
const TTL_SECONDS = 1800
const PAUSE_SECONDS = 360

export const explicitCache: Scenario = {
  name: 'explicit-cache',
  demonstrates:
    'Pauses past the implicit cache lifetime lose a large head each time; an explicit cache with a TTL keeps it readable, and pays off despite its creation and storage.',
  variants: [{ name: 'implicit' }, { name: 'explicit-30m', build: { geminiCacheTtlSeconds: TTL_SECONDS } }],
  system: agentSystemPrompt(20000, 'explicit-cache'),
  tools: CODING_TOOLS,
  maxTokens: 1024,
  providers: ['gemini'],
  script: [
    ...codingTurns(1, { seed: 'explicit', resultTokens: 300 }),
    ...[1, 2, 3, 4].flatMap((from) => [
      { kind: 'idle' as const, seconds: PAUSE_SECONDS },
      ...codingTurns(1, { seed: 'explicit', resultTokens: 300, from }),
    ]),
  ],
  claims: [
    {
      id: 'implicit-expires',
      text: 'Without an explicit cache every pause past the implicit lifetime expires the prefix.',
      variants: ['implicit'],
      check(rows) {
        const expired = breaksWith(rows('implicit'), 'ttl-expired')
        return { holds: expired.length === 4, observed: breaksText(rows('implicit')) }
      },
    },
    {
      id: 'explicit-keeps-head',
      text: 'With the explicit cache every request reads at least the cached head, pauses or not.',
      variants: ['explicit-30m'],
      check(rows) {
        const session = rows('explicit-30m').filter((row) => row.ok)
        const head = session[0]?.cacheReadTokens ?? 0
        const below = session.filter((row) => row.cacheReadTokens < head)
        return {
          holds: head > 0 && below.length === 0,
          observed: `head ${head.toLocaleString('en-US')} tokens, ${below.length} requests read less`,
        }
      },
    },
    {
      id: 'explicit-pays',
      text: 'The explicit cache costs less over the session, its creation and storage included.',
      variants: ['implicit', 'explicit-30m'],
      check(rows) {
        const cost = (variant: string) => rows(variant).reduce((sum, row) => sum + row.costUsd, 0)
        const first = rows('explicit-30m').find((row) => row.ok)
        const prices = first === undefined ? undefined : findModel('gemini', first.model)?.prices
        const cache =
          prices === undefined ? 0 : explicitCacheUsd(first?.cacheReadTokens ?? 0, TTL_SECONDS, prices)
        const explicit = cost('explicit-30m') + cache
        return {
          holds: prices !== undefined && explicit < cost('implicit'),
          observed: `explicit ${dollarText(explicit)} (cache ${dollarText(cache)}), implicit ${dollarText(cost('implicit'))}`,
        }
      },
    },
  ],
}
