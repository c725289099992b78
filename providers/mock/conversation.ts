// What a mock needs to read off a request to answer it like a model would: where the request stands in
// its conversation (turn and step), the tools it declares and how it lets the model choose among them,
// its output cap, whether it asks the model to reason or to answer in JSON, and the texts a replies rule
// can match (its system prompt, its latest user message). One pure reader per wire API.

import { asRecord } from '../../harness/json-fields.ts'
import type { ReasoningMode } from '../catalog.ts'
import { bodyShape, type WireApi } from '../types.ts'
import { isUserTurn, itemsOf } from '../wire/digest.ts'

type Body = Record<string, unknown>

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

/** Where a request stands in its conversation. */
export interface Position {
  /** User turns in the conversation so far (the latest included), from 1. */
  turn: number
  /** Model answers since the latest user turn, plus one: 1 for the first request of a turn. */
  step: number
  /** What the conversation ends with: the model answers a user turn, tool results, or something else. */
  after: 'user' | 'tool-results' | 'other'
}

/** A tool the model may call: its name and the JSON schema of its arguments. */
export interface DeclaredTool {
  name: string
  schema: unknown
  /** The namespace it is declared in (an OpenAI Responses `namespace` tool): its calls name it beside the tool. */
  namespace?: string
}

/** How the request lets the model use its tools. */
export type ToolChoice =
  | { kind: 'auto' }
  | { kind: 'none' }
  /** The model must call a tool (OpenAI `required`, Anthropic `any`). */
  | { kind: 'required' }
  /** The model must call this tool. */
  | { kind: 'named'; name: string }

/** Whether an item is the model's output (an assistant message, a function call, reasoning). */
function isModelItem(api: WireApi, item: unknown): boolean {
  const record = asRecord(item)
  if (record.role === 'assistant' || record.role === 'model') return true
  if (api !== 'openai-responses') return false
  return record.type === 'function_call' || record.type === 'reasoning' || record.type === 'custom_tool_call'
}

/** Whether an item carries tool results (a Chat `tool` message, Anthropic tool_result blocks, a call output). */
function isToolResult(item: unknown): boolean {
  const record = asRecord(item)
  if (record.role === 'tool') return true
  if (record.type === 'function_call_output' || record.type === 'custom_tool_call_output') return true
  const content = record.content ?? record.parts
  return (
    record.role === 'user' &&
    Array.isArray(content) &&
    content.length > 0 &&
    content.every(
      (block) => asRecord(block).type === 'tool_result' || asRecord(block).functionResponse !== undefined,
    )
  )
}

/**
 * The position of a request, read off its own conversation: user turns counted as captures count them (a
 * user message that is not only tool results), and the model's answers since the latest one, each run of
 * consecutive output items (Responses' reasoning, message and calls of one response) counted once.
 * Items are classified, never digested: the cost grows with the number of items, not their bytes.
 */
export function positionOf(wire: WireApi, body: Body): Position {
  const api = bodyShape(wire)
  const items = itemsOf(body)
  let turn = 0
  let answers = 0
  let previousWasModel = false
  for (const item of items) {
    if (isUserTurn(item)) {
      turn += 1
      answers = 0
      previousWasModel = false
      continue
    }
    const model = isModelItem(api, item)
    if (model && !previousWasModel) answers += 1
    previousWasModel = model
  }
  const last = items.at(-1)
  return {
    turn: Math.max(turn, 1),
    step: answers + 1,
    after:
      last === undefined
        ? 'other'
        : isUserTurn(last)
          ? 'user'
          : isToolResult(last)
            ? 'tool-results'
            : 'other',
  }
}

/**
 * The function tools a request declares, in order (server tools and deferred tools left out). On
 * Responses, tools inside a `namespace` tool count with their namespace, and so do the tools of
 * `additional_tools` input items (Codex CLI sends its tools there, namespaced, from 0.147 on); a tool
 * declared again replaces its earlier definition in place.
 */
export function declaredTools(wire: WireApi, body: Body): DeclaredTool[] {
  const api = bodyShape(wire)
  const tools: DeclaredTool[] = []
  if (api === 'openai-responses') return responsesTools(body)
  if (api === 'bedrock-converse') {
    // Converse: `toolConfig.tools[].toolSpec`, cache points between them.
    for (const value of asArray(asRecord(body.toolConfig).tools)) {
      const spec = asRecord(asRecord(value).toolSpec)
      const name = asString(spec.name)
      if (name !== undefined) tools.push({ name, schema: asRecord(spec.inputSchema).json })
    }
    return tools
  }
  for (const value of asArray(body.tools)) {
    const tool = asRecord(value)
    if (tool.defer_loading === true) continue
    switch (api) {
      case 'openai-chat':
      case 'deepseek-chat': {
        const fn = asRecord(tool.function)
        const name = asString(fn.name)
        if (tool.type === 'function' && name !== undefined) tools.push({ name, schema: fn.parameters })
        break
      }
      case 'gemini-generate':
        for (const value of asArray(tool.functionDeclarations)) {
          const declaration = asRecord(value)
          const name = asString(declaration.name)
          if (name !== undefined)
            tools.push({ name, schema: declaration.parametersJsonSchema ?? declaration.parameters })
        }
        break
      case 'anthropic-messages': {
        const name = asString(tool.name)
        // A custom tool has an input schema; server tools (web search, bash, …) have a versioned type.
        if (name !== undefined && tool.input_schema !== undefined && (tool.type ?? 'custom') === 'custom')
          tools.push({ name, schema: tool.input_schema })
        break
      }
    }
  }
  return tools
}

