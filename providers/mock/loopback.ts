// The loopback server: the mock providers' handlers served over real HTTP (so any client, the keyed
// suite included, can run against the simulator), or a recording proxy to the real APIs. Each vendor
// lives under a path prefix; the log records usage per request and never a header or a body. Bodies are
// limited in size and nesting, long texts are tokenized off the event loop (tokenizer-pool.ts), a client
// that goes away or stops reading is recorded as such, and closing records every request in flight.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { HttpHandler } from 'msw'
import type { Fault, Usage } from '../../harness/types.ts'
import { type BuiltInVendor, isBuiltInVendor, simulationModel, type Vendor } from '../catalog.ts'
import { compatibleProvider, compatibleProviders, speaksMessages } from '../compatible.ts'
import { DEFAULT_BASE_URLS, defaultBaseURL } from '../endpoints.ts'
import { CacheSimulators, type SimulatorOptions } from '../sim/index.ts'
import { sharedTokenCounter } from '../sim/tokens.ts'
import { bodyModel } from '../types.ts'
import type { ExchangeRecorder, ReplayAnswers } from '../wire/exchange.ts'
import { responseIdOf } from '../wire/output.ts'
import { type MockCall, MockContext } from './context.ts'
import { type HealthState, handleControl, isControlPath } from './control.ts'
import { HandlerTable, writtenAnswer } from './dispatch.ts'
import {
  answerField,
  answerText,
  apiError,
  apiOfPath,
  bodyInView,
  errorOf,
  normalize,
  parseJson,
  predict,
  replayStep,
  sessionOf,
  streamFailureOf,
  usageFromResponse,
} from './exchange.ts'
import type { FaultRule } from './faults.ts'
import { mockHandlers } from './handlers.ts'
import type { ReplyBook } from './reply.ts'
import { type MockAnswer, type MockHttpRequest, nestingProblem, wireHeaders } from './request.ts'
import {
  DEFAULT_REPLY,
  EXCHANGE_HEADER,
  encodeScript,
  PLACE_HEADER,
  SCRIPT_HEADER,
  SESSION_HEADER,
  TIME_HEADER,
} from './script.ts'
import {
  bodyCredentials,
  credentialsOf,
  isForwardedHeader,
  looksLikeSecret,
  pathProblem,
  REDACTED,
  redactText,
} from './serve-safety.ts'
import { OFFLOAD_CHARACTERS, TokenizerPool } from './tokenizer-pool.ts'

/** `serve --max-body` when not given: 32 MiB, the largest request body Anthropic's Messages API takes. */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024

/** How long closing waits for the requests in flight before it cuts their connections. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000

/**
 * How long one frame may wait for the client to take it before the client counts as gone: a client that
 * stops reading but keeps its connection open would otherwise hold its request in flight forever.
 */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000

/** The base URL path of each vendor on the loopback server; SDK base URLs are `http://host:port` + these. */
export const LOOPBACK_PREFIXES: Readonly<Record<BuiltInVendor, string>> = {
  openai: '/openai/v1',
  anthropic: '/anthropic',
  deepseek: '/deepseek',
  bedrock: '/bedrock',
  gemini: '/gemini',
}

/** A path prefix the loopback server accepts, and the vendor whose API root it stands for. */
export interface LoopbackRoute {
  prefix: string
  vendor: Vendor
}

/**
 * Every accepted prefix, longest first. Each stands for the vendor's API root (where `/messages`,
 * `/chat/completions`, `/responses`, `/models` live), so clients that disagree on who appends the
 * version all work: Anthropic's SDK posts `${base}/v1/messages`, the AI SDK `${base}/messages`, and
 * DeepSeek's own API answers with and without `/v1`. OpenAI's API has no unversioned paths, so neither
 * does its prefix (notes/2026-11-30-serve-base-urls.md).
 */
export const LOOPBACK_ROUTES: readonly LoopbackRoute[] = [
  { prefix: '/anthropic/v1', vendor: 'anthropic' },
  { prefix: '/anthropic', vendor: 'anthropic' },
  { prefix: '/openai/v1', vendor: 'openai' },
  { prefix: '/deepseek/v1', vendor: 'deepseek' },
  { prefix: '/deepseek', vendor: 'deepseek' },
  { prefix: '/bedrock', vendor: 'bedrock' },
  { prefix: '/gemini', vendor: 'gemini' },
]

/**
 * A vendor's base URL path on the loopback server: a compatible provider's is `/<id>/v1`, as OpenAI's; an
 * Anthropic-compatible one's `/<id>`, as Anthropic's (its SDK appends `/v1`).
 */
export function loopbackPrefix(vendor: Vendor): string {
  if (isBuiltInVendor(vendor)) return LOOPBACK_PREFIXES[vendor]
  return speaksMessages(compatibleProvider(vendor)) ? `/${vendor}` : `/${vendor}/v1`
}

