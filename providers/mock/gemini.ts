// Mock Gemini API (v1beta): `models/{model}:generateContent`, `:streamGenerateContent?alt=sse`, and the
// `cachedContents` resource (create, get, list, update, delete). Usage is computed by the cache simulator
// over the request as received; `usageMetadata.promptTokenCount` includes the cached tokens, as the API's.
// Answers carry thought signatures where the model signs, and thought summaries where asked.

import { createHash } from 'node:crypto'
import type { ThoughtSignatures } from '../catalog.ts'
import { type ExplicitCache, geminiRejection } from '../sim/gemini.ts'
import type { SimCounts } from '../sim/types.ts'
import { SimulatorRejection } from '../sim/types.ts'
import type { Answer } from './answer.ts'
import { EPOCH_SECONDS, type MockContext } from './context.ts'
import type { Fault } from './faults.ts'
import type { StopReason } from './reply.ts'
import {
  jsonAnswer,
  type MockAnswer,
  type MockHttpRequest,
  type MockRequest,
  readMockRequest,
  sseAnswer,
} from './request.ts'
import { TIME_HEADER } from './script.ts'
import { type SseFrame, sseStream, textPieces } from './sse.ts'

/** The API's version path under the SDK's base URL. */
export const GEMINI_API_VERSION = 'v1beta'

/** A Google error envelope response. */
function googleError(status: number, message: string): MockAnswer {
  const rejection = geminiRejection(status, message)
  return jsonAnswer(status, rejection.body)
}

/** The `usageMetadata` of simulated counts: the prompt count includes the cached part; thoughts apart. */
export function geminiUsage(counts: SimCounts): Record<string, unknown> {
  const thoughts = counts.reasoning ?? 0
  return {
    promptTokenCount: counts.input,
    candidatesTokenCount: counts.output - thoughts,
    totalTokenCount: counts.input + counts.output,
    // Proto3 JSON leaves zero counts out: a request that read nothing has no cached fields.
    ...(counts.read > 0 ? { cachedContentTokenCount: counts.read } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: counts.input }],
    ...(counts.read > 0 ? { cacheTokensDetails: [{ modality: 'TEXT', tokenCount: counts.read }] } : {}),
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
  }
}

/** The HTTP response of a fault that happens before any output. */
export function geminiFaultResponse(fault: Fault): MockAnswer | undefined {
  switch (fault.kind) {
    case 'rate-limit':
      return googleError(429, 'Resource has been exhausted (e.g. check quota).')
    case 'overloaded':
      return googleError(503, 'The model is overloaded. Please try again later.')
    case 'server-error':
      return googleError(
        500,
        'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
      )
    case 'stream-cut':
    case 'stream-error':
      return undefined
  }
}

/** Gemini's `finishReason`: a function call ends with `STOP` too. */
function finishReason(stop: StopReason): string {
  switch (stop) {
    case 'end':
    case 'tool-use':
    case 'refusal':
    case 'pause-turn':
      return 'STOP'
    case 'max-tokens':
      return 'MAX_TOKENS'
    case 'content-filter':
      return 'SAFETY'
  }
}

/** Arguments as the object a `functionCall` carries (the scripted JSON text parsed). */
function argsOf(text: string): unknown {
  try {
    const value = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}
  } catch {
    return {}
  }
}

type Part = Record<string, unknown>

/**
 * A deterministic stand-in for the opaque signature the API puts on an answer: the same answer of the same
 * model is signed the same, streamed or not, in every run. Base64, as the API's are.
 */
function geminiThoughtSignature(model: string, answer: Answer): string {
  return createHash('sha256')
    .update(
      `cachelab-gemini-thought\u0000${model}\u0000${answer.reasoning?.text ?? ''}\u0000${JSON.stringify(answer.message.content)}`,
    )
    .digest('base64')
}

/**
 * Which of an answer's parts carries its signature (ai.google.dev/gemini-api/docs/thought-signatures,
 * "Thought signatures for different models"): on Gemini 3 the first function call (parallel calls after it
 * have none), else, when the model thought, the last part; on 2.5 the first part of an answer with
 * function calls, when the model thought (thought summaries aside). An answer with reasoning is one the
 * model thought over.
 */
function signedPart(
  parts: readonly Part[],
  answer: Answer,
  signatures: ThoughtSignatures,
): number | undefined {
  const thought = answer.reasoning !== undefined
  const firstCall = parts.findIndex((part) => part.functionCall !== undefined)
  switch (signatures) {
    case 'validated':
      if (firstCall >= 0) return firstCall
      return thought && parts.length > 0 ? parts.length - 1 : undefined
    case 'optional':
      return firstCall >= 0 && thought ? 0 : undefined
  }
}

