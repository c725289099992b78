// Building blocks scenarios share: a coding agent's system prompt and tool set.

import { fillerText } from '../harness/filler.ts'
import type { StepScript, TextSpec, ToolCallScript, TurnScript } from '../harness/script.ts'
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

const FILES = [
  'src/parser.ts',
  'src/lexer.ts',
  'src/format.ts',
  'src/cli.ts',
  'src/cache.ts',
  'src/report.ts',
  'src/store.ts',
]

/**
 * `count` ordinary coding turns, deterministic from `seed`: a request, one to three tool steps (grep,
 * read, edit, test) with results of about `resultTokens`, and a short final answer.
 */
export function codingTurns(
  count: number,
  options: { seed: string; resultTokens: number; from?: number },
): TurnScript[] {
  const turns: TurnScript[] = []
  const from = options.from ?? 0
  for (let index = from; index < from + count; index += 1) {
    const file = FILES[index % FILES.length] as string
    const toolSteps = 1 + (index % 3)
    const steps: StepScript[] = []
    const calls: ToolCallScript[] = [
      {
        name: 'grep',
        arguments: { pattern: `TODO ${index}`, path: 'src' },
        result: { tokens: Math.round(options.resultTokens * 0.6), seed: `${options.seed}:grep:${index}` },
      },
      {
        name: 'read_file',
        arguments: { path: file },
        result: { tokens: options.resultTokens, seed: `${options.seed}:read:${index}` },
      },
      {
        name: 'run_tests',
        arguments: { filter: file.slice(4, -3) },
        result: { tokens: Math.round(options.resultTokens * 0.4), seed: `${options.seed}:test:${index}` },
      },
    ]
    for (const call of calls.slice(0, toolSteps)) steps.push({ toolCalls: [call] })
    steps.push({ text: { tokens: 40, seed: `${options.seed}:answer:${index}` } })
    turns.push({ kind: 'turn', user: `Task ${index + 1}: tidy up ${file} and keep its tests green.`, steps })
  }
  return turns
}