/** Whether a vendor's API is Anthropic's Messages (Anthropic, or an Anthropic-compatible provider). */
function anthropicShaped(vendor: Vendor): boolean {
  return vendor === 'anthropic' || (!isBuiltInVendor(vendor) && speaksMessages(compatibleProvider(vendor)))
}

/** The routes of the compatible providers they were made from (every request looks its route up). */
let routesMade: { providers: readonly unknown[]; routes: readonly LoopbackRoute[] } | undefined

/** Every accepted prefix: the built-in vendors', then each compatible provider's (the catalog's, user files included). */
export function loopbackRoutes(): readonly LoopbackRoute[] {
  const providers = compatibleProviders()
  if (routesMade?.providers !== providers) routesMade = { providers, routes: Object.freeze(makeRoutes()) }
  return routesMade.routes
}

function makeRoutes(): LoopbackRoute[] {
  return [
    ...LOOPBACK_ROUTES,
    // An Anthropic-compatible provider is reached with and without /v1, as Anthropic's prefix is.
    ...compatibleProviders().flatMap((provider) =>
      speaksMessages(provider)
        ? [
            { prefix: `/${provider.id}/v1`, vendor: provider.id },
            { prefix: `/${provider.id}`, vendor: provider.id },
          ]
        : [{ prefix: loopbackPrefix(provider.id), vendor: provider.id }],
    ),
  ]
}

/** One line of the server's log. */
export interface ServeLogRecord {
  /** Wall-clock time of the request, ISO 8601. */
  time: string
  vendor: Vendor
  path: string
  session: string
  /** The conversation within the session (with `--record`: its file under `sessions/`). */
  conversation?: string
  model: string | undefined
  /** The catalog model simulated and priced in its place, when the catalog lacks `model`. */
  simulatedAs?: string
  status: number
  latencyMs: number
  /** Normalized usage, when the response carried usage. */
  usage?: Usage
  /**
   * Why an answer sent with `status` did not complete: a fault (`stream cut after 2 frames`), the client
   * (`client went away after 5 frames`, `client stopped reading after 5 frames`) or shutdown (`cut by
   * shutdown after 5 frames`).
   */
  error?: string
}

export interface LoopbackOptions {
  host?: string
  /** 0 picks a free port. */
  port?: number
  upstream: 'sim' | 'live'
  /**
   * Simulator options of the sim upstream: `models` serves other cache rules than the catalog's (a
   * server that disagrees with the prediction, to prove a comparison with it can fail).
   */
  simulator?: SimulatorOptions
  /** Sim upstream: accept what the real APIs refuse (`serve --lenient`). */
  lenient?: boolean
  /** What the simulated model answers per session, turn and step (`serve --replies`). */
  replies?: ReplyBook
  /** Real API base URLs for `live` (defaults: the providers' own). */
  liveBaseURLs?: Readonly<Record<BuiltInVendor, string>>
  /** Called for every request served. */
  log?: (record: ServeLogRecord) => void
  /** Called once for each model the catalog lacks, with the catalog model that stands in for it. */
  onStandIn?: (model: string, standIn: string) => void
  /**
   * Capture every provider request into exchanges (serve --record): sessions told apart without a
   * header, each simulated with its session's previous request (live: a prediction beside the
   * provider's usage).
   */
  capture?: ExchangeRecorder
  /**
   * Answer from a recording (serve --replay; sim upstream with a capture only): each request must match
   * its session's recorded request at its position, and gets the recorded answer with simulated usage.
   */
  replay?: ReplayAnswers
  /** Told of every request the replay refuses, with why (serve prints it). */
  onReplayMismatch?: (message: string) => void
  /** A fault schedule for the sim upstream (`serve --faults FILE`). */
  faults?: readonly FaultRule[]
  /** Largest request body accepted, bytes (default `DEFAULT_MAX_BODY_BYTES`); larger ones get a 413. */
  maxBodyBytes?: number
  /** Tokenize long texts in worker threads before simulating (default true). */
  offloadTokens?: boolean
  /**
   * How long `close` waits for requests in flight (default `DEFAULT_SHUTDOWN_GRACE_MS`) before it cuts
   * them; it then waits as long again for the cut ones to be recorded.
   */
  shutdownGraceMs?: number
  /** How long a frame may wait for the client to read it before the request is recorded as abandoned (default `DEFAULT_DRAIN_TIMEOUT_MS`). */
  drainTimeoutMs?: number
  /** `serve --memory-budget` in bytes, reported by the health endpoint. */
  memoryBudgetBytes?: number
  /**
   * Call the matched handler's endpoint directly (default true) rather than through MSW's `getResponse`:
   * the same handlers and the same answers, without MSW's per-request work (dispatch.ts). Off, every
   * request goes through MSW as it did before.
   */
  directHandlers?: boolean
}

