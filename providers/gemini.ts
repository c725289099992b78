// Google Gemini `generateContent` over the `@google/genai` SDK: request building (system instruction,
// function declarations, contents), usage normalization (the prompt count includes cached tokens;
// thoughts are output), and sending, streamed (`streamGenerateContent?alt=sse`) or not.

import type { GoogleGenAI } from '@google/genai'
import { asRecord, optionalNumber } from '../harness/json-fields.ts'
import { identicalPrefix } from '../harness/lineage.ts'
import type {
  AssistantMessage,
  DerivedRequest,
  JsonValue,
  Message,
  Seq,
  ToolCallBlock,
  Usage,
} from '../harness/types.ts'
import { developerText } from './anthropic-request.ts'
import { simulationModel } from './catalog.ts'
import { type Endpoint, lateBoundFetch } from './endpoints.ts'
import { lazy, loadSdk } from './sdks.ts'
import type {
  BuildOptions,
  BuiltRequest,
  ProviderAdapter,
  ProviderReply,
  SendOptions,
  StopReason,
} from './types.ts'
import { ProviderError } from './types.ts'

type Raw = Record<string, unknown>

/** Ids cachelab gives function calls that came without one; never sent back (the API did not issue them). */
const LOCAL_CALL_ID = 'gemini-local-call-'

/**
 * The signature the documentation gives for function calls the API did not produce, which skips its
 * validation (ai.google.dev/gemini-api/docs/thought-signatures, FAQ; Gemini CLI sends the same). The
 * loop's calls are scripted, never the API's, so its history has no signature of the API's to send back.
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator'

/** A Gemini content: a turn of `user` or `model` (or a `system` turn the API refuses). */
export interface GeminiContent {
  role: 'user' | 'model' | 'system'
  parts: Raw[]
}

/**
 * Normalize a Gemini `usageMetadata`. `promptTokenCount` includes `cachedContentTokenCount`, so the
 * cached part is subtracted to leave the uncached bucket; a missing cached count is 0 (proto3 JSON leaves
 * zeros out). Writes are neither reported nor billed apart, so `cacheWrite` stays unset: the buckets are
 * read and uncached. Output is `candidatesTokenCount` plus `thoughtsTokenCount` (both billed as output).
 */
export function parseGeminiUsage(raw: unknown): Usage {
  const usage = asRecord(raw)
  const input = optionalNumber(usage.promptTokenCount) ?? 0
  const cacheRead = optionalNumber(usage.cachedContentTokenCount) ?? 0
  const thoughts = optionalNumber(usage.thoughtsTokenCount)
  return {
    input,
    uncached: input - cacheRead,
    cacheRead,
    output: (optionalNumber(usage.candidatesTokenCount) ?? 0) + (thoughts ?? 0),
    ...(thoughts !== undefined ? { reasoning: thoughts } : {}),
    raw: (raw ?? null) as JsonValue,
  }
}

/** A function call's part; an id the API issued goes back with it, a local one does not. */
function functionCallPart(call: ToolCallBlock): Raw {
  let args: unknown = {}
  try {
    args = JSON.parse(call.arguments)
  } catch {
    // Arguments the model produced unparsed travel as an empty object; the scripted ones always parse.
  }
  return {
    functionCall: {
      ...(call.callId.startsWith(LOCAL_CALL_ID) ? {} : { id: call.callId }),
      name: call.name,
      args,
    },
  }
}

/** One derived message as the parts of a content of `role`; `signCalls` signs its first function call. */
function contentOf(message: Message, signCalls: boolean): GeminiContent {
  switch (message.role) {
    case 'system':
      // Only leading system messages fit `systemInstruction`; a later one has no place in `contents`.
      return { role: 'system', parts: [{ text: message.text }] }
    case 'developer':
      return { role: 'user', parts: [{ text: developerText(message.text) }] }
    case 'user':
      return {
        role: 'user',
        parts: message.content.map((block) =>
          block.type === 'text'
            ? { text: block.text }
            : { inlineData: { mimeType: block.mediaType, data: block.data } },
        ),
      }
    case 'assistant': {
      const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
      const calls = message.content
        .flatMap((block) => (block.type === 'tool-call' ? [block] : []))
        .map(functionCallPart)
      const first = calls[0]
      if (signCalls && first !== undefined) calls[0] = { ...first, thoughtSignature: SKIP_THOUGHT_SIGNATURE }
      return { role: 'model', parts: [...(text === '' ? [] : [{ text }]), ...calls] }
    }
    case 'tool':
      return {
        role: 'user',
        parts: [
          {
            functionResponse: {
              ...(message.callId.startsWith(LOCAL_CALL_ID) ? {} : { id: message.callId }),
              name: message.name,
              response: message.isError === true ? { error: message.text } : { output: message.text },
            },
          },
        ],
      }
  }
}

