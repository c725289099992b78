// The loopback server: the mock providers' handlers served over real HTTP (so any client, the keyed
// suite included, can run against the simulator), or a recording proxy to the real APIs. Each vendor
// lives under a path prefix; the log records usage per request and never a header or a body. Bodies are
// limited in size and nesting, long texts are tokenized off the event loop (tokenizer-pool.ts), a client
// that goes away or stops reading is recorded as such, and closing records every request in flight.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Fault, Usage } from '../../harness/types.ts'
import { type BuiltInVendor, simulationModel, type Vendor } from '../catalog.ts'
import { DEFAULT_BASE_URLS } from '../endpoints.ts'
import { CacheSimulators, type SimulatorOptions } from '../sim/index.ts'
import { sharedTokenCounter } from '../sim/tokens.ts'
import { bodyModel } from '../types.ts'
import type { ExchangeRecorder, ReplayAnswers } from '../wire/exchange.ts'
import { responseIdOf } from '../wire/output.ts'
import { type MockCall, MockContext } from './context.ts'
import { type HealthState, handleControl, isControlPath } from './control.ts'
import { HandlerTable, writtenAnswer } from './dispatch.ts'
import {
  answerFailureOf,
  answerField,
  answerText,
  apiOfPath,
  bodyInView,
  errorOf,
  normalize,
  parseJson,
  predict,
  replayStep,
  sessionOf,
  usageFromResponse,
} from './exchange.ts'
import type { FaultRule } from './faults.ts'
import { mockHandlers } from './handlers.ts'
import {
  deliver,
  errorResponse,
  fetchSameOrigin,
  HOP_BY_HOP,
  handedRequest,
  readBody,
  redirectOf,
  textReader,
  tooLarge,
  unreachable,
  watchDeparture,
  withoutEchoedKeys,
  writeError,
} from './loopback-http.ts'
import {
  acceptedPrefixes,
  apiRoot,
  LOOPBACK_PREFIXES,
  loopbackPrefix,
  routeOf,
  servedUnder,
  underRoot,
} from './loopback-routes.ts'
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
  /** Sim upstream: bytes of request fingerprints kept for the cache diagnostics (its share of `--memory-budget`). */
  fingerprintBytes?: number
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
          ...(options.fingerprintBytes !== undefined ? { fingerprintBytes: options.fingerprintBytes } : {}),
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
        ...(context !== undefined
          ? { fingerprints: { requests: context.fingerprints.size, bytes: context.fingerprints.bytes } }
          : {}),
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
    /** Why serve itself failed a live attempt (no answer, a redirect refused): the record's error. */
    let liveFailure: string | undefined
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
      const target = `${apiRoot(vendor, liveBaseURLs)}${rest}`
      try {
        upstream = await fetchSameOrigin(target, {
          method,
          headers: forwarded,
          ...(body !== undefined ? { body } : {}),
          signal: shutdown.signal,
        })
      } catch (error) {
        // Shutdown cut a request the provider had not yet answered: recorded as refused, as a later one is.
        // Any other failure before an answer (refused, no such host, TLS, a timeout) is a failed attempt
        // the client gets as a 502 and the log and the capture record with its reason.
        if (!shutdown.signal.aborted) liveFailure = unreachable(target, error)
        upstream =
          liveFailure === undefined
            ? errorResponse(vendor, 503, 'cachelab serve is shutting down')
            : errorResponse(vendor, 502, `cachelab serve: ${liveFailure}`)
      }
      // A redirect the proxy did not follow (to another origin, or one that drops the body) is never passed
      // on: the client would follow it with its key to wherever it points.
      const moved = redirectOf(upstream, target)
      if (moved !== undefined) {
        await upstream.body?.cancel()
        liveFailure = moved
        upstream = errorResponse(vendor, 502, `cachelab serve: ${moved}`)
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
        // handler tells its own failures (`call`) when serve captures; a live answer's in-band error, and
        // the mock's when nothing captures, is read off the answer.
        const inBand = ok && call === undefined ? answerFailureOf(text, contentType) : undefined
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
              ? { error: liveFailure ?? redactText(errorOf(answer.status, text), secrets) }
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
          ...(failure !== undefined
            ? { error: failure }
            : liveFailure !== undefined
              ? { error: liveFailure }
              : {}),
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

/** A session named by the client, as the log shows it: a name that holds a key is not shown. */
function sessionLabel(name: string, secrets: readonly string[]): string {
  return looksLikeSecret(name, secrets) ? REDACTED : name
}