/** How a response renders an answer: streamed or whole, signed as its model signs, with thoughts or not. */
interface PartsOptions {
  stream: boolean
  model: string
  /** How the model signs (undefined: a model without Gemini's request rules, which signs nothing). */
  signatures: ThoughtSignatures | undefined
  /** `thinkingConfig.includeThoughts`: the thought summary leads the answer, as `thought: true` parts. */
  thoughts: boolean
}

/**
 * The response parts of an answer: its thought summary where asked (the reasoning text; its tokens are
 * `thoughtsTokenCount`), then its text, then one part per function call, the signature on the part the
 * model signs. Streamed, texts come in pieces, each its own part, and an empty answer is one empty text.
 */
function answerParts(answer: Answer, options: PartsOptions): Part[] {
  const split = (text: string): string[] => (options.stream ? textPieces(text) : text === '' ? [] : [text])
  const text = answer.message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
  const parts: Part[] = split(text).map((piece) => ({ text: piece }))
  for (const block of answer.message.content) {
    if (block.type !== 'tool-call') continue
    parts.push({ functionCall: { id: block.callId, name: block.name, args: argsOf(block.arguments) } })
  }
  if (options.stream && parts.length === 0) parts.push({ text: '' })
  const signed = options.signatures === undefined ? undefined : signedPart(parts, answer, options.signatures)
  const part = signed === undefined ? undefined : parts[signed]
  if (signed !== undefined && part !== undefined)
    parts[signed] = { ...part, thoughtSignature: geminiThoughtSignature(options.model, answer) }
  const reasoning = answer.reasoning
  if (!options.thoughts || reasoning === undefined || reasoning.redacted) return parts
  return [...split(reasoning.text).map((piece) => ({ text: piece, thought: true })), ...parts]
}

/** Whether a request asks for thought summaries. */
function includesThoughts(body: Record<string, unknown>): boolean {
  const generation = body.generationConfig as { thinkingConfig?: { includeThoughts?: unknown } } | undefined
  return generation?.thinkingConfig?.includeThoughts === true
}

/** `gemini-2.5-flash:generateContent` → its model and method. */
function parseCall(call: string): { model: string; method: string } | undefined {
  const colon = call.lastIndexOf(':')
  if (colon <= 0) return undefined
  return { model: call.slice(0, colon), method: call.slice(colon + 1) }
}

/** Handle `POST …/models/{model}:{method}` (generateContent, streamGenerateContent). */
export async function handleGeminiModelCall(
  call: string,
  request: MockHttpRequest,
  context: MockContext,
): Promise<MockAnswer> {
  const parsedCall = parseCall(decodeURIComponent(call))
  if (parsedCall === undefined || !['generateContent', 'streamGenerateContent'].includes(parsedCall.method))
    return googleError(404, `Method not found: ${call}`)
  const stream = parsedCall.method === 'streamGenerateContent'
  const read = await readMockRequest(request, context)
  if ('problem' in read) return googleError(400, read.problem)
  // cachelab's view of the body carries what the URL says: the model, and whether it streams.
  const parsed: MockRequest = {
    ...read,
    body: { ...read.body, model: parsedCall.model, ...(stream ? { stream: true } : {}) },
  }
  const { body } = parsed
  const contents = body.contents
  if (!Array.isArray(contents) || contents.length === 0)
    return googleError(400, '* GenerateContentRequest.contents: contents is not specified\n')
  const refused = context.refuse('gemini-generate', parsed, request.headers)
  if (refused !== undefined) return jsonAnswer(refused.status, refused.body)
  const early = context.failEarly('gemini-generate', parsed, geminiFaultResponse)
  if (early !== undefined) return early
  const answer = context.answer('gemini-generate', parsed)
  const simulation = context.simulate('gemini-generate', parsed, answer)
  if (simulation instanceof SimulatorRejection) return jsonAnswer(simulation.status, simulation.body)
  const fault = context.answerFault(parsed)
  const usage = geminiUsage(simulation.counts)
  const responseId = context.nextId('gemini-sim-')
  const modelVersion = parsedCall.model
  const finish = finishReason(answer.stop)
  const headers = { 'x-request-id': responseId }
  const rules = context.modelEntry('gemini', parsedCall.model).request
  const parts = answerParts(answer, {
    stream,
    model: parsedCall.model,
    signatures: rules.kind === 'gemini' ? rules.thoughtSignatures : undefined,
    thoughts: includesThoughts(body),
  })
  const candidate = (content: unknown[], last: boolean) => ({
    content: { parts: content, role: 'model' },
    ...(last ? { finishReason: finish } : {}),
    index: 0,
  })

  if (!stream) {
    if (fault?.kind === 'stream-cut' || fault?.kind === 'stream-error')
      return googleError(
        500,
        'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
      )
    return jsonAnswer(
      200,
      { candidates: [candidate(parts, true)], usageMetadata: usage, modelVersion, responseId },
      headers,
    )
  }

  // Streamed: thoughts and text in pieces, function calls whole, one part a chunk, usage on every chunk
  // (the last one final).
  const running = { promptTokenCount: simulation.counts.input, totalTokenCount: simulation.counts.input }
  const frames: SseFrame[] = parts.map((part, index) => {
    const last = index === parts.length - 1
    return {
      data: JSON.stringify({
        candidates: [candidate([part], last)],
        usageMetadata: last ? usage : running,
        modelVersion,
        responseId,
      }),
    }
  })
  if (fault?.kind === 'stream-error') {
    frames.splice(frames.length - 1, 0, {
      data: JSON.stringify({
        error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' },
      }),
    })
  }
  return sseAnswer(
    sseStream(frames, fault?.kind === 'stream-cut' ? { cutAfter: fault.afterFrames } : {}),
    headers,
  )
}

