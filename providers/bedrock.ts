// AWS Bedrock Converse and ConverseStream over `@aws-sdk/client-bedrock-runtime`: the Converse body of a
// derived request (the Anthropic Messages body, breakpoints included, rewritten block for block with
// `cachePoint` blocks where the markers were), Bedrock's usage (`inputTokens` excludes cache reads and
// writes), the stream's events accumulated, and sending through the SDK over cachelab's fetch.

import { Readable } from 'node:stream'
import type {
  BedrockRuntimeClient,
  ContentBlock,
  ConverseCommand,
  ConverseCommandInput,
  StopReason as ConverseStopReason,
  ConverseStreamCommand,
  ConverseStreamOutput,
} from '@aws-sdk/client-bedrock-runtime'
import { CachelabError } from '../harness/errors.ts'
import { asRecord, optionalNumber } from '../harness/json-fields.ts'
import { builtFrom, identicalPrefix } from '../harness/lineage.ts'
import type { AssistantMessage, DerivedRequest, Seq, Usage } from '../harness/types.ts'
import { type StreamedBlock, streamedMessage } from './anthropic.ts'
import { buildAnthropicRequest } from './anthropic-request.ts'
import { usageOfBuckets } from './anthropic-usage.ts'
import { findModel } from './catalog.ts'
import { type Endpoint, lateBoundFetch } from './endpoints.ts'
import { toProviderError } from './sdk-errors.ts'
import { lazy, loadSdk } from './sdks.ts'
import {
  type BreakpointStrategy,
  type BuildOptions,
  type BuiltRequest,
  type ProviderAdapter,
  ProviderError,
  type ProviderReply,
  type SendOptions,
  type StopReason,
} from './types.ts'

type Raw = Record<string, unknown>

/**
 * Normalize a Converse usage object. `inputTokens` counts only the tokens neither read from nor written
 * to the cache (notes/2026-11-30-bedrock-usage.md), so the request's input is it plus both; the write
 * split by TTL comes from `cacheDetails`.
 */
export function parseBedrockUsage(raw: unknown): Usage {
  const usage = asRecord(raw)
  const uncached = optionalNumber(usage.inputTokens) ?? 0
  const cacheRead = optionalNumber(usage.cacheReadInputTokens)
  const cacheWrite = optionalNumber(usage.cacheWriteInputTokens)
  let cacheWrite5m: number | undefined
  let cacheWrite1h: number | undefined
  if (Array.isArray(usage.cacheDetails)) {
    for (const detail of usage.cacheDetails.map(asRecord)) {
      const tokens = optionalNumber(detail.inputTokens) ?? 0
      if (detail.ttl === '1h') cacheWrite1h = (cacheWrite1h ?? 0) + tokens
      else if (detail.ttl === '5m') cacheWrite5m = (cacheWrite5m ?? 0) + tokens
    }
  }
  const output = optionalNumber(usage.outputTokens) ?? 0
  return usageOfBuckets({ uncached, cacheRead, cacheWrite, cacheWrite5m, cacheWrite1h, output }, raw)
}

/** Map a Converse stop reason; the ones the loop cannot continue from are errors naming the value. */
export function mapConverseStopReason(reason: ConverseStopReason | string | undefined): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end'
    case 'tool_use':
      return 'tool-calls'
    case 'max_tokens':
      return 'max-tokens'
    default:
      throw new ProviderError({
        errorType: 'stop_reason',
        message: `unsupported stopReason ${JSON.stringify(reason ?? null)}`,
        retryable: false,
      })
  }
}

/** A cache point block with the TTL a marker names. */
function cachePoint(marker: unknown): Raw {
  const ttl = asRecord(marker).ttl
  return { cachePoint: typeof ttl === 'string' ? { type: 'default', ttl } : { type: 'default' } }
}