/**
 * Contents already built, per derived message and signing: derived messages are immutable, so a session's
 * history is converted once and the simulator's memo (keyed by these objects) finds it again.
 */
const convertedContents = {
  signed: new WeakMap<Message, GeminiContent>(),
  plain: new WeakMap<Message, GeminiContent>(),
}

/** `contentOf`, memoized; the content returned is never mutated. */
function convertedContent(message: Message, signCalls: boolean): GeminiContent {
  const memo = signCalls ? convertedContents.signed : convertedContents.plain
  const known = memo.get(message)
  if (known !== undefined) return known
  const content = contentOf(message, signCalls)
  memo.set(message, content)
  return content
}

/**
 * The previous call's conversion: its derived messages (after the leading system ones), the contents and
 * sources they became, and the first derived message of each content. A session's next request repeats
 * most of it and takes those contents over. The lists are this module's own: a call cuts them back to
 * what it keeps and extends them in place.
 */
let lastContents: {
  /** The messages list `derived` was copied from, from index `leading` (its successor's claim is about it). */
  source?: readonly unknown[]
  leading?: number
  derived: DerivedRequest['messages'][number][]
  signCalls: boolean
  contents: GeminiContent[]
  sources: Seq[][]
  starts: number[]
} = emptyContents()

function emptyContents(): typeof lastContents {
  return { derived: [], signCalls: false, contents: [], sources: [], starts: [] }
}

/**
 * Derived messages as contents, one round's tool results joined in one user content. Contents built
 * from a derived prefix the previous call shared (the same objects), up to the last one a result may
 * still join, are taken over; the rest are built again.
 */
function convertContents(
  messages: readonly DerivedRequest['messages'][number][],
  leading: number,
  signCalls: boolean,
): { contents: GeminiContent[]; sources: Seq[][] } {
  const count = messages.length - leading
  const last = lastContents
  // Reset first: a throw below leaves no half-updated lists behind.
  lastContents = emptyContents()
  const { derived, contents, sources, starts } = last
  const shared =
    last.signCalls === signCalls
      ? identicalPrefix(messages, derived, last.leading === leading ? last.source : undefined, leading)
      : 0
  // Keep contents whose derived range ends inside the shared prefix, the last one excepted (a result may
  // join it): those before the first later content starting past `shared` (starts only grow).
  let low = 1
  let high = contents.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((starts[middle] ?? Number.POSITIVE_INFINITY) <= shared) low = middle + 1
    else high = middle
  }
  const kept = shared === 0 ? 0 : Math.max(0, Math.min(contents.length - 1, low - 1))
  const first = kept === 0 ? 0 : (starts[kept] ?? 0)
  derived.length = shared
  for (let index = shared; index < count; index += 1)
    derived.push(messages[leading + index] as (typeof derived)[number])
  contents.length = kept
  sources.length = kept
  starts.length = kept
  let previousRole: Message['role'] | undefined =
    kept === 0 ? undefined : (derived[first - 1]?.message.role ?? undefined)
  for (let index = first; index < derived.length; index += 1) {
    const { message, sourceSeqs } = derived[index] as DerivedRequest['messages'][number]
    const content = convertedContent(message, signCalls)
    const previous = contents.at(-1)
    if (message.role === 'tool' && previousRole === 'tool' && previous !== undefined) {
      // A merged content is a new object: the memoized ones are shared with every later request.
      contents[contents.length - 1] = { ...previous, parts: [...previous.parts, ...content.parts] }
      sources[sources.length - 1] = [...(sources[sources.length - 1] ?? []), ...sourceSeqs]
    } else {
      contents.push(content)
      sources.push([...sourceSeqs])
      starts.push(index)
    }
    previousRole = message.role
  }
  lastContents = { derived, signCalls, contents, sources, starts, source: messages, leading }
  return { contents: contents.slice(), sources: sources.slice() }
}

