// The baseline: a multi-turn coding session whose every request extends the previous one. A correct
// loop reads almost its whole prompt from cache from the second request on.

import { breaks, breaksText, warmRatio, warmText } from './claims.ts'
import { agentSystemPrompt, CODING_TOOLS, result } from './fixtures.ts'
import type { Scenario } from './types.ts'

export const appendOnly: Scenario = {
  name: 'append-only',
  demonstrates:
    'An append-only agent loop reads nearly every prompt token from cache after its first request.',
  variants: [{ name: 'default' }],
  system: agentSystemPrompt(6000),
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: [
    {
      kind: 'turn',
      user: 'The parser test fails on empty input. Find out why and fix it.',
      steps: [
        {
          text: 'Let me look for the parser tests first.',
          toolCalls: [{ name: 'grep', arguments: { pattern: 'describe\\(.parse' }, result: result(180) }],
        },
        {
          toolCalls: [{ name: 'read_file', arguments: { path: 'src/parser.test.ts' }, result: result(300) }],
        },
        { toolCalls: [{ name: 'read_file', arguments: { path: 'src/parser.ts' }, result: result(300) }] },
        {
          text: 'The parser indexes the first token before checking the length. I will guard it.',
          toolCalls: [
            {
              name: 'edit_file',
              arguments: {
                path: 'src/parser.ts',
                old: 'const first = tokens[0]',
                new: 'if (tokens.length === 0) return []\n  const first = tokens[0]',
              },
              result: 'Edited src/parser.ts.',
            },
          ],
        },
        { toolCalls: [{ name: 'run_tests', arguments: { filter: 'parser' }, result: result(220) }] },
        { text: 'Fixed: parse() now returns an empty list for empty input, and the parser tests pass.' },
      ],
    },
    {
      kind: 'turn',
      user: 'Run the whole suite to make sure nothing else broke.',
      steps: [
        { toolCalls: [{ name: 'run_tests', arguments: {}, result: result(300) }] },
        { text: 'All suites pass.' },
      ],
    },
    {
      kind: 'turn',
      user: 'Also check the tokenizer and the formatter for the same bug.',
      steps: [
        {
          text: 'Checking both in parallel.',
          toolCalls: [
            { name: 'read_file', arguments: { path: 'src/tokenizer.ts' }, result: result(260) },
            { name: 'read_file', arguments: { path: 'src/formatter.ts' }, result: result(240) },
          ],
        },
        {
          text: 'The tokenizer already guards empty input; the formatter does not.',
          toolCalls: [
            {
              name: 'edit_file',
              arguments: { path: 'src/formatter.ts', old: 'lines[0].trim()', new: '(lines[0] ?? "").trim()' },
              result: 'Edited src/formatter.ts.',
            },
          ],
        },
        { toolCalls: [{ name: 'run_tests', arguments: { filter: 'formatter' }, result: result(200) }] },
        { text: 'The formatter now handles empty input too; its tests pass.' },
      ],
    },
    {
      kind: 'turn',
      user: 'Write a short changelog entry for these fixes.',
      steps: [{ text: { tokens: 120 } }],
    },
  ],
  claims: [
    {
      id: 'reads-after-first',
      text: 'Every request after the first reads cache, with no break, and the warm hit ratio is at least 90%.',
      variants: ['default'],
      check(rows) {
        const session = rows('default')
        const unread = session.filter((row) => row.ok && !row.cold && row.cacheReadTokens === 0)
        return {
          holds: unread.length === 0 && breaks(session).length === 0 && warmRatio(session) >= 0.9,
          observed: `${warmText(session)}, ${unread.length} warm requests without a read, ${breaksText(session)}`,
        }
      },
    },
  ],
}
