// The pi-ai loop: a minimal agent loop on @mariozechner/pi-ai the way its README's tool-calling example
// writes one (a `Context` of pi-ai messages; `complete`, push the answer, push a `toolResult` per call,
// `complete` again). Caching is pi-ai's own default: `cacheRetention` unset ("short") and the session's
// key as `sessionId`. pi-ai places the Anthropic breakpoints itself (the system block, the last tool, the
// last user message) and decides per base URL what an OpenAI-compatible request carries: behind serve,
// as behind any gateway, the URL is not the vendor's own host, and pi-ai's URL detection shows in the
// requests (a `developer` role and `store: false` to DeepSeek; no `prompt_cache_key` on Chat Completions).
// pi-ai always streams; it takes no fetch, so the cachelab headers go in its per-request `headers`.

import {
  type Api,
  type AssistantMessage,
  type Context,
  complete,
  getModels,
  type KnownProvider,
  type Model,
  type Tool,
  type Usage,
} from '@mariozechner/pi-ai'
import type { ProviderId, ToolSchema } from '../../types.ts'
import { DEFAULT_MAX_TOKENS, runTurn } from './sdk.ts'
import type {
  LibraryLoop,
  LibrarySession,
  LibrarySessionOptions,
  LibraryToolCall,
  ReportedUsage,
} from './types.ts'

/** The providers the pi-ai loop speaks to, with pi-ai's registry provider and the API it speaks. */
const PI_PROVIDERS = {
  anthropic: { registry: 'anthropic', api: 'anthropic-messages' },
  'openai-chat': { registry: 'openai', api: 'openai-completions' },
  'openai-responses': { registry: 'openai', api: 'openai-responses' },
  deepseek: { registry: 'deepseek', api: 'openai-completions' },
} as const satisfies Partial<Record<ProviderId, { registry: KnownProvider; api: Api }>>

type PiProvider = keyof typeof PI_PROVIDERS

function isPiProvider(provider: ProviderId): provider is PiProvider {
  return Object.hasOwn(PI_PROVIDERS, provider)
}

/** The pi-ai loop. */
export function piAiLoop(): LibraryLoop {
  return {
    name: 'pi-ai',
    providers: Object.keys(PI_PROVIDERS) as PiProvider[],
    caching(provider: ProviderId): string {
      switch (provider) {
        case 'anthropic':
          return "pi-ai's default: cache_control on the system block, the last tool and the last user message"
        case 'openai-chat':
          return "pi-ai's default: sessionId, sent as prompt_cache_key only to api.openai.com (not behind serve)"
        case 'openai-responses':
          return "pi-ai's default: sessionId as prompt_cache_key and the session_id header"
        default:
          return 'automatic (pi-ai sends nothing for it)'
      }
    },
    async open(options: LibrarySessionOptions): Promise<LibrarySession> {
      if (!isPiProvider(options.provider))
        throw new Error(`the pi-ai loop does not speak to ${options.provider}`)
      return piSession(options, piModel(options.provider, options.model, options.transport.baseURL))
    },
  }
}

/**
 * pi-ai's `Model` for cachelab's provider and model, pointed at `baseURL`: the registry's entry of that
 * id, or (a model pi-ai does not list) the closest entry with the id replaced, as its README builds a
 * custom model. The API is the provider's (pi-ai lists OpenAI's models under Responses only).
 */
export function piModel(provider: PiProvider, model: string, baseURL: string): Model<Api> {
  const { registry, api } = PI_PROVIDERS[provider]
  const entries: Model<Api>[] = getModels(registry)
  const closest = closestModelId(
    model,
    entries.map((entry) => entry.id),
  )
  const entry = entries.find((candidate) => candidate.id === closest)
  if (entry === undefined) throw new Error(`pi-ai lists no ${registry} model`)
  return {
    ...entry,
    ...(entry.id === model ? {} : { id: model, name: model }),
    api,
    baseUrl: baseURL,
  }
}