/**
 * The `generateContent` body of a derived request, in cachelab's view: the JSON body plus `model` and
 * `stream`, which the SDK puts in the URL. Leading system messages join the header prompt in
 * `systemInstruction`; the results of one round of tool calls travel as one user content (the API wants
 * as many function responses as the turn made calls). On a model that validates thought signatures
 * (Gemini 3), every model content's first function call carries the skip sentinel, in every turn: the
 * API checks only the current one, but signing all of them keeps the history append-only.
 */
export function buildGeminiRequest(request: DerivedRequest, options: BuildOptions): BuiltRequest {
  const rules = simulationModel('gemini', request.config.model).request
  const signCalls = rules.kind === 'gemini' && rules.thoughtSignatures === 'validated'
  const systemParts: Raw[] = []
  const systemSources: Seq[] = []
  if (request.system !== undefined) {
    systemParts.push({ text: request.system.text })
    systemSources.push(request.system.sourceSeq)
  }
  let leading = 0
  for (const { message, sourceSeqs } of request.messages) {
    if (message.role !== 'system') break
    systemParts.push({ text: message.text })
    systemSources.push(...sourceSeqs)
    leading += 1
  }
  const { contents, sources } = convertContents(request.messages, leading, signCalls)
  const generationConfig: Raw = {
    ...(request.config.maxTokens !== undefined ? { maxOutputTokens: request.config.maxTokens } : {}),
    ...(request.config.temperature !== undefined ? { temperature: request.config.temperature } : {}),
  }
  const body: Raw = {
    model: request.config.model,
    contents,
    ...(systemParts.length > 0 ? { systemInstruction: { parts: systemParts } } : {}),
    ...(request.tools.length > 0
      ? {
          tools: [
            {
              functionDeclarations: request.tools.map((tool) => ({
                name: tool.name,
                description: tool.description,
                parametersJsonSchema: tool.parameters,
              })),
            },
          ],
        }
      : {}),
    ...(Object.keys(generationConfig).length > 0 ? { generationConfig } : {}),
    ...(options.stream ? { stream: true } : {}),
  }
  return {
    provider: 'gemini',
    api: 'gemini-generate',
    body,
    sources: {
      system: systemSources,
      tools: request.toolsSeq !== undefined ? [request.toolsSeq] : [],
      messages: sources,
    },
  }
}

/** The SDK's parameters for a body in cachelab's view: the same JSON, with model and config apart. */
export function sdkParameters(
  body: Raw,
  options: SendOptions,
): Parameters<GoogleGenAI['models']['generateContent']>[0] {
  const generationConfig = asRecord(body.generationConfig)
  return {
    model: String(body.model),
    contents: body.contents as never,
    config: {
      ...(body.systemInstruction !== undefined ? { systemInstruction: body.systemInstruction as never } : {}),
      ...(body.tools !== undefined ? { tools: body.tools as never } : {}),
      ...(body.toolConfig !== undefined ? { toolConfig: body.toolConfig as never } : {}),
      ...(typeof body.cachedContent === 'string' ? { cachedContent: body.cachedContent } : {}),
      ...generationConfig,
      httpOptions: { headers: options.headers },
      ...(options.signal !== undefined ? { abortSignal: options.signal } : {}),
    },
  }
}

/** Gemini's finish reason in cachelab's vocabulary; a function call ends with `STOP` too. */
function stopReasonOf(finish: unknown, calls: number): StopReason {
  if (calls > 0) return 'tool-calls'
  switch (finish) {
    case 'MAX_TOKENS':
      return 'max-tokens'
    case 'STOP':
    case undefined:
      return 'end'
    default:
      return 'error'
  }
}

