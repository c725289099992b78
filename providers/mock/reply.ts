// What a mock model says, before any API renders it: the `x-cachelab-script` header's message, else the
// replies file's most specific rule that matches the request and calls only tools it declares, else the
// default that lets a tool loop run and end (call one harmless declared tool after a user message, answer
// in text once its result is back; JSON of the schema where the request asks for structured output).

import { fillerText } from '../../harness/filler.ts'
import type { ConversationKind } from '../wire/exchange.ts'
import type { JsonOutput } from '../wire/wire-text.ts'
import type { DeclaredTool, Position, ToolChoice } from './conversation.ts'
import { exampleArguments, exampleJson } from './schema-arguments.ts'
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

/**
 * One rule of a replies file: where it applies, and what the model answers there. Every field it sets
 * must hold for the request; the fields it leaves out hold always.
 */
export interface ReplyRule {
  /** A session id (`x-cachelab-session`, or the inferred `c-…` id), or `*` for every session. */
  session: string
  /** The name of the conversation it answers; absent: every conversation. */
  conversation?: string
  /** The kind of conversation it answers; absent: every kind. */
  kind?: ConversationKind
  /** Text the request's system prompt contains; absent: any system prompt. */
  system?: string
  /** Text the request's latest user message contains; absent: any message. */
  user?: string
  /** The user turn it answers (from 1); absent: every turn. */
  turn?: number
  /** The request within the turn (from 1); absent: every step. */
  step?: number
  answer: ScriptedAnswer
  /** Where the rule was written (`replies.jsonl:3`). */
  origin: string
}

/**
 * What each field a rule sets adds to its specificity. Each weighs more than all the lighter ones
 * together, so rules compare field by field in this order: who is asking (session, conversation, kind,
 * system prompt), then what was asked (user text, turn, step).
 */
export const SPECIFICITY = {
  session: 64,
  conversation: 32,
  kind: 16,
  system: 8,
  user: 4,
  turn: 2,
  step: 1,
} as const

/** How specific a rule is: the weights of the fields it sets (a session other than `*` counts). */
export function specificity(rule: ReplyRule): number {
  return (
    (rule.session === '*' ? 0 : SPECIFICITY.session) +
    (rule.conversation === undefined ? 0 : SPECIFICITY.conversation) +
    (rule.kind === undefined ? 0 : SPECIFICITY.kind) +
    (rule.system === undefined ? 0 : SPECIFICITY.system) +
    (rule.user === undefined ? 0 : SPECIFICITY.user) +
    (rule.turn === undefined ? 0 : SPECIFICITY.turn) +
    (rule.step === undefined ? 0 : SPECIFICITY.step)
  )
}

/** Whether every field the rule sets holds for the request (its tool calls aside). */
function matches(rule: ReplyRule, request: ReplyRequest): boolean {
  const { position } = request
  return (
    (rule.session === '*' || rule.session === request.session) &&
    (rule.conversation === undefined || rule.conversation === request.conversation) &&
    (rule.kind === undefined || rule.kind === request.kind) &&
    (rule.system === undefined || (request.systemText ?? '').includes(rule.system)) &&
    (rule.user === undefined || (request.lastUserText ?? '').includes(rule.user)) &&
    (rule.turn === undefined || rule.turn === position.turn) &&
    (rule.step === undefined || rule.step === position.step)
  )
}

/**
 * The rules of a replies file. A request takes the most specific rule that matches it and whose tool
 * calls it can take, the first on a tie.
 */
export class ReplyBook {
  readonly rules: readonly ReplyRule[]

  constructor(rules: readonly ReplyRule[]) {
    this.rules = rules
  }