/** Responses tools: the `tools` list, then each `additional_tools` input item's, namespaces flattened. */
function responsesTools(body: Body): DeclaredTool[] {
  const found = new Map<string, DeclaredTool>()
  const add = (values: unknown, namespace: string | undefined): void => {
    for (const value of asArray(values)) {
      const tool = asRecord(value)
      const name = asString(tool.name)
      if (tool.defer_loading === true || name === undefined) continue
      if (tool.type === 'namespace') add(tool.tools, name)
      else if (tool.type === 'function')
        found.set(`${namespace ?? ''}.${name}`, {
          name,
          schema: tool.parameters,
          ...(namespace !== undefined ? { namespace } : {}),
        })
    }
  }
  add(body.tools, undefined)
  for (const item of itemsOf(body)) {
    const record = asRecord(item)
    if (record.type === 'additional_tools') add(record.tools, undefined)
  }
  return [...found.values()]
}

/** The request's tool choice, in one vocabulary. */
export function toolChoiceOf(wire: WireApi, body: Body): ToolChoice {
  const api = bodyShape(wire)
  if (api === 'bedrock-converse') {
    const choice = asRecord(asRecord(body.toolConfig).toolChoice)
    if (choice.any !== undefined) return { kind: 'required' }
    const name = asString(asRecord(choice.tool).name)
    return name === undefined ? { kind: 'auto' } : { kind: 'named', name }
  }
  if (api === 'gemini-generate') {
    const config = asRecord(asRecord(body.toolConfig).functionCallingConfig)
    const allowed = asArray(config.allowedFunctionNames)
    if (config.mode === 'NONE') return { kind: 'none' }
    if (config.mode !== 'ANY') return { kind: 'auto' }
    const only = allowed.length === 1 ? asString(allowed[0]) : undefined
    return only === undefined ? { kind: 'required' } : { kind: 'named', name: only }
  }
  const choice = body.tool_choice
  if (api === 'anthropic-messages') {
    const record = asRecord(choice)
    switch (record.type) {
      case 'none':
        return { kind: 'none' }
      case 'any':
        return { kind: 'required' }
      case 'tool': {
        const name = asString(record.name)
        return name === undefined ? { kind: 'auto' } : { kind: 'named', name }
      }
      default:
        return { kind: 'auto' }
    }
  }
  if (choice === 'none') return { kind: 'none' }
  if (choice === 'required') return { kind: 'required' }
  const record = asRecord(choice)
  if (record.type === 'allowed_tools') {
    const mode = asString(record.mode) ?? asString(asRecord(record.allowed_tools).mode)
    return mode === 'required' ? { kind: 'required' } : { kind: 'auto' }
  }
  const name = asString(record.name) ?? asString(asRecord(record.function).name)
  return record.type === 'function' && name !== undefined ? { kind: 'named', name } : { kind: 'auto' }
}

/** The output cap the request sets (reasoning included), if any. */
export function outputCapOf(wire: WireApi, body: Body): number | undefined {
  const api = bodyShape(wire)
  const cap = (value: unknown) =>
    typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined
  switch (api) {
    case 'openai-chat':
      return cap(body.max_completion_tokens) ?? cap(body.max_tokens)
    case 'deepseek-chat':
    case 'anthropic-messages':
      return cap(body.max_tokens)
    case 'openai-responses':
      return cap(body.max_output_tokens)
    case 'bedrock-converse':
      return cap(asRecord(body.inferenceConfig).maxTokens)
    case 'gemini-generate':
      return cap(asRecord(body.generationConfig).maxOutputTokens)
  }
}

/**
 * Whether the model reasons on this request: the request's own switch when it has one (Anthropic and
 * DeepSeek `thinking.type`, OpenAI's effort, `none` turning it off), else the model's mode.
 */
export function reasonsOn(api: WireApi, body: Body, mode: ReasoningMode): boolean {
  if (mode === 'never') return false
  const requested = requestedReasoning(api, body)
  return requested ?? mode === 'by-default'
}

function requestedReasoning(wire: WireApi, body: Body): boolean | undefined {
  const api = bodyShape(wire)
  switch (api) {
    case 'anthropic-messages':
    case 'deepseek-chat': {
      const type = asRecord(body.thinking).type
      if (type === 'disabled') return false
      if (type === 'enabled' || type === 'adaptive') return true
      return api === 'deepseek-chat' && typeof body.reasoning_effort === 'string' ? true : undefined
    }
    case 'openai-chat': {
      const effort = asString(body.reasoning_effort)
      return effort === undefined ? undefined : effort !== 'none'
    }
    case 'openai-responses': {
      const effort = asString(asRecord(body.reasoning).effort)
      return effort === undefined ? undefined : effort !== 'none'
    }
    case 'bedrock-converse': {
      // Claude's thinking travels in `additionalModelRequestFields`.
      const type = asRecord(asRecord(body.additionalModelRequestFields).thinking).type
      if (type === 'disabled') return false
      return type === 'enabled' || type === 'adaptive' ? true : undefined
    }
    case 'gemini-generate': {
      // A budget of 0 turns thinking off (where the model allows it); any other budget or level keeps it on.
      const thinking = asRecord(asRecord(body.generationConfig).thinkingConfig)
      if (thinking.thinkingBudget === 0) return false
      return thinking.thinkingBudget !== undefined || thinking.thinkingLevel !== undefined ? true : undefined
    }
  }
}

/** Anthropic's thinking budget, when the request sets one. */
export function thinkingBudgetOf(body: Body): number | undefined {
  const budget = asRecord(body.thinking).budget_tokens
  return typeof budget === 'number' ? budget : undefined
}
