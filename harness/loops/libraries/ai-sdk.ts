// The Vercel AI SDK loop, on either major: ai 6 (the one that runs on Node 20) or ai 7 (Node 22+), handed in
// as modules so both run the same code. One `generateText` per user turn, its own multi-step tool loop
// (`stopWhen` at 64 steps) running the tools, and the app's message array growing by every step's response
// messages, as the AI SDK's documentation writes a chat agent. Caching as its provider pages recommend: Anthropic marks the system message and each turn's user message with
// `providerOptions.anthropic.cacheControl` (the marks stay in the history, so a long conversation carries
// more than the four breakpoints Anthropic takes, and @ai-sdk/anthropic drops the newest ones beyond
// four with a warning); OpenAI routes by `providerOptions.openai.promptCacheKey`; DeepSeek caches by
// itself. What the library reports is read off each step's `usage` as it documents the fields.

// Types only: the packages themselves are imported by `importAiSdk`, under the names the major is installed as.
import type { createAnthropic } from '@ai-sdk/anthropic'
import type { createDeepSeek } from '@ai-sdk/deepseek'
import type { createOpenAI } from '@ai-sdk/openai'
import type * as Ai from 'ai'
import type { LanguageModel, LanguageModelUsage, ModelMessage, SystemModelMessage, ToolSet } from 'ai'
import type { JsonObject, ProviderId, ToolSchema } from '../../types.ts'
import { DEFAULT_MAX_TOKENS } from './sdk.ts'
import type {
  LibraryLoop,
  LibrarySession,
  LibrarySessionOptions,
  LibraryToolCall,
  LibraryToolResult,
  ReportedUsage,
} from './types.ts'

/** The AI SDK majors the loop runs on: ai 6 runs on Node 20, ai 7 needs Node 22. */
export type AiSdkMajor = 6 | 7

/** The packages of one AI SDK major, by the name each is installed under (ai 7's are npm aliases). */
export interface AiSdkPackages {
  /** The `ai` package. */
  ai: string
  /** `@ai-sdk/anthropic` of the same major line. */
  anthropic: string
  /** `@ai-sdk/openai` of the same major line. */
  openai: string
  /** `@ai-sdk/deepseek` of the same major line. */
  deepseek: string
}

/**
 * What the loop uses of one AI SDK major. Typed by ai 6, whose types are always installed; ai 7 keeps
 * these functions' shapes for everything the loop passes and reads (its renames are mapped here).
 */
export interface AiSdkModules {
  major: AiSdkMajor
  generateText: typeof Ai.generateText
  jsonSchema: typeof Ai.jsonSchema
  tool: typeof Ai.tool
  /** The step-count stop condition: `stepCountIs` in ai 6, `isStepCount` in ai 7 (the old name an alias). */
  stepCount: typeof Ai.stepCountIs
  createAnthropic: typeof createAnthropic
  createOpenAI: typeof createOpenAI
  createDeepSeek: typeof createDeepSeek
  /**
   * The messages a `generateText` call adds to the app's history, every step's: ai 6's
   * `response.messages` accumulates them; in ai 7 that holds the final step's only and
   * `responseMessages` holds them all (its migration guide).
   */
  responseMessages(result: GenerateTextCall): readonly ModelMessage[]
}

/** A `generateText` result as far as the loop reads it. */
type GenerateTextCall = Awaited<ReturnType<typeof Ai.generateText>>

/**
 * Import one AI SDK major's packages. The names are strings on purpose: ai 7's aliases are absent on
 * Node 20 (npm skips them), so no code may name them statically.
 */
