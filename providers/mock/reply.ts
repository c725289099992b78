// What a mock model says, before any API renders it: the `x-cachelab-script` header's message, else the
// replies file's rule for the request's session, turn and step, else the default that lets a tool loop
// run (call one declared tool after a user message, answer in text once its result is back).

import { fillerText } from '../../harness/filler.ts'
import type { DeclaredTool, Position, ToolChoice } from './conversation.ts'
import { exampleArguments } from './schema-arguments.ts'
import type { HeaderAnswer } from './script.ts'

/** How an answer ends, in one vocabulary for every API (each handler maps it to its own). */
export type StopReason = 'end' | 'tool-use' | 'max-tokens' | 'content-filter' | 'refusal' | 'pause-turn'

export const STOP_REASONS: readonly StopReason[] = [
  'end',
  'tool-use',
  'max-tokens',
  'content-filter',
  'refusal',
  'pause-turn',
]

/** Text the model writes: literal, or deterministic filler of a token count. */
export type TextSpec = { kind: 'literal'; text: string } | { kind: 'tokens'; tokens: number }

/** A tool call a scripted answer makes. */
export interface ToolCallSpec {
  /** The declared tool to call; absent: the one the default answer would call. */
  name?: string
  /** The arguments as JSON text, sent as written; absent: made up from the tool's schema. */
  arguments?: string
}

/** Reasoning a scripted answer carries. */
export interface ReasoningSpec {
  text: TextSpec
  /** Anthropic sends it as a `redacted_thinking` block (other APIs have no redacted form). */
  redacted: boolean
}

/** What a rule of a replies file makes the model answer. */
export interface ScriptedAnswer {
  text?: TextSpec
  tools: readonly ToolCallSpec[]
  /** `none`: no reasoning even where the request asks for it; absent: the request and model decide. */
  reasoning?: ReasoningSpec | 'none'
  stop?: StopReason
}

/** One rule of a replies file: where it applies, and what the model answers there. */
export interface ReplyRule {
  /** A session id (`x-cachelab-session`, or the inferred `c-…` id), or `*` for every session. */
  session: string
  /** The user turn it answers (from 1); absent: every turn. */
  turn?: number
  /** The request within the turn (from 1); absent: every step. */
  step?: number
  answer: ScriptedAnswer
  /** Where the rule was written (`replies.jsonl:3`), named by errors found when it answers. */
  origin: string
}

/** The rules of a replies file. A request takes the most specific rule that matches it, the first on a tie. */
export class ReplyBook {
  readonly rules: readonly ReplyRule[]

  constructor(rules: readonly ReplyRule[]) {
    this.rules = rules
  }

  /** The rule for a request of `session` at `position`: an exact session beats `*`, then turn, then step. */
  find(session: string | undefined, position: Pick<Position, 'turn' | 'step'>): ReplyRule | undefined {
    let best: { rule: ReplyRule; score: number } | undefined
    for (const rule of this.rules) {
      if (rule.session !== '*' && rule.session !== session) continue
      if (rule.turn !== undefined && rule.turn !== position.turn) continue
      if (rule.step !== undefined && rule.step !== position.step) continue
      const score =
        (rule.session === '*' ? 0 : 4) + (rule.turn === undefined ? 0 : 2) + (rule.step === undefined ? 0 : 1)
      if (best === undefined || score > best.score) best = { rule, score }
    }
    return best?.rule
  }
}

/** Where a reply came from. */
export type ReplySource = 'header' | 'replies' | 'default'

/** One block of a reply: text, or a tool call (its id given by the header, or named by the handler). */
export type ReplyBlock =
  | { type: 'text'; text: string }
  | { type: 'tool-call'; name: string; arguments: string; callId?: string }

/** Whether and how the reply reasons. */
export type ReasoningPlan =
  | { kind: 'none' }
  /** The default amount, where the request or the model turns reasoning on. */
  | { kind: 'default' }
  | { kind: 'scripted'; text: string; redacted: boolean }

/** What the model says, before its API renders it and before the request's output cap. */
export interface Reply {
  blocks: ReplyBlock[]
  reasoning: ReasoningPlan
  /** The scripted stop reason; absent: `tool-use` when the reply calls tools, else `end`. */
  stop?: StopReason
  source: ReplySource
}

/** The facts of a request a reply depends on. */
export interface ReplyRequest {
  /** The request's session, when known. */
  session: string | undefined
  position: Position
  tools: readonly DeclaredTool[]
  toolChoice: ToolChoice
}