  /** The rule for a request: the most specific that matches and calls only tools the request declares. */
  find(request: ReplyRequest): ReplyRule | undefined {
    let best: { rule: ReplyRule; score: number } | undefined
    for (const rule of this.rules) {
      if (!matches(rule, request) || toolsCalled(rule.answer, request) === undefined) continue
      const score = specificity(rule)
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
  | { type: 'tool-call'; name: string; arguments: string; callId?: string; namespace?: string }

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
  /** The name of the conversation the request belongs to, when known. */
  conversation?: string
  /** The kind of that conversation, when known. */
  kind?: ConversationKind
  position: Position
  tools: readonly DeclaredTool[]
  toolChoice: ToolChoice
  /** The text of the request's system prompt (system and developer instructions), when read. */
  systemText?: string
  /** The text of the request's latest user message that is not only tool results, when read. */
  lastUserText?: string
  /** The structured output the request asks for: the answer's text is then JSON. */
  jsonOutput?: JsonOutput
}

/** The default answer's text, and the refusal a scripted `refusal` stop writes when given no text. */
export const DEFAULT_TEXT = 'OK.'
export const DEFAULT_REFUSAL = "I'm sorry, but I can't help with that."

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

/** Tools the default prefers, by their whole name (any case), in this order: they read and end. */
const READING_TOOLS = ['read', 'read_file', 'view', 'cat', 'ls', 'list', 'glob', 'grep']

/** Words of a tool's name that mark it as starting another agent (whose own first call would, and so on). */
const AGENT_WORDS = new Set(['agent', 'agents', 'subagent', 'task', 'delegate', 'spawn'])

/** The words of a name: `read_file`, `ReadFile` and `read-file` are all `read`, `file`. */
function wordsOf(name: string): string[] {
  return name
    .split(/[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])/)
    .filter((word) => word !== '')
    .map((word) => word.toLowerCase())
}

/**
 * The tool the default calls among the declared ones, deterministically: a reading tool by name
 * (`READING_TOOLS`, in that order), else the first whose name has the word `read`, else the first that
 * does not start an agent (`Agent`, `Task`, `spawn_agent`, `delegate_…`), else the first.
 */
export function preferredTool(tools: readonly DeclaredTool[]): DeclaredTool | undefined {
  for (const wanted of READING_TOOLS) {
    const tool = tools.find((candidate) => candidate.name.toLowerCase() === wanted)
    if (tool !== undefined) return tool
  }
  return (
    tools.find((tool) => wordsOf(tool.name).includes('read')) ??
    tools.find((tool) => !wordsOf(tool.name).some((word) => AGENT_WORDS.has(word))) ??
    tools[0]
  )
}

/**
 * The tool the default answer calls, if it calls one: the tool the choice names, else the preferred
 * declared one; none when the choice is `none`, or when the conversation does not end with a user turn
 * and the choice does not force a call.
 */
export function defaultTool(request: ReplyRequest): DeclaredTool | undefined {
  const { tools, toolChoice, position } = request
  switch (toolChoice.kind) {
    case 'none':
      return undefined
    case 'named':
      return tools.find((tool) => tool.name === toolChoice.name)
    case 'required':
      return preferredTool(tools)
    case 'auto':
      return position.after === 'user' ? preferredTool(tools) : undefined
  }
}

/**
 * The declared tools a scripted answer's calls call, in order, or undefined when the request cannot take
 * one of them: a named call needs its tool declared, a call without a name any tool (the one the choice
 * names, else the preferred one); a request whose tool choice is `none` takes no call.
 */
export function toolsCalled(answer: ScriptedAnswer, request: ReplyRequest): DeclaredTool[] | undefined {
  const { toolChoice } = request
  const callable = toolChoice.kind === 'none' ? [] : request.tools
  const called: DeclaredTool[] = []
  for (const call of answer.tools) {
    const wanted = call.name ?? (toolChoice.kind === 'named' ? toolChoice.name : undefined)
    const tool =
      wanted === undefined ? preferredTool(callable) : callable.find((candidate) => candidate.name === wanted)
    if (tool === undefined) return undefined
    called.push(tool)
  }
  return called
}

/** A call of a declared tool, its arguments given or made up from its schema. */
function callOf(tool: DeclaredTool, argumentsText: string | undefined): ReplyBlock {
  return {
    type: 'tool-call',
    name: tool.name,
    arguments: argumentsText ?? exampleArguments(tool.schema),
    ...(tool.namespace !== undefined ? { namespace: tool.namespace } : {}),
  }
}

/**
 * The default summary of a compaction request: in the tags the agents' summarizer prompts ask for
 * (Claude Code sends its request again when the answer has no `<summary>`).
 */
export const DEFAULT_SUMMARY = '<summary>\nOK.\n</summary>'

/**
 * The text a request gets when nothing scripts it: `OK.`, JSON of its schema when it asks for JSON, a
 * summary in tags when it compacts a conversation.
 */
function plainText(request: ReplyRequest): string {
  if (request.jsonOutput !== undefined) return exampleJson(request.jsonOutput.schema)
  return request.kind === 'compaction' ? DEFAULT_SUMMARY : DEFAULT_TEXT
}

/**
 * The default reply: the preferred declared tool called after a user turn, else `OK.` (JSON valid
 * against the schema where the request asks for structured output, a summary where it compacts: a
 * compaction request is never answered with a tool call); reasoning where asked for.
 */
export function defaultReply(request: ReplyRequest): Reply {
  const tool = request.kind === 'compaction' ? undefined : defaultTool(request)
  return {
    blocks: tool === undefined ? [{ type: 'text', text: plainText(request) }] : [callOf(tool, undefined)],
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

/**
 * The reply a rule scripts for a request. Its text, else the refusal's default, else — when it calls no
 * tool and the request asks for structured output — JSON of the request's schema; its calls of the tools
 * the request declares (a call the request cannot take is left out: `find` never picks such a rule).
 */
export function scriptedReply(rule: ReplyRule, request: ReplyRequest): Reply {
  const { answer } = rule
  const blocks: ReplyBlock[] = []
  const text =
    answer.text !== undefined
      ? resolveText(answer.text, replySeed(request, 'text'))
      : answer.stop === 'refusal'
        ? DEFAULT_REFUSAL
        : answer.tools.length === 0 && request.jsonOutput !== undefined
          ? plainText(request)
          : undefined
  if (text !== undefined) blocks.push({ type: 'text', text })
  const tools = toolsCalled(answer, request) ?? []
  for (const [index, tool] of tools.entries()) blocks.push(callOf(tool, answer.tools[index]?.arguments))
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
): Reply {
  if (header !== undefined) return headerReply(header)
  const rule = book?.find(request)
  return rule === undefined ? defaultReply(request) : scriptedReply(rule, request)
}