export interface LoopbackServer {
  /** `http://host:port`. */
  url: string
  /** The base URL an SDK client of each built-in vendor should use. */
  baseURLs: Record<BuiltInVendor, string>
  /** The base URL an SDK client of any vendor should use (a compatible provider's included). */
  baseURL(vendor: Vendor): string
  /** The simulated providers' state (sim upstream only). */
  context: MockContext | undefined
  /** What `GET /cachelab/health` answers now. */
  health(): HealthState
  /**
   * Stop taking connections, let the requests in flight finish (each is recorded and logged as usual),
   * then close; connections still busy after the grace period are cut, and their exchanges recorded and
   * logged as cut by shutdown. Resolves once closed and every exchange is recorded.
   */
  close(): Promise<void>
}

/** Start the server; resolves once it listens. */
export async function startLoopback(options: LoopbackOptions): Promise<LoopbackServer> {
  const host = options.host ?? '127.0.0.1'
  const started = Date.now()
  const context =
    options.upstream === 'sim'
      ? new MockContext({
          clock: () => (Date.now() - started) / 1000,
          ...(options.simulator !== undefined ? { simulator: options.simulator } : {}),
          ...(options.faults !== undefined ? { faults: options.faults } : {}),
          ...(options.lenient !== undefined ? { lenient: options.lenient } : {}),
          ...(options.replies !== undefined ? { replies: options.replies } : {}),
        })
      : undefined
  // The in-process handlers, on the real hosts: the server rewrites each path onto its vendor's root.
  const handlers = context === undefined ? [] : mockHandlers(context)
  const vendorHandlers = new Map<Vendor, HandlerTable>()
  const handlersOf = (vendor: Vendor): HandlerTable => {
    let table = vendorHandlers.get(vendor)
    if (table === undefined) {
      const list = underRoot(handlers, apiRoot(vendor, DEFAULT_BASE_URLS))
      table = new HandlerTable(list, { direct: options.directHandlers !== false })
      vendorHandlers.set(vendor, table)
    }
    return table
  }
  const liveBaseURLs = options.liveBaseURLs ?? DEFAULT_BASE_URLS
  const capture = options.capture
  // What each exchange's handler reported (sim), by the exchange id the server gave its request.
  const served = new Map<string, MockCall>()
  let exchanges = 0
  // The stand-in of each model the catalog lacks, told once per model.
  const standInOf = new Map<string, string | undefined>()
  const standIns = (vendor: Vendor, model: string): string | undefined => {
    const key = `${vendor}/${model}`
    if (standInOf.has(key)) return standInOf.get(key)
    const standIn = simulationModel(vendor, model).simulatedAs
    // Bounded: a client sending endless model names costs a notice again, never memory.
    if (standInOf.size >= 10_000) standInOf.clear()
    standInOf.set(key, standIn)
    if (standIn !== undefined) options.onStandIn?.(model, standIn)
    return standIn
  }
  if (context !== undefined && capture !== undefined) {
    context.previousFor = (_api, request) =>
      request.placement === undefined ? undefined : capture.previous(request.placement.conversation)
    context.observer = (call) => {
      if (call.exchange !== undefined) served.set(call.exchange, call)
    }
  }
  // Live captures: the simulator's prediction of each request, one account's caches like the provider's.
  const predictor =
    options.upstream === 'live' && capture !== undefined ? new CacheSimulators(options.simulator) : undefined
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const counter = options.simulator?.counter ?? sharedTokenCounter
  const tokenizer =
    options.offloadTokens === false || (context === undefined && predictor === undefined)
      ? undefined
      : new TokenizerPool(counter)
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS
  let servedCount = 0
  let inFlight = 0
  let draining = false
  /** Set once closing cuts the requests still in flight: their exchanges say shutdown cut them, not the client. */
  let cutting = false
  /** Aborted as closing cuts: a live upstream request still waiting for its answer gives up. */
  const shutdown = new AbortController()
  /** Told when the last request in flight has finished (close waits for them). */
  const idleWaiters = new Set<() => void>()
  /** True once no request is in flight, false if `ms` pass first. */
  const settled = (ms: number): Promise<boolean> =>
    inFlight === 0
      ? Promise.resolve(true)
      : new Promise<boolean>((resolve) => {
          const done = (idle: boolean) => {
            clearTimeout(timer)
            idleWaiters.delete(waiter)
            resolve(idle)
          }
          const waiter = () => done(true)
          const timer = setTimeout(() => done(false), ms)
          idleWaiters.add(waiter)
        })

  const server = createServer((incoming, outgoing) => {
    inFlight += 1
    // What the request holds while in flight (its long texts' tokens), let go once it is answered.
    const releases: (() => void)[] = []
    serve(incoming, outgoing, releases)
      .catch((error: unknown) => {
        if (!outgoing.headersSent)
          writeError(
            outgoing,
            routeOf(incoming.url ?? '/')?.vendor,
            500,
            redactText((error as Error).message),
          )
        else outgoing.destroy(error as Error)
      })
      .finally(() => {
        for (const release of releases) release()
        inFlight -= 1
        servedCount += 1
        if (inFlight === 0) for (const waiter of [...idleWaiters]) waiter()
      })
  })

  function health(): HealthState {
    const memory = process.memoryUsage()
    const simulators = context?.simulators ?? predictor
    const stats = simulators?.pruneStats
    return {
      status: draining ? 'draining' : 'ok',
      upstream: options.upstream,
      uptimeSeconds: Math.round((Date.now() - started) / 1000),
      requests: { served: servedCount, inFlight },
      memory: {
        rssBytes: memory.rss,
        heapUsedBytes: memory.heapUsed,
        ...(options.memoryBudgetBytes !== undefined ? { budgetBytes: options.memoryBudgetBytes } : {}),
        ...(stats !== undefined
          ? {
              simulator: {
                bytes: stats.bytes,
                prunes: stats.prunes,
                removed: stats.removed,
                evicted: stats.evicted,
                overBudget: stats.overBudget,
              },
            }
          : {}),
        tokenMemoBytes: counter.bytes,
        ...(capture !== undefined ? { capture: capture.memory } : {}),
      },
    }
  }

  async function serve(
    incoming: IncomingMessage,
    outgoing: ServerResponse,
    releases: (() => void)[],
  ): Promise<void> {
    const begin = performance.now()
    const path = incoming.url ?? '/'
    const method = incoming.method ?? 'GET'
    // Only normalised paths go anywhere: a `..` would climb out of the vendor's root on the live proxy.
    const unsafe = pathProblem(path)
    if (unsafe !== undefined) {
      writeError(outgoing, routeOf(path)?.vendor, 400, `${unsafe}: ${redactText(path)}`)
      return
    }
    if (isControlPath(path)) {
      const read = method === 'GET' || method === 'HEAD' ? undefined : await readBody(incoming, maxBodyBytes)
      if (read === 'too-large') {
        writeError(outgoing, undefined, 413, tooLarge(maxBodyBytes), { connection: 'close' })
        return
      }
      const answer = handleControl(method, path, read?.toString('utf8'), context, health)
      outgoing.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
      outgoing.end(JSON.stringify(answer.body))
      return
    }
    const target = routeOf(path)
    if (target === undefined) {
      writeError(
        outgoing,
        undefined,
        404,
        `no provider API at ${method} ${redactText(path)}; ${acceptedPrefixes()}`,
      )
      return
    }
    const { vendor, rest } = target
    if (draining) {
      // A request that arrives on a kept-alive connection after shutdown began is refused, not dropped.
      writeError(outgoing, vendor, 503, 'cachelab serve is shutting down', { connection: 'close' })
      return
    }
    // The client's connection closing before the answer is done: a frame's write waiting then (which
    // may never call back) stops waiting, and the exchange is recorded as abandoned.
    const departure = watchDeparture(outgoing)
    const read = method === 'GET' || method === 'HEAD' ? undefined : await readBody(incoming, maxBodyBytes)
    if (read === 'too-large') {
      writeError(outgoing, vendor, 413, tooLarge(maxBodyBytes), { connection: 'close' })
      return
    }
    const body = read
    const headers = new Headers()
    for (const [name, value] of Object.entries(incoming.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name)) continue
      headers.set(name, Array.isArray(value) ? value.join(', ') : value)
    }
    // A large body's main-thread work (parsing, digesting, simulating, recording: tens to hundreds of
    // milliseconds each at megabytes) is cut into turns of the event loop, so a small request waits for
    // one of them rather than all. Small bodies run straight through, as before.
    const large = body !== undefined && body.length >= OFFLOAD_CHARACTERS
    const turn = async () => {
      if (large) await nextTurn()
    }
    // A session's history comes again in every request: the capture parses a body so that its items
    // equal to earlier ones are those objects (the ones whose bytes repeat an earlier body's are not even
    // parsed again), and the simulators and the digests skip what they already read (the numbers are the
    // same). The reuse reads no item nested too deeply, and goes first so that the nesting check below
    // measures only the items it has not seen before.
    const api = apiOfPath(vendor, path)
    const json =
      body === undefined
        ? undefined
        : capture !== undefined && api !== undefined
          ? capture.parseBody(body)
          : parseJson(body)
    await turn()
    // Every reader of a body below (session identity, digests, validation, simulators) walks it
    // recursively: a body nested deeper than any real request is refused before any of them sees it.
    const nesting = json === undefined ? undefined : nestingProblem(json)
    if (nesting !== undefined) {
      writeError(outgoing, vendor, 400, nesting)
      return
    }
    // Long texts are tokenized in worker threads meanwhile, so this request waits and no other does;
    // their tokens stay held until the request ends, so simulating it never tokenizes them here. The
    // placement below runs while the workers tokenize: the request waits for them only before it is
    // simulated.
    const prepared = json !== undefined && tokenizer !== undefined ? tokenizer.prepare(json) : undefined
    if (prepared !== undefined) releases.push(() => void prepared.then((release) => release()))
    await turn()
    const parsed = json === undefined || api === undefined ? json : bodyInView(api, path, json)
    // The keys the request carries (key headers, query values, credential-named body fields): redacted
    // verbatim from all that is kept of it, its session's name included.
    const secrets = [...credentialsOf(headers, path), ...bodyCredentials(json)]
    // Only the server places a request: a client's own placement header is dropped.
    headers.delete(PLACE_HEADER)
    const placement =
      capture !== undefined && api !== undefined && parsed !== undefined
        ? capture.place(api, headers.get(SESSION_HEADER) ?? undefined, parsed, wireHeaders(headers), secrets)
        : undefined
    await prepared
    await turn()
    exchanges += 1
    const exchange = String(exchanges)
    if (placement !== undefined && context !== undefined) {
      headers.set(SESSION_HEADER, placement.session)
      // The handler takes the body and its place by the exchange id; the placement header says the
      // server placed it (a client's own was dropped above).
      headers.set(PLACE_HEADER, exchange)
      headers.set(EXCHANGE_HEADER, exchange)
    }
    let at = context?.now() ?? (Date.now() - started) / 1000
    let replayed: Response | undefined
    // A recorded answer that failed after its 200 fails so again (handed to the handler with the body).
    let replayedFault: Fault | undefined
    if (
      options.replay !== undefined &&
      context !== undefined &&
      placement !== undefined &&
      api !== undefined &&
      parsed !== undefined
    ) {
      const step = replayStep(options.replay, context, api, placement.conversation, parsed)
      if (step.kind === 'mismatch') {
        options.onReplayMismatch?.(step.message)
        replayed = errorResponse(vendor, 400, `cachelab replay: ${step.message}`)
      } else if (step.kind === 'failure') {
        const type = step.exchange.error?.split(' ')[2]
        replayed = errorResponse(
          vendor,
          step.exchange.status,
          `replayed failure (${step.exchange.error ?? step.exchange.status})`,
          type,
        )
      } else if (step.kind === 'answer') {
        headers.set(SCRIPT_HEADER, encodeScript(step.answer ?? DEFAULT_REPLY))
        headers.set(TIME_HEADER, String(step.exchange.at))
        at = step.exchange.at
        replayedFault = step.fault
      }
    }
    let response: Response | MockAnswer
    if (replayed !== undefined) {
      response = replayed
    } else if (context !== undefined) {
      // The handler of a placed request reads the body parsed above, not the text again: the request
      // then carries no copy of the text (MSW would clone it for every handler it runs).
      const handing = placement !== undefined && json !== undefined
      const url = `${apiRoot(vendor, DEFAULT_BASE_URLS)}${rest}`
      // A POST whose body is handed over reaches its endpoint without a fetch `Request` at all (building
      // one validates and copies every header again); anything else is built as before, and MSW's path
      // (`directHandlers: false`) takes a `Request` only.
      const request: MockHttpRequest =
        handing && method === 'POST' && handlersOf(vendor).direct && body !== undefined
          ? handedRequest(url, headers, body)
          : new Request(url, { method, headers, ...(body !== undefined && !handing ? { body } : {}) })
      if (handing)
        context.handOver(exchange, {
          body: json,
          placement,
          ...(replayedFault !== undefined ? { fault: replayedFault } : {}),
        })
      try {
        response =
          (await handlersOf(vendor).respond(request)) ??
          errorResponse(
            vendor,
            404,
            `no ${vendor} API at ${method} ${redactText(path)}; ${servedUnder(vendor, handlers)}`,
          )
      } finally {
        context.takeBody(exchange)
      }
    } else {
      // The provider gets an allow-list of headers: no cookies, no x-forwarded-*, no cachelab headers.
      const forwarded = new Headers([...headers].filter(([name]) => isForwardedHeader(name)))
      let upstream: Response
      try {
        upstream = await fetchSameOrigin(`${apiRoot(vendor, liveBaseURLs)}${rest}`, {
          method,
          headers: forwarded,
          ...(body !== undefined ? { body } : {}),
          signal: shutdown.signal,
        })
      } catch (error) {
        if (!shutdown.signal.aborted) throw error
        // Shutdown cut a request the provider had not yet answered: recorded as refused, as a later one is.
        upstream = errorResponse(vendor, 503, 'cachelab serve is shutting down')
      }
      // A provider's refusal may echo the caller's key (OpenAI's 401 quotes it): it is passed on without.
      response = !upstream.ok && secrets.length > 0 ? await withoutEchoedKeys(upstream, secrets) : upstream
    }
    const answer = writtenAnswer(response)
    const ok = answer.status >= 200 && answer.status < 300
    const chunks: Uint8Array[] = []
    // A stream that breaks off (a cut fault, or the upstream's connection) is passed on as a dropped
    // connection, and recorded as the failed attempt it is.
    let cut = false
    // Why the client did not get the whole answer, when it did not: it went away, stopped reading, or
    // shutdown cut it. Recorded as a failed attempt, with the frames it took.
    let abandoned: string | undefined
    let frames = 0
    const leaving = (how: 'closed' | 'stalled') =>
      how === 'stalled'
        ? `client stopped reading after ${frames} frames`
        : cutting
          ? `cut by shutdown after ${frames} frames`
          : `client went away after ${frames} frames`
    if (departure.gone) abandoned = leaving('closed')
    else
      outgoing.writeHead(
        answer.status,
        Object.fromEntries([...answer.headers].filter(([name]) => !HOP_BY_HOP.has(name))),
      )
    if (answer.body !== null) {
      const reader = typeof answer.body === 'string' ? textReader(answer.body) : answer.body.getReader()
      try {
        while (abandoned === undefined) {
          const { done, value } = await reader.read()
          if (done) break
          chunks.push(value)
          // Each frame is on the wire before the next is read, so a stream that breaks off has
          // delivered its headers and every frame before the break, as a real dropped connection has.
          const sent = await deliver(outgoing, value, departure, drainTimeoutMs)
          if (sent === 'sent') frames += 1
          else abandoned = leaving(sent)
        }
      } catch (error) {
        // Shutdown aborting a live upstream's answer is shutdown's cut, not the upstream's.
        if (shutdown.signal.aborted) abandoned = leaving('closed')
        else {
          outgoing.destroy(error as Error)
          cut = true
        }
      }
      if (abandoned !== undefined) {
        // The upstream's answer is no longer wanted: let its connection go, and this one.
        reader.cancel().catch(() => {})
        outgoing.destroy()
      }
    }
    // The exchange is recorded and logged before the response ends, so a client that has its answer
    // (and a test that reads the capture next) always finds the request there. Only the API calls are
    // logged: a model listing has no session, model or usage.
    try {
      await turn()
      if (body !== undefined) {
        const { text, contentType } = answerText(
          Buffer.concat(chunks),
          answer.headers.get('content-type') ?? '',
        )
        const call = served.get(exchange)
        served.delete(exchange)
        // A failed answer gave the client no usage, whatever frames it got before it failed. The mock's
        // handler tells its own failures (`call`); a live stream's in-band error is read off its frames.
        const inBand = ok && call === undefined ? streamFailureOf(text, contentType) : undefined
        const failure =
          abandoned ??
          call?.failure ??
          (cut ? 'stream cut' : inBand === undefined ? undefined : redactText(inBand, secrets))
        const raw = failure === undefined ? usageFromResponse(text, contentType) : undefined
        if (capture !== undefined && placement !== undefined && api !== undefined && parsed !== undefined) {
          const simulation =
            call?.simulation ??
            (predictor === undefined
              ? undefined
              : predict(predictor, api, parsed, at, capture.previous(placement.conversation)))
          const responseId = api === 'openai-responses' && ok ? responseIdOf(text, contentType) : undefined
          if (responseId !== undefined) capture.noteResponse(responseId, placement.conversation)
          capture.add({
            placement,
            api,
            body: parsed,
            at: call?.at ?? at,
            status: answer.status,
            latencyMs: Math.round(performance.now() - begin),
            stream: contentType.includes('text/event-stream'),
            ...(raw !== undefined ? { usage: normalize(vendor, raw) } : {}),
            ...(simulation !== undefined ? { simulation } : {}),
            predicted: predictor !== undefined,
            ...(answer.status >= 400
              ? { error: redactText(errorOf(answer.status, text), secrets) }
              : failure !== undefined
                ? { error: failure }
                : {}),
            response: text,
            secrets,
            // A failed attempt's frames are no answer to serve again.
            ...(predictor !== undefined && ok && failure === undefined
              ? answerField(api, text, contentType)
              : {}),
          })
        }
        // Bedrock's model id travels in the path (bodyInView put it in the body).
        const model = parsed === undefined ? undefined : bodyModel(parsed)
        const simulatedAs = model === undefined ? undefined : standIns(vendor, model)
        options.log?.({
          time: new Date().toISOString(),
          vendor,
          // A key can ride in the query string (`?key=`, `api-key=`…): the log never holds one.
          path: redactText(path),
          session: placement?.session ?? sessionLabel(sessionOf(headers, parsed), secrets),
          ...(placement !== undefined ? { conversation: placement.conversation } : {}),
          model,
          ...(simulatedAs !== undefined ? { simulatedAs } : {}),
          status: answer.status,
          latencyMs: Math.round(performance.now() - begin),
          ...(raw !== undefined ? { usage: normalize(vendor, raw) } : {}),
          ...(failure !== undefined ? { error: failure } : {}),
        })
      }
    } finally {
      if (!cut && abandoned === undefined) outgoing.end()
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, host, () => resolve())
  })
  const address = server.address() as AddressInfo
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`
  return {
    url,
    baseURLs: {
      openai: `${url}${LOOPBACK_PREFIXES.openai}`,
      anthropic: `${url}${LOOPBACK_PREFIXES.anthropic}`,
      deepseek: `${url}${LOOPBACK_PREFIXES.deepseek}`,
      bedrock: `${url}${LOOPBACK_PREFIXES.bedrock}`,
      gemini: `${url}${LOOPBACK_PREFIXES.gemini}`,
    },
    baseURL: (vendor) => `${url}${loopbackPrefix(vendor)}`,
    context,
    health,
    close: async () => {
      draining = true
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      const grace = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS
      if (!(await settled(grace))) {
        // What is still in flight is cut: each handler sees its connection close, records its exchange
        // as cut by shutdown, and ends; closing waits for those records (bounded: a handler stuck past
        // a second grace period is left, rather than the process never exiting).
        cutting = true
        shutdown.abort()
        server.closeAllConnections()
        await settled(grace)
      }
      server.closeAllConnections()
      await closed
      await tokenizer?.close()
    },
  }
}

/** Whether the client's connection closed before its answer was done, and who to tell when it does. */
interface Departure {
  gone: boolean
  /** Called once, when the connection closes (set by whoever waits on it). */
  onGone: (() => void) | undefined
}

/** Watch a response for its connection closing before the response finished. */
function watchDeparture(outgoing: ServerResponse): Departure {
  const departure: Departure = { gone: false, onGone: undefined }
  outgoing.once('close', () => {
    if (outgoing.writableFinished) return
    departure.gone = true
    departure.onGone?.()
  })
  return departure
}

/**
 * Write one frame and wait until the client's connection took it: `sent`, or `closed` when the connection
 * closed or failed first, or `stalled` when the client took nothing for `timeoutMs` (it stopped reading).
 */
function deliver(
  outgoing: ServerResponse,
  frame: Uint8Array,
  departure: Departure,
  timeoutMs: number,
): Promise<'sent' | 'closed' | 'stalled'> {
  if (departure.gone) return Promise.resolve('closed')
  return new Promise((resolve) => {
    let settled = false
    const settle = (outcome: 'sent' | 'closed' | 'stalled') => {
      // A late callback of a write already given up on changes nothing.
      if (settled) return
      settled = true
      clearTimeout(timer)
      departure.onGone = undefined
      resolve(outcome)
    }
    const timer = setTimeout(() => settle('stalled'), timeoutMs)
    departure.onGone = () => settle('closed')
    outgoing.write(frame, (error) => settle(error ? 'closed' : 'sent'))
  })
}

/**
 * A POST as its endpoint reads it when the server hands its parsed body over: the URL as a fetch `Request`
 * would serialize it (dispatch matches on it), the server's headers, and the body text should anything
 * ask for it again, read as a `Request` reads it.
 */
function handedRequest(url: string, headers: Headers, body: Buffer): MockHttpRequest {
  return { method: 'POST', url: new URL(url).href, headers, json: () => new Response(body).json() }
}

/** A text body's frames as a reader: one frame, none when the text is empty (as a `Response`'s stream). */
function textReader(text: string): Pick<ReadableStreamDefaultReader<Uint8Array>, 'read' | 'cancel'> {
  let frame: Uint8Array | undefined = text === '' ? undefined : Buffer.from(text, 'utf8')
  return {
    read: async () => {
      const value = frame
      frame = undefined
      return value === undefined ? { done: true, value: undefined } : { done: false, value }
    },
    cancel: async () => {
      frame = undefined
    },
  }
}

/** A session named by the client, as the log shows it: a name that holds a key is not shown. */
function sessionLabel(name: string, secrets: readonly string[]): string {
  return looksLikeSecret(name, secrets) ? REDACTED : name
}

/** A refusal with every one of `secrets` in its body redacted; its status and headers as they were. */
async function withoutEchoedKeys(response: Response, secrets: readonly string[]): Promise<Response> {
  const text = await response.text()
  return new Response(redactText(text, secrets), { status: response.status, headers: response.headers })
}

const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'content-encoding',
])

/** The vendor of a request path and the rest of the path (query included) below its prefix. */
export function routeOf(path: string): { vendor: Vendor; rest: string } | undefined {
  for (const { prefix, vendor } of loopbackRoutes()) {
    if (path.startsWith(`${prefix}/`)) return { vendor, rest: path.slice(prefix.length) }
  }
  return undefined
}

/**
 * The handlers that can answer a URL under `root`: MSW parses a request against every handler it tries
 * until one matches, so a request is offered only those whose literal path starts at its root (a handler
 * whose path is not a plain string is always offered).
 */
function underRoot(handlers: readonly HttpHandler[], root: string): HttpHandler[] {
  return handlers.filter(({ info }) => typeof info.path !== 'string' || info.path.startsWith(`${root}/`))
}

/** The vendor's API root under a base URL in the SDKs' convention (Anthropic's omits its /v1). */
function apiRoot(vendor: Vendor, baseURLs: Readonly<Record<BuiltInVendor, string>>): string {
  const base = (isBuiltInVendor(vendor) ? baseURLs[vendor] : defaultBaseURL(vendor)).replace(/\/$/, '')
  return anthropicShaped(vendor) ? `${base}/v1` : base
}

const acceptedPrefixes = () =>
  `cachelab serve answers under ${loopbackRoutes()
    .map(({ prefix }) => prefix)
    .join(', ')}`

/** What the simulator serves for a vendor, read off its handlers, for a 404 that says what would work. */
function servedUnder(vendor: Vendor, handlers: readonly HttpHandler[]): string {
  const root = apiRoot(vendor, DEFAULT_BASE_URLS)
  // DeepSeek's handlers repeat under /v1, an alias of its root: list each endpoint once.
  const endpoints = handlers.flatMap(({ info }) => {
    const rest =
      typeof info.path === 'string' && info.path.startsWith(`${root}/`) ? info.path.slice(root.length) : ''
    return rest === '' || rest.startsWith('/v1/')
      ? []
      : [`${String(info.method)} ${rest.replace(/:(\w+)/g, '{$1}')}`]
  })
  const prefixes = loopbackRoutes()
    .filter((route) => route.vendor === vendor)
    .map(({ prefix }) => prefix)
  return `under ${prefixes.join(' and ')} the simulator serves ${endpoints.join(', ')}`
}

/**
 * The request body, or `too-large` past `limit` bytes (by its declared length, or as it arrives). A
 * refused body is read to its end and dropped, not kept: the client then reads its 413 rather than a
 * connection reset in the middle of its upload.
 */
function readBody(incoming: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const declared = Number(incoming.headers['content-length'])
  let over = Number.isFinite(declared) && declared > limit
  const parts: Buffer[] = []
  let size = 0
  return new Promise((resolve, reject) => {
    incoming.on('data', (part: Buffer) => {
      if (over) return
      size += part.length
      if (size <= limit) parts.push(part)
      else {
        over = true
        parts.length = 0
      }
    })
    incoming.once('end', () => resolve(over ? 'too-large' : Buffer.concat(parts)))
    incoming.once('error', reject)
  })
}

/** What a 413 for a body past the limit says (in the vendor's envelope: Anthropic's `request_too_large`). */
function tooLarge(limit: number): string {
  return `Request exceeds the maximum allowed number of bytes (${limit}; cachelab serve --max-body).`
}

/**
 * An error the server answers itself, in the envelope of the vendor whose prefix the path is under. A path
 * under no vendor's prefix (or a control path) has no vendor; it gets Anthropic's envelope, which names the
 * error's type and message as every other client reads them.
 */
function writeError(
  outgoing: ServerResponse,
  vendor: Vendor | undefined,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const error = apiError(vendor ?? 'anthropic', status, message)
  writeJson(outgoing, status, error.body, { ...error.headers, ...headers })
}

/** The same error as a `Response`, for answers that go through the exchange's recording. */
function errorResponse(vendor: Vendor, status: number, message: string, type?: string): Response {
  const error = apiError(vendor, status, message, type)
  return new Response(JSON.stringify(error.body), {
    status,
    headers: { 'content-type': 'application/json', ...error.headers },
  })
}

function writeJson(
  outgoing: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  outgoing.writeHead(status, { 'content-type': 'application/json', ...headers })
  outgoing.end(JSON.stringify(body))
}

/** Redirects the live proxy follows itself, within the upstream's origin. */
const MAX_REDIRECTS = 5

/**
 * A provider request that follows a redirect only within the upstream's origin, and only one that keeps
 * the method and body (307, 308): the caller's key never travels to another host. Any other redirect is
 * passed back to the client as it came.
 */
export async function fetchSameOrigin(url: string, init: RequestInit): Promise<Response> {
  let target = new URL(url)
  for (let hop = 0; ; hop += 1) {
    const response = await fetch(target, { ...init, redirect: 'manual' })
    const location = response.headers.get('location')
    if ((response.status !== 307 && response.status !== 308) || location === null || hop === MAX_REDIRECTS)
      return response
    const next = new URL(location, target)
    if (next.origin !== target.origin) return response
    await response.body?.cancel()
    target = next
  }
}
