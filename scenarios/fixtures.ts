// Building blocks scenarios share: a coding agent's system prompt and tool set.

import { fillerText } from '../harness/filler.ts'
import type { TextSpec } from '../harness/script.ts'
import type { ToolSchema } from '../harness/types.ts'

/** A coding agent's system prompt of about `tokens` tokens: a fixed preamble and deterministic filler. */
export function agentSystemPrompt(tokens: number, seed = 'system'): string {
  const preamble =
    'You are a careful coding agent working in a TypeScript repository. Read before you edit, run the tests ' +
    'after every change, and explain what you did in a short final message.\n\nProject conventions:'
  return `${preamble}${fillerText(tokens, seed)}`
}

/** Tool definitions of a coding agent. */
export const CODING_TOOLS: ToolSchema[] = [
  {
    name: 'read_file',
    description: 'Read a file of the repository and return its contents with line numbers.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Path relative to the repository root.' } },
      required: ['path'],
    },
  },
  {
    name: 'grep',
    description: 'Search the repository for a regular expression and return matching lines.',
    parameters: {
      type: 'object',
      properties: { pattern: { type: 'string' }, path: { type: 'string' } },
      required: ['pattern'],
    },
  },
  {
    name: 'edit_file',
    description: 'Replace an exact string in a file with new text.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' }, old: { type: 'string' }, new: { type: 'string' } },
      required: ['path', 'old', 'new'],
    },
  },
  {
    name: 'run_tests',
    description: 'Run the test suite, optionally filtered, and return the report.',
    parameters: { type: 'object', properties: { filter: { type: 'string' } } },
  },
]

/** A tool result of `tokens` tokens. */
export function result(tokens: number): TextSpec {
  return { tokens }
}
