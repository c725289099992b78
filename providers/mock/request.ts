// The prelude every mock handler shares: parse the JSON body, read the script, time, session and fault
// headers. Queued faults stay queued: the handler takes one only for a request it accepts.

import type { AssistantMessage, Fault } from '../../harness/types.ts'
import { type Placement, WIRE_HEADERS } from '../wire/exchange.ts'
import { parseFaultHeader } from './fault-spec.ts'
import { FAULT_HEADER, type HeaderFault } from './faults.ts'
import {
  DEFAULT_REPLY,
  decodeScript,
  EXCHANGE_HEADER,
  PLACE_HEADER,
  SCRIPT_HEADER,
  SESSION_HEADER,
  TIME_HEADER,
} from './script.ts'

/**
 * What a mock handler reads of an HTTP request. A fetch `Request` (MSW's) is one; the loopback server
 * hands a lighter one to a handler it calls itself for a body it parsed and placed (dispatch.ts).
 */
export interface MockHttpRequest {
  readonly method: string
  /** The absolute URL, on the vendor's real host. */
  readonly url: string
  readonly headers: Headers
  json(): Promise<unknown>
}

/** A body the loopback server parsed and placed, handed to the request's handler with its place. */
export interface HandedBody {
  body: Record<string, unknown>
  placement: Placement
  /**
   * The failure inside the answer that a replayed request gets because its recording failed so (a cut
   * stream, an error event): the request fails once, whatever the same body got before.
   */
  fault?: Fault
}

/** A parsed mock request. */
export interface MockRequest {
  body: Record<string, unknown>
  /** The `x-cachelab-script` header's message: the whole answer, when the caller scripts it. */
  script: AssistantMessage | undefined
  /** What a failure before any answer reports as the output: the script, else `OK.`. */
  output: AssistantMessage
  at: number
  /** The `x-cachelab-session` header: the session the caller declares. */
  session: string | undefined
  /** The `x-cachelab-exchange` header: the loopback server's id of the HTTP exchange. */
  exchange: string | undefined
  /** The `x-cachelab-fault` header: a fault this request asks for. */
  fault?: HeaderFault
  /** A compatible provider's routing header (xAI's `x-grok-conv-id`), set by its handler. */
  routingKey?: string
  /** The request's headers that tell its agent and session (`WIRE_HEADERS`), lower-case names. */
  headers: Readonly<Record<string, string>>
  /** The request's place as the loopback server's capture numbered it (`x-cachelab-place`). */
  placement?: Placement
}

/** The headers of a request the capture reads: agent identity and session ids, never a credential. */
export function wireHeaders(headers: Headers): Record<string, string> {
  const kept: Record<string, string> = {}
  for (const name of WIRE_HEADERS) {
    const value = headers.get(name)
    if (value !== null) kept[name] = value
  }
  return kept
}

/**
 * The deepest nesting of arrays and objects a request body may have. Real tool schemas and content stay
 * far below it; the simulators, validators and digests walk bodies recursively, and a body nested tens of
 * thousands deep would overflow their stack.
 */
export const MAX_NESTING = 128

/** The latest virtual time a request may claim (`x-cachelab-at`): about 31 years of seconds. */
export const MAX_VIRTUAL_SECONDS = 1_000_000_000

/** How deeply arrays and objects nest in a JSON value, counted up to just past `MAX_NESTING` (no recursion). */
export function nestingDepth(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0
  let deepest = 1
  // Two parallel stacks, containers only: a request body has thousands of leaves and few containers.
  const containers: object[] = [value]
  const depths: number[] = [1]
  while (containers.length > 0) {
    const container = containers.pop() as object
    const depth = depths.pop() as number
    if (depth > deepest) deepest = depth
    if (depth > MAX_NESTING) return depth
    const items: unknown[] = Array.isArray(container) ? container : Object.values(container)
    for (const item of items) {
      if (typeof item !== 'object' || item === null) continue
      containers.push(item)
      depths.push(depth + 1)
    }
  }
  return deepest
}

/** Why a body is nested too deeply to simulate, or undefined. */
export function nestingProblem(body: unknown): string | undefined {
  return bodyNesting(body) > MAX_NESTING
    ? `The request body nests arrays and objects more than ${MAX_NESTING} levels deep.`
    : undefined
}

/** The fields whose items a session sends again, reused as the same objects (wire/item-reuse.ts). */
const ITEM_LISTS = new Set(['messages', 'contents', 'input'])

/**
 * How deeply each item of a request's item list nests, by the item: a parsed body is never written to
 * (mock/loopback-reuse.test.ts freezes its items), so an item reused from an earlier request is measured
 * once, not on every request that sends it again.
 */
const itemHeights = new WeakMap<object, number>()