/** Converse blocks of one Messages block: the block, then a cache point where it carried a marker. */
function converseBlocks(value: unknown): Raw[] {
  const block = asRecord(value)
  const marker = block.cache_control
  let converted: Raw
  switch (block.type) {
    case 'text':
      converted = { text: block.text }
      break
    case 'image': {
      const source = asRecord(block.source)
      converted = {
        image: { format: String(source.media_type).replace('image/', ''), source: { bytes: source.data } },
      }
      break
    }
    case 'tool_use':
      converted = { toolUse: { toolUseId: block.id, name: block.name, input: block.input } }
      break
    case 'tool_result':
      converted = {
        toolResult: {
          toolUseId: block.tool_use_id,
          content: [
            { text: typeof block.content === 'string' ? block.content : JSON.stringify(block.content) },
          ],
          ...(block.is_error === true ? { status: 'error' } : {}),
        },
      }
      break
    default:
      throw new CachelabError('invariant', `no Converse block for a ${String(block.type)} block`)
  }
  return marker === undefined ? [converted] : [converted, cachePoint(marker)]
}

/** What a system message inside the history becomes: Converse knows only user and assistant turns. */
export function systemInHistoryText(text: string): string {
  return `<system>\n${text}\n</system>`
}

/**
 * The breakpoint strategy a Converse request uses: Converse has no automatic marker, so `automatic` is
 * the documented "simplified" placement for Claude (one cache point on the last block, which looks back
 * 20 blocks), and on Nova, whose checkpoints read only where one was written, `rolling` (stable points).
 */
function strategyOf(model: string, requested: BreakpointStrategy | undefined): BreakpointStrategy {
  if (requested !== undefined && requested !== 'automatic') return requested
  const entry = findModel('bedrock', model)
  return entry?.request.kind === 'bedrock' && entry.request.family === 'nova' ? 'rolling' : 'last-message'
}

/**
 * The Converse command input of a derived request (`modelId` and the body fields): the Messages body of
 * the same request rewritten block for block, consecutive same-role turns merged (Converse wants them
 * alternating), tool definitions as `toolSpec` with a cache point after the last one when the strategy
 * marks the system (tools come first in the prompt), the output cap in `inferenceConfig`.
 */
export function buildBedrockRequest(request: DerivedRequest, options: BuildOptions): BuiltRequest {
  const strategy = strategyOf(request.config.model, options.breakpoints)
  const messagesBody = buildAnthropicRequest(request, { ...options, breakpoints: strategy, stream: false })
  const { input, owners } = converseFromMessages(messagesBody.body)
  const messages = input.messages as ConverseMessage[]
  // Converse messages the previous request had (the same objects) have the same sources: only the rest
  // are gathered from their Messages messages.
  const last = lastSources
  // Reset first: a throw below leaves no half-updated list behind.
  lastSources = { messages: [], sources: [] }
  const kept = identicalPrefix(messages, last.messages, last.source)
  const seen = last.messages
  seen.length = kept
  for (let index = kept; index < messages.length; index += 1) seen.push(messages[index] as ConverseMessage)
  const sources: Seq[][] = last.sources.slice(0, kept)
  let first = owners.length
  while (first > 0 && (owners[first - 1] ?? 0) >= kept) first -= 1
  for (let index = first; index < owners.length; index += 1) {
    const owner = owners[index] ?? 0
    const seqs = messagesBody.sources.messages[index] ?? []
    sources[owner] = [...(sources[owner] ?? []), ...seqs]
  }
  lastSources = { messages: seen, sources, source: messages }
  return {
    provider: 'bedrock',
    api: 'bedrock-converse',
    body: input,
    sources: { ...messagesBody.sources, messages: sources },
  }
}

/** A Converse message: Converse knows only user and assistant turns. */
interface ConverseMessage {
  role: 'user' | 'assistant'
  content: Raw[]
}

/**
 * The previous request's Converse messages and the sources of each (the next one repeats most). The
 * messages list is this module's own (cut back and extended in place); the sources went out with the request.
 */
