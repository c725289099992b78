// The loop port: the loops a scenario can drive. The built-in model loop is harness/loop.ts; an external
// loop is a published agent loop driven through an adapter (loops/dsh/), whose requests go through the
// same row core with its own label.

import { LIBRARY_LOOP_NAMES } from './libraries/types.ts'

/** The loops `cachelab run --loop` knows. */
export const LOOP_NAMES = ['model', 'dsh', ...LIBRARY_LOOP_NAMES] as const

/**
 * `model`: cachelab's model of DSH (harness/loop.ts); `dsh`: DSH's real published loop; the rest: a
 * minimal agent loop on a client library (loops/libraries/), `sdk` on the official SDKs the reference.
 */
export type LoopName = (typeof LOOP_NAMES)[number]

/** One line per loop for `cachelab list`. */
export const LOOP_DESCRIPTIONS: Readonly<Record<LoopName, string>> = {
  model: "cachelab's model of DSH (harness/), every policy variant",
  dsh: "DSH's published loop (@deepseek-ai/dsh-agent-loop 0.1.0-rc.8) on the deepseek provider",
  sdk: 'a minimal agent loop on the official SDKs (@anthropic-ai/sdk, openai): the reference of the library loops',
  'ai-sdk':
    'a minimal agent loop on the Vercel AI SDK (ai, @ai-sdk/anthropic, @ai-sdk/openai, @ai-sdk/deepseek)',
  langchain: 'a minimal agent loop on LangChain JS (@langchain/anthropic, @langchain/openai)',
  'pi-ai': 'a minimal agent loop on pi-ai (@mariozechner/pi-ai)',
  'openai-agents': 'an agent on the OpenAI Agents SDK (@openai/agents-core, @openai/agents-openai)',
}

/** A scenario event a loop cannot express: reported, never faked. */
export interface Inexpressible {
  /** The script action's kind (`prune`, `set-prefix-source`). */
  action: string
  /** The user turn before which it came (0: before the first). */
  turn: number
  /** Why the loop cannot express it. */
  reason: string
}

/** A scenario event an external loop could not express, with its session. */
export interface LoopInexpressible extends Inexpressible {
  /** `<scenario>.<variant>.<provider>`. */
  sessionId: string
  loop: LoopName
}