/** `nestingDepth` of a body, each item of its item lists measured once per object. */
function bodyNesting(body: unknown): number {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return nestingDepth(body)
  let deepest = 1
  for (const [name, value] of Object.entries(body)) {
    const height = Array.isArray(value) && ITEM_LISTS.has(name) ? 1 + listHeight(value) : nestingDepth(value)
    deepest = Math.max(deepest, 1 + height)
    if (deepest > MAX_NESTING) break
  }
  return deepest
}

/** The deepest nesting of a list's items (0 when none is an array or object). */
function listHeight(items: readonly unknown[]): number {
  let highest = 0
  for (const item of items) {
    if (typeof item !== 'object' || item === null) continue
    let height = itemHeights.get(item)
    if (height === undefined) {
      height = nestingDepth(item)
      itemHeights.set(item, height)
    }
    if (height > highest) highest = height
    if (highest > MAX_NESTING) break
  }
  return highest
}

/** Parse a request, or return the reason it is malformed (answered with the API's 400). */
export async function readMockRequest(
  request: MockHttpRequest,
  context: {
    now(): number
    takeBody(exchange: string): HandedBody | undefined
    reuseItems?(body: Record<string, unknown>): void
  },
): Promise<MockRequest | { problem: string }> {
  let body: unknown
  // The loopback server parsed a request it placed (only it sets the placement header, to the exchange
  // id) and hands the body over with its place by that id: the same value, its items perhaps shared with
  // earlier requests, its nesting already checked.
  const exchangeId = request.headers.get(EXCHANGE_HEADER)
  const handed =
    exchangeId !== null && request.headers.get(PLACE_HEADER) === exchangeId
      ? context.takeBody(exchangeId)
      : undefined
  try {
    body = handed?.body ?? (await request.json())
  } catch {
    return { problem: 'We could not parse the JSON body of your request.' }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { problem: 'The request body must be a JSON object.' }
  }
  if (handed === undefined) {
    // A body parsed here is no one else's: its items may become earlier requests' equal objects.
    context.reuseItems?.(body as Record<string, unknown>)
    const nesting = nestingProblem(body)
    if (nesting !== undefined) return { problem: nesting }
  }
  let script: AssistantMessage | undefined
  try {
    script = decodeScript(request.headers.get(SCRIPT_HEADER))
  } catch (error) {
    return { problem: `Invalid ${SCRIPT_HEADER} header: ${(error as Error).message}` }
  }
  const timeHeader = request.headers.get(TIME_HEADER)
  const at = timeHeader === null ? context.now() : Number(timeHeader)
  if (!Number.isFinite(at) || at < 0 || at > MAX_VIRTUAL_SECONDS)
    return {
      problem: `Invalid ${TIME_HEADER} header: ${timeHeader} (seconds of virtual time, 0 to ${MAX_VIRTUAL_SECONDS})`,
    }
  const faultHeader = request.headers.get(FAULT_HEADER)
  let fault: HeaderFault | undefined
  try {
    fault = faultHeader === null || faultHeader === '' ? undefined : parseFaultHeader(faultHeader)
  } catch (error) {
    return { problem: `Invalid ${FAULT_HEADER} header: ${(error as Error).message}` }
  }
  // A replayed failure is told apart from any earlier one by its exchange id, so it always fails once.
  if (handed?.fault !== undefined) fault = { fault: handed.fault, times: 1, text: `replayed ${exchangeId}` }
  return {
    body: body as Record<string, unknown>,
    script,
    output: script ?? DEFAULT_REPLY,
    at,
    session: request.headers.get(SESSION_HEADER) ?? undefined,
    exchange: request.headers.get(EXCHANGE_HEADER) ?? undefined,
    ...(fault !== undefined ? { fault } : {}),
    headers: wireHeaders(request.headers),
    ...(handed !== undefined ? { placement: handed.placement } : {}),
  }
}

/**
 * An answer as a mock handler builds it, before it is a fetch `Response`: MSW's resolvers turn it into one
 * (`toResponse`); the loopback server writes it as it is, skipping the `Response` and the reading of its
 * stream for a body that is already text (dispatch.ts).
 */
export interface MockAnswer {
  status: number
  /** The answer's headers, `content-type` among them. */
  headers: Readonly<Record<string, string>>
  /** The whole body as text, or a stream of its frames. */
  body: string | ReadableStream<Uint8Array>
}

/** The fetch `Response` of an answer: its status, headers and body as they are. */
export function toResponse(answer: MockAnswer): Response {
  return new Response(answer.body, { status: answer.status, headers: answer.headers })
}

/** A JSON answer with the given status and headers. */
export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): MockAnswer {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }
}

/** A streamed SSE answer. */
export function sseAnswer(
  stream: ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
): MockAnswer {
  return {
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers },
    body: stream,
  }
}