/** A cache as the `cachedContents` resource shows it (never its contents). */
function cacheResource(cache: ExplicitCache): Record<string, unknown> {
  const time = (seconds: number) => new Date((EPOCH_SECONDS + seconds) * 1000).toISOString()
  return {
    name: cache.name,
    model: `models/${cache.model}`,
    ...(cache.displayName !== undefined ? { displayName: cache.displayName } : {}),
    createTime: time(cache.createdAt),
    updateTime: time(cache.updatedAt),
    expireTime: time(cache.expiresAt),
    usageMetadata: { totalTokenCount: cache.tokens },
  }
}

/** Run a cache operation, answering a refusal in Google's envelope. */
function cacheCall(operation: () => MockAnswer): MockAnswer {
  try {
    return operation()
  } catch (error) {
    if (error instanceof SimulatorRejection) return jsonAnswer(error.status, error.body)
    throw error
  }
}

/** Handle `POST …/cachedContents`. */
export async function handleCreateCache(request: MockHttpRequest, context: MockContext): Promise<MockAnswer> {
  const read = await readMockRequest(request, context)
  if ('problem' in read) return googleError(400, read.problem)
  return cacheCall(() =>
    jsonAnswer(200, cacheResource(context.simulators.gemini.createCache(read.body, read.at, EPOCH_SECONDS))),
  )
}

/** The virtual time of a request without a body: its time header, else the clock. */
function timeOf(request: MockHttpRequest, context: MockContext): number {
  const header = Number(request.headers.get(TIME_HEADER) ?? Number.NaN)
  return Number.isFinite(header) ? header : context.now()
}

/** Handle `GET …/cachedContents/{id}`. */
export function handleGetCache(id: string, request: MockHttpRequest, context: MockContext): MockAnswer {
  return cacheCall(() =>
    jsonAnswer(
      200,
      cacheResource(context.simulators.gemini.getCache(`cachedContents/${id}`, timeOf(request, context))),
    ),
  )
}

/** Handle `GET …/cachedContents`. */
export function handleListCaches(request: MockHttpRequest, context: MockContext): MockAnswer {
  const caches = context.simulators.gemini.listCaches(timeOf(request, context))
  return jsonAnswer(200, caches.length === 0 ? {} : { cachedContents: caches.map(cacheResource) })
}

/** Handle `PATCH …/cachedContents/{id}` (only the expiry may change). */
export async function handleUpdateCache(
  id: string,
  request: MockHttpRequest,
  context: MockContext,
): Promise<MockAnswer> {
  const read = await readMockRequest(request, context)
  if ('problem' in read) return googleError(400, read.problem)
  return cacheCall(() =>
    jsonAnswer(
      200,
      cacheResource(
        context.simulators.gemini.updateCache(`cachedContents/${id}`, read.body, read.at, EPOCH_SECONDS),
      ),
    ),
  )
}

/** Handle `DELETE …/cachedContents/{id}`. */
export function handleDeleteCache(id: string, request: MockHttpRequest, context: MockContext): MockAnswer {
  return cacheCall(() => {
    context.simulators.gemini.deleteCache(`cachedContents/${id}`, timeOf(request, context))
    return jsonAnswer(200, {})
  })
}