export async function importAiSdk(major: AiSdkMajor, packages: AiSdkPackages): Promise<AiSdkModules> {
  const [ai, anthropic, openai, deepseek] = await Promise.all([
    import(packages.ai) as Promise<typeof Ai & { isStepCount?: typeof Ai.stepCountIs }>,
    import(packages.anthropic) as Promise<{ createAnthropic: typeof createAnthropic }>,
    import(packages.openai) as Promise<{ createOpenAI: typeof createOpenAI }>,
    import(packages.deepseek) as Promise<{ createDeepSeek: typeof createDeepSeek }>,
  ])
  const stepCount = major === 7 ? ai.isStepCount : ai.stepCountIs
  if (stepCount === undefined) throw new Error(`${packages.ai} has no step-count stop condition`)
  return {
    major,
    generateText: ai.generateText,
    jsonSchema: ai.jsonSchema,
    tool: ai.tool,
    stepCount,
    createAnthropic: anthropic.createAnthropic,
    createOpenAI: openai.createOpenAI,
    createDeepSeek: deepseek.createDeepSeek,
    responseMessages:
      major === 7
        ? (result) => (result as GenerateTextCall & { responseMessages: ModelMessage[] }).responseMessages
        : (result) => result.response.messages,
  }
}

/** The step cap of one turn's tool loop: far above any scenario's steps, so the model ends each turn. */
export const AI_SDK_MAX_STEPS = 64

/** Anthropic's cache mark as the AI SDK's Anthropic provider page writes it. */
const ANTHROPIC_CACHE_MARK = { anthropic: { cacheControl: { type: 'ephemeral' } } } as const

/** The AI SDK's loop on the major whose modules it is given. */
export function aiSdkLoop(modules: AiSdkModules): LibraryLoop {
  // The AI SDK logs its call warnings to the console unless told otherwise; the loop reports them per
  // request instead (a logger the caller installed stays).
  const globals = globalThis as { AI_SDK_LOG_WARNINGS?: unknown }
  if (globals.AI_SDK_LOG_WARNINGS === undefined) globals.AI_SDK_LOG_WARNINGS = false
  return {
    name: 'ai-sdk',
    providers: ['anthropic', 'openai-chat', 'openai-responses', 'deepseek'],
    caching(provider: ProviderId): string {
      switch (provider) {
        case 'anthropic':
          return 'providerOptions.anthropic.cacheControl on the system message and on every turn’s user message'
        case 'openai-chat':
        case 'openai-responses':
          return 'providerOptions.openai.promptCacheKey per session'
        default:
          return 'automatic (nothing to ask)'
      }
    },
    async open(options: LibrarySessionOptions): Promise<LibrarySession> {
      return aiSdkSession(options, modules, languageModel(options, modules))
    },
  }
}

/** The provider package's model, pointed at the transport (its fetch adds the cachelab headers per request). */
function languageModel(options: LibrarySessionOptions, modules: AiSdkModules): LanguageModel {
  const { createAnthropic, createDeepSeek, createOpenAI } = modules
  const { transport } = options
  const settings = { baseURL: transport.baseURL, apiKey: transport.apiKey, fetch: transport.fetch }
  switch (options.provider) {
    case 'anthropic':
      return createAnthropic(settings)(options.model)
    case 'openai-chat':
      return createOpenAI(settings).chat(options.model)
    case 'openai-responses':
      // `openai(model)` is the Responses model since AI SDK 5; named here so the route is explicit.
      return createOpenAI(settings).responses(options.model)
    case 'deepseek':
      return createDeepSeek(settings)(options.model)
    default:
      throw new Error(`the ai-sdk loop does not speak to ${options.provider}`)
  }
}

