// An example scenario file in plain JavaScript: no import of cachelab at all, and the same schema as a
// TypeScript file (`npx cachelab run --scenarios path/to/clock-in-prompt.mjs`). A system prompt that states
// the current time changes before every turn, so the provider reads nothing of the conversation again; one
// that states the date, fixed for the session, is read from cache. The JSDoc type below gives editor help
// where cachelab is installed; it is a comment, so nothing is imported when the file runs.

const INSTRUCTIONS = Array.from(
  { length: 50 },
  (_, index) =>
    `Rule ${index + 1}: plan the day's calendar entries in order of priority, keep 10 minutes between ` +
    'meetings, and never move an entry the owner marked as fixed.',
).join('\n')

const TIMES = ['09:00', '09:07', '09:15', '09:24']

/** @type {(time: string) => import('cachelab').ScriptAction[]} */
const turnAt = (time) => [
  { kind: 'set-system', text: `You are a scheduling assistant. Current time: ${time}.\n${INSTRUCTIONS}` },
  {
    kind: 'turn',
    user: `It is ${time}. What is next on my calendar?`,
    steps: [
      { toolCalls: [{ name: 'list_events', arguments: { day: 'today' }, result: { tokens: 250 } }] },
      { text: { tokens: 60 } },
    ],
  },
  { kind: 'idle', seconds: 60 },
]

/** @type {import('cachelab').Scenario} */
export default {
  name: 'clock-in-prompt',
  demonstrates:
    'A clock time in the system prompt breaks the cache before every turn; the date alone keeps the conversation cached.',
  variants: [
    { name: 'time-per-turn', policies: { route: 'unsupported' } },
    { name: 'date-per-session', skip: ['set-system'] },
  ],
  system: `You are a scheduling assistant. Today is Monday.\n${INSTRUCTIONS}`,
  tools: [
    {
      name: 'list_events',
      description: 'List the calendar events of a day.',
      parameters: { type: 'object', properties: { day: { type: 'string' } }, required: ['day'] },
    },
  ],
  maxTokens: 256,
  script: TIMES.flatMap(turnAt),
  claims: [
    {
      id: 'time-breaks-every-turn',
      text: 'With the time in the system prompt every turn after the first breaks at the system prompt.',
      variants: ['time-per-turn'],
      check(rows) {
        const replaced = rows('time-per-turn').filter((row) => row.ok && row.breakCause === 'system-replace')
        return {
          holds: replaced.length === TIMES.length - 1,
          observed: `${replaced.length} system-replace breaks`,
        }
      },
    },
    {
      id: 'date-keeps-cache',
      text: 'With the date alone no request breaks the cache.',
      variants: ['date-per-session'],
      check(rows) {
        const broken = rows('date-per-session').filter((row) => row.ok && row.breakCause !== undefined)
        return { holds: broken.length === 0, observed: `${broken.length} breaks` }
      },
    },
  ],
}
