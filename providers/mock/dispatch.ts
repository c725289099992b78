// How the loopback server reaches a mock handler: the handler MSW's `getResponse` would pick for a
// request (the first in the list whose method and path match, by MSW's own `matchRequestUrl`), found once
// per method and path, then its endpoint called with the request. What this leaves out is MSW's work per
// request and per handler tried, which the served path does not use: a clone of the request, a URL and a
// cookie parse, and a path pattern compiled anew (notes/2026-12-05-serve-request-path.md).

import { getResponse, type HttpHandler, matchRequestUrl, type PathParams } from 'msw'
import { type Endpoint, endpointOf } from './handlers.ts'
import { type MockAnswer, type MockHttpRequest, toResponse } from './request.ts'

/** The handler a method and path reach, its endpoint and its path's parameters. */
interface Matched {
  handler: HttpHandler
  endpoint: Endpoint
  params: PathParams
}

/** Method-and-path keys remembered; past it the memo starts over (a client inventing paths costs time, never memory). */
const MATCHES_KEPT = 1_000

/** Paths longer than this are matched every time, not remembered: the memo stays small whatever a client sends. */
const LONGEST_KEPT_PATH = 512

/** The mock handlers of one list, answered as MSW's `getResponse` answers them, without its per-request work. */
export class HandlerTable {
  private readonly handlers: readonly HttpHandler[]
  /** Whether endpoints are called directly: asked for, and every handler has one (else `getResponse`). */
  readonly direct: boolean
  /** The handler each method and path (query and fragment cut) reaches; null when none does. */
  private readonly matches = new Map<string, Matched | null>()

  /** `direct: false` sends every request through MSW's `getResponse`, as the loopback did before. */
  constructor(handlers: readonly HttpHandler[], options: { direct?: boolean } = {}) {
    this.handlers = handlers
    this.direct = options.direct !== false && handlers.every((handler) => endpointOf(handler) !== undefined)
  }

  /**
   * The answer of the handler MSW would run for `request`, or undefined when none matches. Endpoints see
   * the request and the path's parameters, as `route` in handlers.ts passes them on from MSW. A list with
   * a handler of another kind goes through `getResponse`, which takes a fetch `Request` only.
   */
  async respond(request: MockHttpRequest): Promise<Response | MockAnswer | undefined> {
    if (!this.direct) {
      if (!(request instanceof Request)) throw new TypeError('MSW handlers take a fetch Request')
      return getResponse(this.handlers as HttpHandler[], request)
    }
    const matched = this.match(request.method, request.url)
    if (matched === null) return undefined
    matched.handler.isUsed = true
    try {
      return await matched.endpoint(request, matched.params)
    } catch (thrown) {
      // MSW answers with a Response a resolver throws, as with one it returns (the mock's never throw one).
      if (thrown instanceof Response) return thrown
      throw thrown
    }
  }

  /** The first handler matching a method and URL, as MSW tries them: in order, each path matched before its method. */
  private match(method: string, url: string): Matched | null {
    // A URL's path ends at its query or fragment, and MSW matches the path alone.
    const end = url.search(/[?#]/)
    const key = `${method} ${end < 0 ? url : url.slice(0, end)}`
    const known = this.matches.get(key)
    if (known !== undefined) return known
    const parsed = new URL(url)
    let found: Matched | null = null
    for (const handler of this.handlers) {
      // Every handler before the one that answers has its path matched, as MSW does (a malformed escape
      // in a parameter throws there as it does in MSW, and is not remembered).
      const { path, method: expected } = handler.info
      const { matches, params } = matchRequestUrl(parsed, path as string)
      const methodMatches =
        expected instanceof RegExp ? expected.test(method) : expected.toLowerCase() === method.toLowerCase()
      if (!matches || !methodMatches) continue
      found = { handler, endpoint: endpointOf(handler) as Endpoint, params: Object.freeze(params ?? {}) }
      break
    }
    if (key.length <= LONGEST_KEPT_PATH) {
      if (this.matches.size >= MATCHES_KEPT) this.matches.clear()
      this.matches.set(key, found)
    }
    return found
  }
}

/** An answer as the loopback server writes it: what a `Response` of it would give. */
export interface WrittenAnswer {
  status: number
  /** The headers as the `Response` would have them (names in lower case, sorted when iterated). */
  headers: Headers
  /** Text is one frame (none when empty), as a `Response`'s stream gives it; a stream gives its frames. */
  body: string | ReadableStream<Uint8Array> | null
}

/**
 * What the loopback server writes of an answer, a mock handler's as its `Response` (`toResponse`) would
 * give it without building one: the same status, the same headers (a text body without a content type is
 * `text/plain;charset=UTF-8`, as `Response` makes it) and the same bytes. A status `Response` refuses, or
 * refuses with a body, makes the `Response`, so it throws as it does through MSW.
 */
export function writtenAnswer(answer: Response | MockAnswer): WrittenAnswer {
  if (answer instanceof Response) return { status: answer.status, headers: answer.headers, body: answer.body }
  const { status, body } = answer
  if (!Number.isInteger(status) || status < 200 || status > 599 || NULL_BODY_STATUSES.has(status))
    return writtenAnswer(toResponse(answer))
  const headers = new Headers(answer.headers)
  if (typeof body === 'string' && !headers.has('content-type'))
    headers.set('content-type', 'text/plain;charset=UTF-8')
  return { status, headers, body }
}

/** Statuses a `Response` may not have with a body. */
const NULL_BODY_STATUSES = new Set([204, 205, 304])