function aiSdkSession(
  options: LibrarySessionOptions,
  modules: AiSdkModules,
  model: LanguageModel,
): LibrarySession {
  const anthropic = options.provider === 'anthropic'
  const openai = options.provider === 'openai-chat' || options.provider === 'openai-responses'
  let system = options.system
  let tools = options.tools
  // The app's message array, as the docs keep it: each turn's user message, then every step's response messages.
  const messages: ModelMessage[] = []
  // The system prompt as a message, the only form that carries providerOptions (Anthropic's cache mark).
  const systemMessage = (): SystemModelMessage => ({
    role: 'system',
    content: system,
    ...(anthropic ? { providerOptions: ANTHROPIC_CACHE_MARK } : {}),
  })
  return {
    setSystem: (text) => {
      system = text
    },
    setTools: (next) => {
      tools = next
    },
    async turn(user, execute) {
      const mark = messages.length
      messages.push({
        role: 'user',
        content: user,
        ...(anthropic ? { providerOptions: ANTHROPIC_CACHE_MARK } : {}),
      })
      // Read per step as it finishes, so a turn that fails at a later step still reports the earlier ones.
      const reported: Array<ReportedUsage | undefined> = []
      // The marks this turn's requests ask for: the system message's and every user message's so far (the
      // turn's tool steps add unmarked messages only).
      const asked = anthropic
        ? 1 + messages.filter((message) => message.providerOptions !== undefined).length
        : undefined
      const onStep = (step: { usage: LanguageModelUsage; warnings?: readonly Warning[] | undefined }) => {
        reported.push({
          ...reportedUsage(step.usage),
          ...(asked !== undefined ? { requestedBreakpoints: asked } : {}),
          ...((step.warnings ?? []).length > 0 ? { warnings: (step.warnings ?? []).map(warningText) } : {}),
        })
      }
      try {
        const result = await modules.generateText({
          model,
          messages: [systemMessage(), ...messages],
          // The system prompt sits in `messages` on purpose (to carry its cache mark): no warning for it.
          allowSystemInMessages: true,
          ...(tools.length > 0 ? { tools: toolSet(modules, tools, execute) } : {}),
          stopWhen: modules.stepCount(AI_SDK_MAX_STEPS),
          maxOutputTokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
          maxRetries: 0,
          ...(openai ? { providerOptions: { openai: { promptCacheKey: options.sessionKey } } } : {}),
          // ai 7 renamed the per-step callback `onStepEnd` (`onStepFinish` stays, deprecated).
          ...(modules.major === 7 ? { onStepEnd: onStep } : { onStepFinish: onStep }),
        })
        messages.push(...modules.responseMessages(result))
        return { reported }
      } catch (error) {
        messages.splice(mark)
        return { reported, error: error instanceof Error ? error.message : String(error) }
      }
    },
  }
}

/**
 * The scenario's tools as AI SDK tools: the JSON schema as it is, and `execute` answering with the
 * runner's scripted result for the call id the model sent. A failed result is thrown, the AI SDK's way to
 * hand the model a tool error.
 */
function toolSet(
  { tool, jsonSchema }: AiSdkModules,
  tools: readonly ToolSchema[],
  execute: (call: LibraryToolCall) => LibraryToolResult,
): ToolSet {
  return Object.fromEntries(
    tools.map((schema) => [
      schema.name,
      tool({
        description: schema.description,
        inputSchema: jsonSchema<JsonObject>(schema.parameters as Parameters<typeof jsonSchema>[0]),
        execute: async (input: JsonObject, { toolCallId }) => {
          const result = execute({ id: toolCallId, name: schema.name, arguments: input })
          if (result.isError) throw new Error(result.output)
          return result.output
        },
      }),
    ]),
  )
}

/** An AI SDK call warning, as far as the loop reads it (the same fields in ai 6 and ai 7). */
interface Warning {
  type: string
  feature?: string
  details?: string
  message?: string
}

/** One AI SDK call warning as the console would say it. */
function warningText(warning: Warning): string {
  const subject = warning.feature === undefined ? '' : `${warning.feature}: `
  return `${subject}${warning.details ?? warning.message ?? warning.type}`
}

/**
 * A step's usage by the AI SDK's documented meanings: `inputTokens` every input token, its details the
 * tokens read from and written to the cache. Taken as the library hands them over, never corrected.
 */
function reportedUsage(usage: LanguageModelUsage): ReportedUsage {
  const { cacheReadTokens, cacheWriteTokens } = usage.inputTokenDetails
  return {
    ...(usage.inputTokens !== undefined ? { input: usage.inputTokens } : {}),
    ...(cacheReadTokens !== undefined ? { cacheRead: cacheReadTokens } : {}),
    ...(cacheWriteTokens !== undefined ? { cacheWrite: cacheWriteTokens } : {}),
    raw: usage,
  }
}
