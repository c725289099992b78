// An example of a scenario file in your own project (copy it, then run
// `npx cachelab run --scenarios path/to/support-bot.ts`). A support bot keeps the customer's account
// status up to date: written into the system prompt, every refresh rewrites the head of the prompt and the
// provider reads the conversation uncached again; appended as a message, the cached prefix stays intact.
//
// Only types come from cachelab (`import type` is erased when the file is loaded), so the file also runs
// where cachelab is not importable at run time. In your project the import is `from 'cachelab'`.

import type { Scenario, StepRow, TurnScript } from 'cachelab'

/** The bot's instructions: long enough (about 3,000 tokens) that every provider caches them. */
const INSTRUCTIONS = [
  'You are the support assistant of Northwind Outfitters, an online shop for outdoor gear.',
  'Answer in the customer language, briefly, and never promise what the policies below do not allow.',
  ...Array.from(
    { length: 60 },
    (_, index) =>
      `Policy ${index + 1}: when a customer asks about case type ${index + 1}, look the order up first, quote the ` +
      `relevant rule, and offer at most one goodwill gesture per order; escalate disputes over 200 EUR.`,
  ),
].join('\n')

const status = (text: string) => `${INSTRUCTIONS}\n\nAccount status: ${text}`

const TOOLS: Scenario['tools'] = [
  {
    name: 'lookup_order',
    description: 'Look an order up by its number and return its items, payments and shipping events.',
    parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
  },
  {
    name: 'refund_order',
    description: 'Refund an order or part of it to the original payment method.',
    parameters: {
      type: 'object',
      properties: { order: { type: 'string' }, amount: { type: 'number' } },
      required: ['order', 'amount'],
    },
  },
]

function turn(user: string, order: string): TurnScript {
  return {
    kind: 'turn',
    user,
    steps: [
      { toolCalls: [{ name: 'lookup_order', arguments: { order }, result: { tokens: 300 } }] },
      { text: { tokens: 80 } },
    ],
  }
}

/** How much a session read from cache, over its warm requests. */
function warmRatio(rows: readonly StepRow[]): number {
  const warm = rows.filter((row) => row.ok && !row.cold)
  const input = warm.reduce((sum, row) => sum + row.inputTokens, 0)
  return input === 0 ? 0 : warm.reduce((sum, row) => sum + row.cacheReadTokens, 0) / input
}

const lost = (rows: readonly StepRow[]) => rows.reduce((sum, row) => sum + row.lostTokens, 0)
const percent = (ratio: number) => `${(ratio * 100).toFixed(1)}%`

// Each refresh is written both ways in the script; each variant skips the way it does not use.
const REFRESHES: Array<{ system: string; message: string }> = [
  { system: status('order 1042 shipped.'), message: 'Account status update: order 1042 shipped.' },
  { system: status('order 1042 delivered.'), message: 'Account status update: order 1042 delivered.' },
  { system: status('refund for 1042 pending.'), message: 'Account status update: refund for 1042 pending.' },
]

const supportBot: Scenario = {
  name: 'support-bot',
  demonstrates:
    'Refreshing the account status inside the system prompt rewrites the cached head at every refresh; appending it as a message keeps the cache.',
  variants: [
    // `route: 'unsupported'`: the changed prompt replaces message 0, as most clients rebuild it.
    { name: 'status-in-system', policies: { route: 'unsupported' }, skip: ['inject'] },
    { name: 'status-in-message', skip: ['set-system'] },
  ],
  system: status('no open orders.'),
  tools: TOOLS,
  maxTokens: 512,
  script: [
    turn('Hi, where is my order 1042?', '1042'),
    ...REFRESHES.flatMap((refresh, index) => [
      { kind: 'set-system' as const, text: refresh.system },
      { kind: 'inject' as const, text: refresh.message, plugin: 'account-status' },
      turn(`Thanks. Follow-up question ${index + 1} about order 1042.`, '1042'),
    ]),
  ],
  claims: [
    {
      id: 'message-keeps-cache',
      text: 'Appending the status as a message keeps the cache: no break, and a warm hit ratio of at least 80%.',
      variants: ['status-in-message'],
      check(rows) {
        const session = rows('status-in-message')
        const broken = session.filter((row) => row.ok && row.breakCause !== undefined)
        return {
          holds: broken.length === 0 && warmRatio(session) >= 0.8,
          observed: `warm ${percent(warmRatio(session))}, ${broken.length} breaks`,
        }
      },
    },
    {
      id: 'system-breaks-each-refresh',
      text: 'Writing the status into the system prompt breaks the cache at the system prompt on every refresh, and loses more tokens.',
      variants: ['status-in-system', 'status-in-message'],
      check(rows) {
        const session = rows('status-in-system')
        const replaced = session.filter((row) => row.ok && row.breakCause === 'system-replace')
        return {
          holds: replaced.length === REFRESHES.length && lost(session) > lost(rows('status-in-message')),
          observed: `${replaced.length} system-replace breaks, ${lost(session)} tokens lost vs ${lost(rows('status-in-message'))}`,
        }
      },
    },
  ],
}

export default supportBot