/**
 * The registry id closest to `id`: itself when listed, else the one sharing the most name parts (split at
 * `-` and `.`), then the fewest parts of its own, then the longest common prefix; undefined for none.
 */
export function closestModelId(id: string, candidates: readonly string[]): string | undefined {
  if (candidates.includes(id)) return id
  const parts = new Set(id.split(/[-.]/))
  const score = (candidate: string): [number, number, number] => {
    const own = new Set(candidate.split(/[-.]/))
    const shared = [...own].filter((part) => parts.has(part)).length
    let prefix = 0
    while (prefix < Math.min(id.length, candidate.length) && id[prefix] === candidate[prefix]) prefix += 1
    return [shared, -(own.size - shared), prefix]
  }
  let best: { id: string; score: [number, number, number] } | undefined
  for (const candidate of candidates) {
    const candidateScore = score(candidate)
    if (best === undefined || isGreater(candidateScore, best.score))
      best = { id: candidate, score: candidateScore }
  }
  return best?.id
}

function isGreater(left: readonly number[], right: readonly number[]): boolean {
  for (const [index, value] of left.entries()) {
    const other = right[index] ?? 0
    if (value !== other) return value > other
  }
  return false
}

function piSession(options: LibrarySessionOptions, model: Model<Api>): LibrarySession {
  const { transport } = options
  const context: Context & { messages: Context['messages'] } = {
    systemPrompt: options.system,
    messages: [],
    tools: options.tools.map(piTool),
  }
  return {
    setSystem: (text) => {
      context.systemPrompt = text
    },
    setTools: (tools) => {
      context.tools = tools.map(piTool)
    },
    turn(user, execute) {
      const mark = context.messages.length
      context.messages.push({ role: 'user', content: user, timestamp: Date.now() })
      return runTurn(
        async () => {
          const message = await complete(model, context, {
            apiKey: transport.apiKey,
            // pi-ai takes no fetch: the next request's cachelab headers, asked for right before it.
            headers: transport.headers(),
            maxTokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
            maxRetries: 0,
            sessionId: options.sessionKey,
          })
          // pi-ai does not throw: a failed request is an answer with stopReason "error" or "aborted".
          if (message.stopReason === 'error' || message.stopReason === 'aborted')
            throw new Error(message.errorMessage ?? `pi-ai stopped with ${message.stopReason}`)
          context.messages.push(message)
          return { calls: toolCalls(message), reported: piReported(message.usage) }
        },
        execute,
        (results) => {
          for (const { call, result } of results)
            context.messages.push({
              role: 'toolResult',
              toolCallId: call.id,
              toolName: call.name,
              content: [{ type: 'text', text: result.output }],
              isError: result.isError,
              timestamp: Date.now(),
            })
        },
        () => context.messages.splice(mark),
      )
    },
  }
}

/** A scenario tool as pi-ai's: its parameters are a JSON schema, which is what a TypeBox schema is. */
function piTool(tool: ToolSchema): Tool {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters as unknown as Tool['parameters'],
  }
}

function toolCalls(message: AssistantMessage): LibraryToolCall[] {
  return message.content.flatMap((block) =>
    block.type === 'toolCall'
      ? [{ id: block.id, name: block.name, arguments: block.arguments as LibraryToolCall['arguments'] }]
      : [],
  )
}

/**
 * pi-ai's usage in cachelab's meanings. pi-ai documents `input` as the input neither read from nor
 * written to the cache (its total is input + output + cacheRead + cacheWrite), so every input token is the
 * sum; `cacheRead` and `cacheWrite` are taken as pi-ai states them, even where its parsing of a wire
 * field differs from the wire (the report shows that).
 */
export function piReported(usage: Usage): ReportedUsage {
  return {
    input: usage.input + usage.cacheRead + usage.cacheWrite,
    cacheRead: usage.cacheRead,
    cacheWrite: usage.cacheWrite,
    raw: usage,
  }
}