/** Accumulates a response or a stream of chunks into one assistant message and the last usage. */
class GeminiReplyAccumulator {
  private text = ''
  private readonly calls: ToolCallBlock[] = []
  private finish: unknown
  usage: unknown
  id = ''

  add(chunk: Raw): void {
    if (typeof chunk.responseId === 'string') this.id = chunk.responseId
    // Usage counters are running totals: the last chunk's overwrite the earlier ones.
    if (chunk.usageMetadata !== undefined) this.usage = chunk.usageMetadata
    const candidate = asRecord((chunk.candidates as unknown[] | undefined)?.[0])
    if (candidate.finishReason !== undefined) this.finish = candidate.finishReason
    for (const value of (asRecord(candidate.content).parts as unknown[] | undefined) ?? []) {
      const part = asRecord(value)
      if (part.thought === true) continue
      if (typeof part.text === 'string') this.text += part.text
      if (part.functionCall !== undefined) {
        const call = asRecord(part.functionCall)
        this.calls.push({
          type: 'tool-call',
          callId:
            typeof call.id === 'string' && call.id !== ''
              ? call.id
              : `${LOCAL_CALL_ID}${this.id}-${this.calls.length}`,
          name: String(call.name ?? ''),
          arguments: JSON.stringify(call.args ?? {}),
        })
      }
    }
  }

  reply(): ProviderReply {
    const message: AssistantMessage = {
      role: 'assistant',
      content: [...(this.text === '' ? [] : [{ type: 'text' as const, text: this.text }]), ...this.calls],
    }
    return {
      message,
      usage: parseGeminiUsage(this.usage),
      stopReason: stopReasonOf(this.finish, this.calls.length),
      responseId: this.id,
    }
  }
}

/** The assistant message of a response or of the chunks of its stream (a capture reads answers so). */
export function geminiAnswerOf(chunks: readonly Raw[]): AssistantMessage | undefined {
  if (chunks.length === 0) return undefined
  const accumulator = new GeminiReplyAccumulator()
  for (const chunk of chunks) accumulator.add(chunk)
  return accumulator.reply().message
}

/** The status of a Google SDK error, and whether Google's retry guidance retries it (408, 429, 5xx). */
export function toGeminiProviderError(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error
  const status =
    typeof (error as { status?: unknown })?.status === 'number'
      ? (error as { status: number }).status
      : undefined
  const message = error instanceof Error ? error.message : String(error)
  if (status === undefined) {
    const aborted = error instanceof Error && error.name === 'AbortError'
    return new ProviderError({ errorType: aborted ? 'aborted' : 'network', message, retryable: !aborted })
  }
  let body: JsonValue | undefined
  try {
    // The SDK's message is the error body as JSON (after `got status: …. ` for an error inside a stream).
    body = JSON.parse(message.slice(message.indexOf('{'))) as JsonValue
  } catch {
    body = undefined
  }
  const statusName = asRecord(asRecord(body).error).status
  return new ProviderError({
    status,
    errorType: typeof statusName === 'string' ? statusName : `http_${status}`,
    message,
    retryable: status === 408 || status === 429 || status >= 500,
    ...(body !== undefined ? { body } : {}),
  })
}

/** Whether an error is the API's answer to a cache it does not hold (deleted or expired). */
function isMissingCache(error: ProviderError): boolean {
  return error.status === 403 && /CachedContent not found/.test(error.message)
}

/**
 * The explicit caches one adapter created, by the head they hold: a session's requests share a head, so
 * the first creates the cache and the others name it until it expires; a head the API refuses to cache
 * (below the model minimum) is remembered and sent as is.
 */
class ExplicitCaches {
  private readonly names = new Map<string, string | 'refused'>()
  private readonly client: GoogleGenAI

  constructor(client: GoogleGenAI) {
    this.client = client
  }