/** The default answer's text, and the refusal a scripted `refusal` stop writes when given no text. */
export const DEFAULT_TEXT = 'OK.'
export const DEFAULT_REFUSAL = "I'm sorry, but I can't help with that."

/** A reply that cannot be given: a rule names a tool the request does not declare. */
export interface ReplyProblem {
  problem: string
}

/** The header's message as a reply: exactly that, no reasoning added (cachelab's own runs rely on it). */
export function headerReply(message: HeaderAnswer): Reply {
  return {
    blocks: message.content.map((block) =>
      block.type === 'text'
        ? { type: 'text', text: block.text }
        : { type: 'tool-call', name: block.name, arguments: block.arguments, callId: block.callId },
    ),
    reasoning: message.reasoning === 'as-requested' ? { kind: 'default' } : { kind: 'none' },
    source: 'header',
  }
}

/**
 * The tool the default answer calls, if it calls one: the tool the choice names, else the first declared
 * one; none when the choice is `none`, or when the conversation does not end with a user turn and the
 * choice does not force a call.
 */
export function defaultTool(request: ReplyRequest): DeclaredTool | undefined {
  const { tools, toolChoice, position } = request
  switch (toolChoice.kind) {
    case 'none':
      return undefined
    case 'named':
      return tools.find((tool) => tool.name === toolChoice.name)
    case 'required':
      return tools[0]
    case 'auto':
      return position.after === 'user' ? tools[0] : undefined
  }
}

/** The default reply: one declared tool called after a user turn, else `OK.`; reasoning where asked for. */
export function defaultReply(request: ReplyRequest): Reply {
  const tool = defaultTool(request)
  return {
    blocks:
      tool === undefined
        ? [{ type: 'text', text: DEFAULT_TEXT }]
        : [{ type: 'tool-call', name: tool.name, arguments: exampleArguments(tool.schema) }],
    reasoning: { kind: 'default' },
    source: 'default',
  }
}

/** The seed of a request's generated text: the same session, turn and step always write the same words. */
export function replySeed(request: ReplyRequest, what: string): string {
  return `${what}:${request.session ?? '*'}:${request.position.turn}.${request.position.step}`
}

function resolveText(spec: TextSpec, seed: string): string {
  switch (spec.kind) {
    case 'literal':
      return spec.text
    case 'tokens':
      return fillerText(spec.tokens, seed)
  }
}

/** The reply a rule scripts for a request, or the problem that prevents it. */
export function scriptedReply(rule: ReplyRule, request: ReplyRequest): Reply | ReplyProblem {
  const { answer } = rule
  const blocks: ReplyBlock[] = []
  const text =
    answer.text === undefined
      ? answer.stop === 'refusal'
        ? DEFAULT_REFUSAL
        : undefined
      : resolveText(answer.text, replySeed(request, 'text'))
  if (text !== undefined) blocks.push({ type: 'text', text })
  const declared = request.tools.map((tool) => tool.name)
  for (const call of answer.tools) {
    const tool =
      call.name === undefined
        ? (defaultTool({ ...request, position: { ...request.position, after: 'user' } }) ?? request.tools[0])
        : request.tools.find((candidate) => candidate.name === call.name)
    if (tool === undefined) {
      const what = call.name === undefined ? 'a tool' : `tool ${JSON.stringify(call.name)}`
      return {
        problem: `cachelab replies (${rule.origin}): turn ${request.position.turn} step ${request.position.step} calls ${what}, but the request declares ${declared.length === 0 ? 'no tools' : `only ${declared.join(', ')}`}`,
      }
    }
    blocks.push({
      type: 'tool-call',
      name: tool.name,
      arguments: call.arguments ?? exampleArguments(tool.schema),
    })
  }
  const reasoning: ReasoningPlan =
    answer.reasoning === undefined
      ? { kind: 'default' }
      : answer.reasoning === 'none'
        ? { kind: 'none' }
        : {
            kind: 'scripted',
            text: resolveText(answer.reasoning.text, replySeed(request, 'reasoning')),
            redacted: answer.reasoning.redacted,
          }
  return { blocks, reasoning, ...(answer.stop !== undefined ? { stop: answer.stop } : {}), source: 'replies' }
}

/** What the model says to a request: the header's message, else the book's rule, else the default. */
export function decideReply(
  request: ReplyRequest,
  header: HeaderAnswer | undefined,
  book: ReplyBook | undefined,
): Reply | ReplyProblem {
  if (header !== undefined) return headerReply(header)
  const rule = book?.find(request.session, request.position)
  return rule === undefined ? defaultReply(request) : scriptedReply(rule, request)
}
