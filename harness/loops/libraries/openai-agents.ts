// The OpenAI Agents SDK loop: an `Agent` with the scenario's system prompt as its instructions and the
// scenario's tools as function tools, run once per user turn with the SDK's own tool-calling loop
// (`run(agent, history)`, which requests, runs the tools and requests again until a final answer) and
// `result.history` kept for the next turn, as the SDK's conversation guide does. Each model gets an
// `OpenAI` client on serve's base URL with the transport's fetch (the SDK's loop makes several requests
// per turn; the fetch adds each one's cachelab headers) and no retries. Tracing is off: its exporter
// would post to OpenAI. Caching: the SDK documents `promptCacheRetention` and `promptCacheOptions`,
// both left at the provider's default, and no `prompt_cache_key`, so the requests carry nothing for the
// cache (the reference loop sends a per-session key).

import {
  Agent,
  type AgentInputItem,
  type Model as AgentsModel,
  type ModelResponse,
  run,
  setTracingDisabled,
  type Tool,
  tool,
  user as userMessage,
} from '@openai/agents-core'
import { OpenAIChatCompletionsModel, OpenAIResponsesModel } from '@openai/agents-openai'
import OpenAI from 'openai'
import type { JsonObject, ProviderId, ToolSchema } from '../../types.ts'
import type {
  LibraryLoop,
  LibrarySession,
  LibrarySessionOptions,
  LibraryToolCall,
  LibraryToolResult,
  LibraryTurn,
  ReportedUsage,
} from './types.ts'

/** The providers the Agents SDK loop speaks to: OpenAI's two APIs, through the SDK's OpenAI models. */
const AGENTS_PROVIDERS = ['openai-responses', 'openai-chat'] as const

type AgentsProvider = (typeof AGENTS_PROVIDERS)[number]

function isAgentsProvider(provider: ProviderId): provider is AgentsProvider {
  return (AGENTS_PROVIDERS as readonly ProviderId[]).includes(provider)
}

/** The OpenAI Agents SDK's loop. */
export function openAiAgentsLoop(): LibraryLoop {
  // The SDK traces every run to OpenAI by default; a loop against serve must not reach the network.
  setTracingDisabled(true)
  return {
    name: 'openai-agents',
    providers: AGENTS_PROVIDERS,
    caching: (_provider: ProviderId) =>
      'none asked: the SDK documents no prompt_cache_key; promptCacheRetention left at the default',
    async open(options: LibrarySessionOptions): Promise<LibrarySession> {
      if (!isAgentsProvider(options.provider))
        throw new Error(`the openai-agents loop does not speak to ${options.provider}`)
      return agentsSession(options, agentsModel(options.provider, options))
    },
  }
}

function agentsModel(provider: AgentsProvider, options: LibrarySessionOptions): AgentsModel {
  const client = new OpenAI({
    apiKey: options.transport.apiKey,
    baseURL: options.transport.baseURL,
    fetch: options.transport.fetch,
    maxRetries: 0,
  })
  switch (provider) {
    case 'openai-responses':
      return new OpenAIResponsesModel(client, options.model)
    case 'openai-chat':
      return new OpenAIChatCompletionsModel(client, options.model)
    default: {
      const unreachable: never = provider
      throw new Error(`no Agents SDK model for ${String(unreachable)}`)
    }
  }
}

/** A turn's tool calls, answered through the runner's `execute` while the SDK's loop runs. */
type Execute = (call: LibraryToolCall) => LibraryToolResult

function agentsSession(options: LibrarySessionOptions, model: AgentsModel): LibrarySession {
  let system = options.system
  let tools = options.tools
  // The turn in progress's `execute`: the tools are built once per agent and call whichever turn runs.
  let execute: Execute | undefined
  const agent = (): Agent =>
    new Agent({
      name: 'cachelab',
      instructions: system,
      model,
      // The output cap as the SDK documents it; `maxTokens` is sent as `max_tokens` on Chat Completions.
      ...(options.maxTokens === undefined ? {} : { modelSettings: { maxTokens: options.maxTokens } }),
      tools: tools.map((schema) => agentsTool(schema, () => execute)),
    })
  let current = agent()
  let history: AgentInputItem[] = []
  return {
    setSystem: (text) => {
      system = text
      current = agent()
    },
    setTools: (next) => {
      tools = next
      current = agent()
    },
    async turn(user, executeCall): Promise<LibraryTurn> {
      execute = executeCall
      try {
        const result = await run(current, [...history, userMessage(user)])
        // The history is kept only when the turn succeeded: a failed one leaves it as it was.
        history = result.history
        return { reported: result.rawResponses.map(agentsReported) }
      } catch (error) {
        return {
          reported: answeredBefore(error).map(agentsReported),
          error: error instanceof Error ? error.message : String(error),
        }
      } finally {
        execute = undefined
      }
    },
  }
}

/**
 * The SDK's type of a non-strict tool's JSON schema, which it does not export by name. The scenario's
 * schema is sent as it is; the type only satisfies the overload of `tool` that takes a JSON schema.
 */
interface NonStrictSchema {
  type: 'object'
  properties: Record<string, Record<string, unknown>>
  required: string[]
  additionalProperties: true
}

/** A scenario tool as an SDK function tool: its JSON schema as is, not strict, answered by the turn. */
function agentsTool(schema: ToolSchema, current: () => Execute | undefined): Tool {
  return tool({
    name: schema.name,
    description: schema.description,
    parameters: schema.parameters as unknown as NonStrictSchema,
    strict: false,
    execute: (input, _context, details) => {
      const execute = current()
      if (execute === undefined) throw new Error(`${schema.name} called outside a turn`)
      const result = execute({
        id: details?.toolCall?.callId ?? '',
        name: schema.name,
        arguments: argumentsOf(input),
      })
      // The SDK's function tools have no error flag: a failed tool's output is its text, as returned.
      return result.output
    },
  })
}

function argumentsOf(input: unknown): JsonObject {
  if (typeof input === 'string') {
    try {
      return argumentsOf(JSON.parse(input))
    } catch {
      return {}
    }
  }
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as JsonObject) : {}
}

/** The model responses a failed run had received before it failed, when the SDK's error carries its state. */
function answeredBefore(error: unknown): ModelResponse[] {
  const state = (error as { state?: { _modelResponses?: unknown } } | undefined)?.state
  const responses = state?._modelResponses
  return Array.isArray(responses) ? (responses as ModelResponse[]) : []
}

/**
 * The SDK's usage of one request in cachelab's meanings. `inputTokens` is OpenAI's input count (cached
 * tokens included); `inputTokensDetails` carries OpenAI's details as the SDK kept them: `cached_tokens`,
 * and on Responses `cache_write_tokens` where the API sends it (the Chat Completions model keeps only
 * `cached_tokens`, so a write there is unreported).
 */
export function agentsReported(response: ModelResponse): ReportedUsage {
  const usage = response.usage
  const details = Array.isArray(usage.inputTokensDetails)
    ? usage.inputTokensDetails[0]
    : (usage.inputTokensDetails as Record<string, number> | undefined)
  const cacheRead = details?.cached_tokens
  const cacheWrite = details?.cache_write_tokens
  return {
    input: usage.inputTokens,
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    raw: usage,
  }
}