let lastSources: {
  messages: ConverseMessage[]
  sources: Seq[][]
  /** The list the messages were copied from (its successor's claim is about it). */
  source?: readonly unknown[]
} = { messages: [], sources: [] }

/**
 * Converse messages already built, per Messages message: a session resends the same wire messages, so
 * its history is converted once and the simulator's memo (keyed by these objects) finds it again.
 */
const converted = new WeakMap<object, ConverseMessage>()

/** One Messages message as a Converse message (memoized; never mutated once returned). */
function converseMessage(value: unknown): ConverseMessage {
  const key = typeof value === 'object' && value !== null ? value : undefined
  const known = key === undefined ? undefined : converted.get(key)
  if (known !== undefined) return known
  const message = asRecord(value)
  const content =
    typeof message.content === 'string'
      ? [{ type: 'text', text: message.content }]
      : (message.content as unknown[])
  const blocks = content.flatMap((block) => {
    if (message.role !== 'system') return converseBlocks(block)
    const text = asRecord(block)
    return converseBlocks({ ...text, text: systemInHistoryText(String(text.text)) })
  })
  const converse: ConverseMessage = {
    role: message.role === 'assistant' ? 'assistant' : 'user',
    content: blocks,
  }
  if (key !== undefined) converted.set(key, converse)
  return converse
}

/**
 * The previous call's conversion: its Messages messages, the Converse messages they became, the Converse
 * message each went into, and the first Messages message of each Converse message. The lists are this
 * module's own: a call cuts them back to what it keeps and extends them in place.
 */
let lastConversion: {
  inputs: unknown[]
  /** The list the inputs were copied from (its successor's claim is about it). */
  source?: readonly unknown[]
  messages: ConverseMessage[]
  owners: number[]
  starts: number[]
} = emptyConversion()

function emptyConversion(): typeof lastConversion {
  return { inputs: [], messages: [], owners: [], starts: [] }
}

/**
 * Messages messages as Converse messages, consecutive same-role turns merged; `owners[i]` is the Converse
 * message input `i` went into. The Converse messages wholly before the one the last input shared with
 * the previous call went into are taken over (no later input can join them); the rest are built again.
 */
function convertMessages(inputs: readonly unknown[]): {
  messages: ConverseMessage[]
  owners: number[]
  kept: number
} {
  const last = lastConversion
  // Reset first: a throw below leaves no half-updated lists behind.
  lastConversion = emptyConversion()
  const { messages, owners, starts } = last
  const shared = identicalPrefix(inputs, last.inputs, last.source)
  const kept = shared === 0 ? 0 : (owners[shared - 1] ?? 0)
  const from = starts[kept] ?? 0
  last.inputs.length = shared
  for (let index = shared; index < inputs.length; index += 1) last.inputs.push(inputs[index])
  messages.length = kept
  owners.length = from
  starts.length = kept
  for (let index = from; index < inputs.length; index += 1) {
    const message = converseMessage(inputs[index])
    const previous = messages[messages.length - 1]
    // Merged turns are new objects: the memoized ones are shared with every later request.
    if (previous !== undefined && previous.role === message.role)
      messages[messages.length - 1] = {
        role: message.role,
        content: [...previous.content, ...message.content],
      }
    else {
      messages.push(message)
      starts.push(index)
    }
    owners.push(messages.length - 1)
  }
  lastConversion = { ...last, source: inputs }
  return { messages: messages.slice(), owners: owners.slice(), kept }
}

/** The Converse messages the previous input went out with (the next one's claim is about them). */
let lastConverse: ConverseMessage[] | undefined

/**
 * A Messages body as the Converse command input it stands for: blocks rewritten one for one, a cache
 * point after every marked block (after the last block for a top-level `cache_control`, Bedrock having
 * no automatic marker), consecutive same-role turns merged, a system message in the history as tagged
 * user text. `owners[i]` is the Converse message Messages message `i` went into.
 */
