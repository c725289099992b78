// A reply made into the answer a model sends: its reasoning sized (scripted, or a default amount where the
// request or the model turns reasoning on), tool calls named with ids, and the whole cut at the request's
// output cap — reasoning first, as the APIs spend it — with the stop reason the cut implies.

import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { blockOutputTokens, outputTokens } from '../sim/output.ts'
import { decode, encode, type TokenCounter } from '../sim/tokens.ts'
import type { Reply, ReplySource, StopReason } from './reply.ts'

/** The reasoning an answer carries. */
export interface AnswerReasoning {
  text: string
  /** Tokens spent reasoning: part of the output tokens. */
  tokens: number
  /** Sent redacted where the API has a redacted form (Anthropic). */
  redacted: boolean
}

/** What the model answers, ready for a handler to put in its API's shape. */
export interface Answer {
  /** Text and tool calls (with ids), as the simulator and the recorder see the answer. */
  message: AssistantMessage
  reasoning?: AnswerReasoning
  stop: StopReason
  /**
   * Output tokens before the model's token scale, reasoning included and cut at the cap; absent when the
   * message's own count stands (no reasoning, no cut), so a header-scripted answer bills as it always has.
   */
  outputTokens?: number
  /** The namespace of each call of a namespaced tool (OpenAI Responses), by call id. */
  callNamespaces?: Readonly<Record<string, string>>
  source: ReplySource
}

/** Reasoning tokens of a default answer (at most the request's thinking budget). */
export const DEFAULT_REASONING_TOKENS = 32

export interface AnswerOptions {
  /** Whether the model reasons on this request (the request's switch, else the model's mode). */
  reasons: boolean
  /** Anthropic's thinking budget: the default reasoning stays within it. */
  budget?: number
  /** The request's output cap, reasoning included. */
  cap?: number
  counter: TokenCounter
  /** Seeds the default reasoning's words. */
  seed: string
  /** A fresh tool-call id in the API's form. */
  callId: () => string
}

function reasoningOf(reply: Reply, options: AnswerOptions): AnswerReasoning | undefined {
  const plan = reply.reasoning
  switch (plan.kind) {
    case 'none':
      return undefined
    case 'default': {
      if (!options.reasons) return undefined
      const tokens = Math.min(DEFAULT_REASONING_TOKENS, options.budget ?? DEFAULT_REASONING_TOKENS)
      return { text: fillerText(tokens, options.seed), tokens, redacted: false }
    }
    case 'scripted':
      return { text: plan.text, tokens: options.counter.count(plan.text), redacted: plan.redacted }
  }
}

/** The first `tokens` tokens of a text. */
function truncate(text: string, tokens: number): string {
  return tokens <= 0 ? '' : decode(encode(text).slice(0, tokens))
}

/** Make a reply the answer a model sends under the request's cap. */
export function renderAnswer(reply: Reply, options: AnswerOptions): Answer {
  const { counter, cap } = options
  let reasoning = reasoningOf(reply, options)
  const namespaces: Record<string, string> = {}
  const content: AssistantMessage['content'] = reply.blocks.map((block) => {
    if (block.type === 'text') return { type: 'text', text: block.text }
    const callId = block.callId ?? options.callId()
    if (block.namespace !== undefined) namespaces[callId] = block.namespace
    return { type: 'tool-call', callId, name: block.name, arguments: block.arguments }
  })
  const message: AssistantMessage = { role: 'assistant', content }
  const reasoningTokens = reasoning?.tokens ?? 0
  const stop = reply.stop ?? (content.some((block) => block.type === 'tool-call') ? 'tool-use' : 'end')
  const source = reply.source
  const callNamespaces = Object.keys(namespaces).length === 0 ? {} : { callNamespaces: namespaces }
  const withReasoning = reasoning === undefined ? {} : { reasoning }
  if (cap === undefined || reasoningTokens + outputTokens(message, counter) <= cap) {
    return {
      message,
      ...withReasoning,
      stop,
      ...(reasoning !== undefined ? { outputTokens: reasoningTokens + outputTokens(message, counter) } : {}),
      ...callNamespaces,
      source,
    }
  }
  // Over the cap: reasoning is spent first, then each block in order; a text is cut mid-way, a tool call
  // that does not fit whole is left out with everything after it.
  if (reasoning !== undefined && reasoning.tokens > cap)
    reasoning = { ...reasoning, text: truncate(reasoning.text, cap), tokens: cap }
  let left = cap - (reasoning?.tokens ?? 0)
  const kept: AssistantMessage['content'] = []
  for (const block of content) {
    const cost = blockOutputTokens(block, counter)
    if (cost <= left) {
      kept.push(block)
      left -= cost
      continue
    }
    if (block.type === 'text' && left > 0) kept.push({ type: 'text', text: truncate(block.text, left) })
    break
  }
  return {
    message: { role: 'assistant', content: kept },
    ...(reasoning === undefined ? {} : { reasoning }),
    stop: 'max-tokens',
    outputTokens: cap,
    ...callNamespaces,
    source,
  }
}