  /**
   * Move the body's head into a cache of `ttlSeconds` (a new one when `fresh`, else the one held): the
   * body then names it in `cachedContent` instead of carrying `systemInstruction` and `tools`.
   */
  async apply(body: Raw, ttlSeconds: number, options: SendOptions, fresh: boolean): Promise<void> {
    const head: Raw = {
      ...(body.systemInstruction !== undefined ? { systemInstruction: body.systemInstruction } : {}),
      ...(body.tools !== undefined ? { tools: body.tools } : {}),
    }
    if (Object.keys(head).length === 0) return
    const key = JSON.stringify([body.model, ttlSeconds, head])
    let name = fresh ? undefined : this.names.get(key)
    if (name === undefined) {
      try {
        const cache = await this.client.caches.create({
          model: String(body.model),
          config: {
            ...(head as Record<string, never>),
            ttl: `${ttlSeconds}s`,
            httpOptions: { headers: options.headers },
            ...(options.signal !== undefined ? { abortSignal: options.signal } : {}),
          },
        })
        name = cache.name ?? 'refused'
      } catch (error) {
        const failure = toGeminiProviderError(error)
        // A head below the model minimum is refused with a 400: such a request goes out uncached.
        if (failure.status !== 400) throw failure
        name = 'refused'
      }
      this.names.set(key, name)
    }
    if (name === 'refused') return
    delete body.systemInstruction
    delete body.tools
    body.cachedContent = name
  }
}

/** Send a body through the SDK. */
async function sendGemini(
  client: GoogleGenAI,
  request: BuiltRequest,
  options: SendOptions,
): Promise<ProviderReply> {
  const parameters = sdkParameters(request.body, options)
  const accumulator = new GeminiReplyAccumulator()
  try {
    if (options.stream) {
      const stream = await client.models.generateContentStream(parameters)
      for await (const chunk of stream) accumulator.add(chunk as unknown as Raw)
      if (accumulator.usage === undefined) throw new Error('the stream ended without usage metadata')
    } else {
      accumulator.add((await client.models.generateContent(parameters)) as unknown as Raw)
    }
  } catch (error) {
    throw toGeminiProviderError(error)
  }
  return accumulator.reply()
}

/**
 * A Google GenAI client for an endpoint (the Gemini API, never Vertex), once the SDK has loaded; retries
 * are the loop's job.
 */
export async function geminiClient(endpoint: Endpoint): Promise<GoogleGenAI> {
  const { GoogleGenAI } = await loadSdk('@google/genai')
  return new GoogleGenAI({
    // Explicit, so `GOOGLE_GENAI_USE_VERTEXAI` in the environment cannot turn the client to Vertex AI.
    vertexai: false,
    apiKey: endpoint.apiKey,
    httpOptions: { baseUrl: endpoint.baseURL, fetch: endpoint.fetch ?? lateBoundFetch },
  })
}

/**
 * The gemini adapter; the endpoint carries the Gemini API's base URL (without `/v1beta`). With
 * `geminiCacheTtlSeconds`, sending moves the request head into an explicit cache: the body it was given
 * becomes the body sent (`cachedContent` in place of the head), so the wire record is what the API saw.
 */
export function geminiAdapter(endpoint: Endpoint): ProviderAdapter {
  // Made at the first send, with the SDK: the explicit caches share the client.
  const connection = lazy(async () => {
    const client = await geminiClient(endpoint)
    return { client, caches: new ExplicitCaches(client) }
  })
  const explicit = new WeakMap<BuiltRequest, number>()
  return {
    provider: 'gemini',
    api: 'gemini-generate',
    buildRequest: (request, options) => {
      const built = buildGeminiRequest(request, options)
      if (options.geminiCacheTtlSeconds !== undefined) explicit.set(built, options.geminiCacheTtlSeconds)
      return built
    },
    parseUsage: parseGeminiUsage,
    send: async (request, options) => {
      const { client, caches } = await connection()
      const ttl = explicit.get(request)
      if (ttl === undefined) return sendGemini(client, request, options)
      const original = { ...request.body }
      await caches.apply(request.body, ttl, options, false)
      try {
        return await sendGemini(client, request, options)
      } catch (error) {
        // The cache expired before the session ended: create it again, once.
        if (!(error instanceof ProviderError) || !isMissingCache(error)) throw error
        for (const key of Object.keys(request.body)) delete request.body[key]
        Object.assign(request.body, original)
        await caches.apply(request.body, ttl, options, true)
        return sendGemini(client, request, options)
      }
    },
  }
}