export function converseFromMessages(body: Record<string, unknown>): { input: Raw; owners: number[] } {
  const system = Array.isArray(body.system)
    ? body.system.flatMap(converseBlocks)
    : typeof body.system === 'string' && body.system !== ''
      ? [{ text: body.system }]
      : []
  const previous = lastConverse
  // Reset first: a throw below leaves no claim about a list that never went out.
  lastConverse = undefined
  const { messages, owners, kept } = convertMessages(body.messages as unknown[])
  const last = messages[messages.length - 1]
  const pointed = body.cache_control !== undefined && last !== undefined
  if (pointed)
    messages[messages.length - 1] = {
      role: last.role,
      content: [...last.content, cachePoint(body.cache_control)],
    }
  // The kept messages come before the previous list's last one (the one its cache point may replace).
  builtFrom(messages, previous, pointed ? Math.min(kept, messages.length - 1) : kept)
  lastConverse = messages
  const tools = (Array.isArray(body.tools) ? body.tools : [])
    .map(asRecord)
    .filter((tool) => tool.defer_loading !== true)
    .map((tool) => ({
      toolSpec: { name: tool.name, description: tool.description, inputSchema: { json: tool.input_schema } },
    }))
  const input: Raw = {
    modelId: body.model,
    messages,
    ...(system.length > 0 ? { system } : {}),
    ...(tools.length > 0 ? { toolConfig: { tools } } : {}),
    inferenceConfig: {
      maxTokens: body.max_tokens,
      ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
    },
  }
  return { input, owners }
}

/** The assistant message of a reply's content blocks (text and tool calls; reasoning is not kept). */
export function converseAssistant(content: readonly ContentBlock[]): AssistantMessage {
  const message: AssistantMessage = { role: 'assistant', content: [] }
  for (const block of content) {
    if (block.text !== undefined) message.content.push({ type: 'text', text: block.text })
    else if (block.toolUse !== undefined) {
      message.content.push({
        type: 'tool-call',
        callId: block.toolUse.toolUseId ?? '',
        name: block.toolUse.name ?? '',
        arguments: JSON.stringify(block.toolUse.input ?? {}),
      })
    }
  }
  return message
}

/** A ConverseStream reply, event by event; `metadata` carries the usage once, at the end. */
export class ConverseEventAccumulator {
  private readonly blocks: StreamedBlock[] = []
  private stop: string | undefined
  private usage: Raw | undefined
  private started = false

  add(event: ConverseStreamOutput): void {
    if (event.messageStart !== undefined) this.started = true
    else if (event.contentBlockStart !== undefined) {
      const index = event.contentBlockStart.contentBlockIndex ?? 0
      const use = event.contentBlockStart.start?.toolUse
      if (use !== undefined)
        this.blocks[index] = { type: 'tool', id: use.toolUseId ?? '', name: use.name ?? '', json: '' }
    } else if (event.contentBlockDelta !== undefined) {
      const index = event.contentBlockDelta.contentBlockIndex ?? 0
      const delta = event.contentBlockDelta.delta
      const block = this.blocks[index]
      if (delta?.text !== undefined) {
        if (block?.type === 'text') block.text += delta.text
        else this.blocks[index] = { type: 'text', text: delta.text }
      } else if (delta?.toolUse !== undefined && block?.type === 'tool')
        block.json += delta.toolUse.input ?? ''
    } else if (event.messageStop !== undefined) this.stop = event.messageStop.stopReason
    else if (event.metadata !== undefined) this.usage = asRecord(event.metadata.usage)
    else {
      // Exceptions inside the stream: the SDK throws them from the iterator; anything else is ignored.
      const error = Object.values(event).find((value) => value !== undefined)
      if (error instanceof Error) throw error
    }
  }

  /** The reply; a stream that ended before its usage is an error. */
  reply(responseId: string): ProviderReply {
    if (!this.started || this.usage === undefined) throw new Error('the stream ended before metadata')
    const message = streamedMessage(this.blocks)
    return {
      message,
      usage: parseBedrockUsage(this.usage),
      stopReason: mapConverseStopReason(this.stop),
      responseId,
    }
  }
}

/** What the SDK's request handler is given and returns (structurally; no @smithy import needed). */
interface HandlerRequest {
  method: string
  protocol: string
  hostname: string
  port?: number
  path: string
  query?: Record<string, string | string[] | null>
  headers: Record<string, string>
  body?: unknown
}

/**
 * A request handler over a fetch: the SDK signs and serializes, cachelab's fetch carries the bytes (so
 * MSW answers it in process and the loopback server over HTTP/1.1), and the body comes back as a Node
 * stream for both the JSON and the event-stream readers.
 */
function fetchHandler(fetchFunction: typeof fetch) {
  return {
    async handle(request: HandlerRequest, options?: { abortSignal?: AbortSignal }) {
      const query = new URLSearchParams()
      for (const [key, value] of Object.entries(request.query ?? {})) {
        for (const item of Array.isArray(value) ? value : [value]) if (item !== null) query.append(key, item)
      }
      const search = query.size > 0 ? `?${query.toString()}` : ''
      const port = request.port === undefined ? '' : `:${request.port}`
      const url = `${request.protocol}//${request.hostname}${port}${request.path}${search}`
      const { host: _host, ...headers } = request.headers
      const init: RequestInit = { method: request.method, headers }
      if (request.body !== undefined) init.body = request.body as NonNullable<RequestInit['body']>
      if (options?.abortSignal !== undefined) init.signal = options.abortSignal
      const response = await fetchFunction(url, init)
      const responseHeaders: Record<string, string> = {}
      response.headers.forEach((value, key) => {
        responseHeaders[key] = value
      })
      const body =
        response.body === null
          ? Readable.from([])
          : Readable.fromWeb(response.body as import('node:stream/web').ReadableStream)
      return {
        response: {
          statusCode: response.status,
          reason: response.statusText,
          headers: responseHeaders,
          body,
        },
      }
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs() {
      return {}
    },
  }
}

/** Credentials of a Bedrock endpoint: a Bedrock API key (bearer) or an access key pair (SigV4). */
export type BedrockCredentials =
  | { kind: 'bearer'; token: string }
  | { kind: 'sigv4'; accessKeyId: string; secretAccessKey: string; sessionToken?: string }

/** Placeholder access keys of simulated runs: the mock accepts any signature. */
export const SIMULATED_AWS_KEYS = {
  accessKeyId: 'AKIACACHELABSIMULATED',
  secretAccessKey: 'cachelab-simulated-secret-access-key',
} as const

/** The default region of simulated runs and of live runs that name none. */
export const DEFAULT_REGION = 'us-east-1'

/**
 * A Bedrock Runtime client for an endpoint: `apiKey` is a Bedrock API key (bearer) unless `aws` names an
 * access key pair; the region comes from `aws.region` or the base URL's host; made once the SDK has
 * loaded. Retries are the loop's job.
 */
export async function bedrockClient(endpoint: Endpoint): Promise<BedrockRuntimeClient> {
  const { BedrockRuntimeClient } = await loadSdk('@aws-sdk/client-bedrock-runtime')
  const credentials: BedrockCredentials =
    endpoint.aws?.accessKeyId !== undefined
      ? {
          kind: 'sigv4',
          accessKeyId: endpoint.aws.accessKeyId,
          secretAccessKey: endpoint.aws.secretAccessKey ?? '',
          ...(endpoint.aws.sessionToken !== undefined ? { sessionToken: endpoint.aws.sessionToken } : {}),
        }
      : { kind: 'bearer', token: endpoint.apiKey }
  const region =
    endpoint.aws?.region ?? /bedrock-runtime\.([a-z0-9-]+)\./.exec(endpoint.baseURL)?.[1] ?? DEFAULT_REGION
  return new BedrockRuntimeClient({
    region,
    endpoint: endpoint.baseURL,
    maxAttempts: 1,
    requestHandler: fetchHandler(endpoint.fetch ?? lateBoundFetch),
    ...(credentials.kind === 'bearer'
      ? { token: { token: credentials.token }, authSchemePreference: ['httpBearerAuth'] }
      : {
          credentials: {
            accessKeyId: credentials.accessKeyId,
            secretAccessKey: credentials.secretAccessKey,
            ...(credentials.sessionToken !== undefined ? { sessionToken: credentials.sessionToken } : {}),
          },
          authSchemePreference: ['sigv4'],
        }),
  })
}

/** Send a Converse command input, streamed (events accumulated) or not; failures become ProviderError. */
export async function sendBedrock(
  client: BedrockRuntimeClient,
  request: BuiltRequest,
  options: SendOptions,
): Promise<ProviderReply> {
  const { ConverseCommand, ConverseStreamCommand } = await loadSdk('@aws-sdk/client-bedrock-runtime')
  const input = withImageBytes(request.body) as unknown as ConverseCommandInput
  const abort = options.signal !== undefined ? { abortSignal: options.signal } : {}
  try {
    if (options.stream) {
      const output = await client.send(withHeaders(new ConverseStreamCommand(input), options.headers), abort)
      const accumulator = new ConverseEventAccumulator()
      for await (const event of output.stream ?? []) accumulator.add(event)
      return accumulator.reply(output.$metadata.requestId ?? '')
    }
    const output = await client.send(withHeaders(new ConverseCommand(input), options.headers), abort)
    return {
      message: converseAssistant(output.output?.message?.content ?? []),
      usage: parseBedrockUsage(output.usage),
      stopReason: mapConverseStopReason(output.stopReason),
      responseId: output.$metadata.requestId ?? '',
    }
  } catch (error) {
    throw toProviderError(error)
  }
}

/**
 * The command input with image bytes as binary: the body keeps them base64, as the JSON wire carries
 * them, and the SDK base64-encodes a blob member itself (a string would be encoded twice).
 */
function withImageBytes(body: Raw): Raw {
  const convert = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(convert)
    if (typeof value !== 'object' || value === null) return value
    const block = value as Raw
    if (block.image !== undefined) {
      const image = asRecord(block.image)
      const bytes = asRecord(image.source).bytes
      if (typeof bytes === 'string')
        return { ...block, image: { ...image, source: { bytes: Buffer.from(bytes, 'base64') } } }
    }
    if (block.toolResult !== undefined) {
      const result = asRecord(block.toolResult)
      return { ...block, toolResult: { ...result, content: convert(result.content) } }
    }
    return block
  }
  const messages = Array.isArray(body.messages)
    ? body.messages.map((message) => ({ ...asRecord(message), content: convert(asRecord(message).content) }))
    : body.messages
  return { ...body, messages }
}

/** The slice of the SDK's middleware stack a build-step middleware needs. */
interface HeaderStack {
  add(
    middleware: (
      next: (args: { request: unknown }) => Promise<unknown>,
    ) => (args: { request: unknown }) => Promise<unknown>,
    options: { step: 'build'; name: string },
  ): void
}

/** A command that sends cachelab's headers (the mock's script and clock): Converse inputs carry none. */
function withHeaders<Command extends ConverseCommand | ConverseStreamCommand>(
  command: Command,
  headers: Record<string, string>,
): Command {
  ;(command.middlewareStack as unknown as HeaderStack).add(
    (next) => (args) => {
      const request = args.request as { headers?: Record<string, string> }
      if (request.headers !== undefined) Object.assign(request.headers, headers)
      return next(args)
    },
    { step: 'build', name: 'cachelabHeaders' },
  )
  return command
}

/** The bedrock adapter. */
export function bedrockAdapter(endpoint: Endpoint): ProviderAdapter {
  const client = lazy(() => bedrockClient(endpoint))
  return {
    provider: 'bedrock',
    api: 'bedrock-converse',
    buildRequest: buildBedrockRequest,
    parseUsage: parseBedrockUsage,
    send: async (request, options) => sendBedrock(await client(), request, options),
  }
}
